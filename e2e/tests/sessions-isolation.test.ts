// Several real agent sessions (`torii mcp` processes, official MCP TS SDK over stdio)
// against one real browser at once: isolation (tab_not_owned, listing), ordering, fairness,
// cancellation, and the bad inputs (forged label, a tab closed while a call waits, a flooding
// client, a client leaving mid-call, the extension going away with calls in flight).
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Browser, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

interface StatusSession {
  id: string;
  label: string;
  kind: string;
  tabs: number[];
  queued: number;
  inFlight: number;
  recent: { tool: string; outcome: string; durationMs: number; waitMs: number }[];
  ended?: string;
}

describeBrowser("sessions", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let site: Site;
  const clients: Mcp[] = [];

  const connect = async (label: string): Promise<Mcp> => {
    const m = await Mcp.connect(torii, label);
    clients.push(m);
    await m.waitForCatalogue();
    return m;
  };
  const open = async (m: Mcp, id: string): Promise<number> => {
    const r = await m.ok("navigate", { url: site.url(`session.html?id=${id}`) });
    return r.data.tabId as number;
  };
  const tabIds = async (m: Mcp): Promise<number[]> =>
    ((await m.ok("tabs")).data.tabs as { tabId: number }[]).map((t) => t.tabId).sort((a, b) => a - b);
  const code = (r: ToolResult) => (r.isError ? r.error?.code : "ok");
  const status = async (m: Mcp): Promise<StatusSession> => (await m.ok("status")).data.session as StatusSession;

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    browser.context.on("page", (p) => p.on("dialog", () => {}));
    const { popup } = await pairBrowser(browser, torii);
    await allowEverything(popup);
    site = await Site.start();
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await site?.close();
  });

  test("isolation: each session sees and acts only on its own tabs; a forged label gains nothing", async () => {
    const a = await connect("alpha");
    const forged = await connect("alpha"); // same label, another process: another session
    const tabA = await open(a, "A");
    expect(await tabIds(a)).toEqual([tabA]);
    expect(await tabIds(forged), "another session's tab is not even listed").toEqual([]);

    const onA = await forged.call("read_text", { tabId: tabA });
    const nowhere = await forged.call("read_text", { tabId: 987654 });
    expect(code(onA)).toBe("tab_not_owned");
    expect(code(nowhere)).toBe("tab_not_owned");
    // Indistinguishable: the same words, only the number differs.
    expect(onA.error?.message.replace(String(tabA), "N")).toBe(nowhere.error?.message.replace("987654", "N"));
    expect(code(await forged.call("close_tab", { tabId: tabA }))).toBe("tab_not_owned");
    expect(code(await forged.call("snapshot")), "no tab of its own: never the person's active tab").toBe("no_tab");

    // The owner still works on its tab, and its default tab is its own.
    expect((await a.ok("read_text")).text).toContain("Owner A");
    const sa = await status(a);
    const sf = await status(forged);
    expect(sa.id).not.toBe(sf.id);
    expect(sa.label).toBe(sf.label);
    expect(sa.tabs).toEqual([tabA]);

    // A popup the session's own click opens belongs to it (SECURITY I-45; the person's are in
    // ownership-adoption.test.ts).
    await a.ok("navigate", { tabId: tabA, url: site.url("opener.html?id=A") });
    await a.ok("click", { tabId: tabA, selector: "#open" });
    const listed = await pollUntil("the popup to join alpha's tabs", async () => {
      const t = await tabIds(a);
      return t.length === 2 ? t : undefined;
    });
    const popupTab = listed.find((t) => t !== tabA)!;
    expect(code(await forged.call("read_text", { tabId: popupTab }))).toBe("tab_not_owned");
    // Listed as soon as it opens, the popup may still be on its way from about:blank: a read in
    // between is refused as navigation_failed, so the owner reads once it has landed.
    await pollUntil("the owner to read its popup", async () => {
      const r = await a.call("read_text", { tabId: popupTab });
      if (r.isError) expect(code(r)).toBe("navigation_failed");
      return !r.isError && r.text.includes("Owner click") ? r : undefined;
    });
  });

  test("ordering, fairness and routing: three sessions at once, every result from the caller's own tab", async () => {
    const ss: Mcp[] = await Promise.all(["s1", "s2", "s3"].map((l) => connect(l)));
    const tabs: number[] = await Promise.all(ss.map((m, i) => open(m, `P${i}`)));
    const N = 12;
    const runs = ss.map(async (m, i) => {
      const pending: Promise<ToolResult>[] = [];
      for (let k = 0; k < N; k++) {
        // Sent back to back without awaiting the answers: `torii mcp` and the daemon keep the
        // order they were written in, and the session's calls run one at a time, in that order.
        pending.push(k % 3 === 0 ? m.call("fill", { tabId: tabs[i]!, selector: "#field", value: `v${k}` }) : m.call("read_text", { tabId: tabs[i]! }));
      }
      return Promise.all(pending);
    });
    const results = await Promise.all(runs);
    for (let i = 0; i < ss.length; i++) {
      for (const r of results[i]!) {
        expect(code(r)).toBe("ok");
        if (!r.text.startsWith("filled")) expect(r.text, "a result from another session's tab").toContain(`Owner P${i}`);
      }
      const st = await status(ss[i]!);
      const mine = st.recent.filter((x) => x.tool === "fill" || x.tool === "read_text").slice(-N);
      expect(mine.map((x) => x.tool), "the session's calls ran in the order sent").toEqual(
        Array.from({ length: N }, (_, k) => (k % 3 === 0 ? "fill" : "read_text")),
      );
    }
    // Fairness: equal work, fired at once by every session, finishes in comparable time (the
    // recorded waits here are mostly each session queueing behind its own earlier calls).
    const spans = results.map((rs) => rs.reduce((m, r) => Math.max(m, r.ms), 0));
    console.log(`e2e sessions: time to each session's last answer ${spans.map((x) => Math.round(x)).join(", ")} ms`);
    expect(Math.max(...spans), "no session is served much later than another").toBeLessThanOrEqual(2 * Math.min(...spans) + 200);
  });

  test("a flooding client gets busy from a bounded queue; others are unaffected", async () => {
    const flood = await connect("flood");
    const calm = await connect("calm");
    const tf = await open(flood, "F");
    const tc = await open(calm, "C");
    const floods = Array.from({ length: 60 }, () => flood.call("read_text", { tabId: tf }));
    const t0 = performance.now();
    const mine = await calm.call("read_text", { tabId: tc });
    const calmMs = performance.now() - t0;
    const out = await Promise.all(floods);
    expect(code(mine)).toBe("ok");
    expect(mine.text).toContain("Owner C");
    const busy = out.filter((r) => code(r) === "busy").length;
    expect(busy, "beyond the session's queue bound, calls are refused at once").toBeGreaterThan(0);
    expect(out.every((r) => code(r) === "ok" || code(r) === "busy")).toBe(true);
    console.log(`e2e sessions: flood ${busy}/60 busy; calm call ${Math.round(calmMs)} ms`);
    expect(calmMs).toBeLessThan(5_000);
  });

  test("cancellation: an MCP cancel stops queued and in-flight calls; a tab closed while a call waits", async () => {
    const m = await connect("cancel");
    const tab = await open(m, "X");
    // In flight: wait_for something that never appears; queued behind it: read_text. The queued
    // one is cancelled first (cancelling the other first would start it at once), then the other.
    const slowCtl = new AbortController();
    const queuedCtl = new AbortController();
    const slow = m.client.callTool({ name: "wait_for", arguments: { tabId: tab, selector: "#never", timeoutMs: 30_000 } }, undefined, { signal: slowCtl.signal, timeout: 60_000 });
    const queued = m.client.callTool({ name: "read_text", arguments: { tabId: tab } }, undefined, { signal: queuedCtl.signal, timeout: 60_000 });
    const session = async () => (await torii.cliJSON<{ sessions: StatusSession[] }>(["status", "--json"])).sessions.find((x) => x.label === "cancel" && !x.ended);
    await pollUntil("the call to be in flight with one queued", async () => {
      const s = await session();
      return s && s.inFlight === 1 && s.queued === 1 ? s : undefined;
    });
    queuedCtl.abort();
    await expect(queued).rejects.toThrow();
    await pollUntil("the queued call gone, the other still in flight", async () => {
      const s = await session();
      return s && s.inFlight === 1 && s.queued === 0 ? s : undefined;
    });
    slowCtl.abort();
    await expect(slow).rejects.toThrow();
    const st = await pollUntil("both cancelled", async () => {
      const s = await status(m);
      return s.recent.filter((x) => x.outcome === "cancelled").length >= 2 ? s : undefined;
    });
    expect(st.inFlight).toBe(0);

    // A tab closed while a call waits for it: the waiting call says no_tab, not another tab's answer.
    const hold = m.call("wait_for", { tabId: tab, selector: "#never", timeoutMs: 1_500 });
    const waiting = m.call("read_text", { tabId: tab });
    await browser.context.pages().find((p) => p.url().includes("id=X"))!.close();
    await hold;
    expect(code(await waiting)).toBe("no_tab");
  });

  test("a client leaving mid-call ends its session: its call is cancelled in the extension, its tabs stay closable", async () => {
    const m = await connect("leaver");
    const tab = await open(m, "L");
    void m.call("wait_for", { tabId: tab, selector: "#never", timeoutMs: 30_000 }).catch(() => undefined);
    await pollUntil("in flight", async () => {
      const s = (await torii.cliJSON<{ sessions: StatusSession[] }>(["status", "--json"])).sessions.find((x) => x.label === "leaver");
      return s?.inFlight === 1 ? s : undefined;
    });
    await m.close();
    const s = await pollUntil("the session to end", async () => {
      const x = (await torii.cliJSON<{ sessions: StatusSession[] }>(["status", "--json"])).sessions.find((y) => y.label === "leaver");
      return x?.ended && x.inFlight === 0 ? x : undefined;
    });
    expect(s.tabs).toEqual([tab]);
    const text = (await torii.cli(["status"])).stdout;
    expect(text).toContain('"leaver"');
    expect(text, "status shows outcomes, never arguments").not.toContain("#never");
  });

  test("the extension disconnecting with calls in flight fails every caller promptly", async () => {
    const ms: Mcp[] = await Promise.all(["d1", "d2"].map((l) => connect(l)));
    const tabs: number[] = await Promise.all(ms.map((m, i) => open(m, `D${i}`)));
    const calls = ms.flatMap((m, i) => [
      m.call("wait_for", { tabId: tabs[i]!, selector: "#never", timeoutMs: 30_000 }),
      m.call("read_text", { tabId: tabs[i]! }),
    ]);
    await pollUntil("calls in flight", async () => {
      const st = await torii.cliJSON<{ broker: { inFlight: number } }>(["status", "--json"]);
      return st.broker.inFlight >= 2 ? st : undefined;
    });
    const t0 = performance.now();
    await browser.stopServiceWorker();
    const out = await Promise.all(calls);
    const ms2 = performance.now() - t0;
    console.log(`e2e sessions: after the worker stopped: ${out.map((r) => `${code(r)} ${r.text.slice(0, 80)}`).join(" | ")}`);
    for (const r of out) expect(code(r)).toBe("extension_not_connected");
    expect(ms2, "nobody waits out a deadline").toBeLessThan(5_000);
  });
});
