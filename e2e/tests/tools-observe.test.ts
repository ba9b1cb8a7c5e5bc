// console_tail and network_tail end to end: real Chromium, the real extension and daemon, a real
// MCP client, a fixture page that logs, throws and fetches with a frame of an origin off the list.
// The person's "Console & network" switch is off by default and tested both ways; network metadata
// comes without the debugger's Network domain, bodies only once asked for; what the agent gets
// never holds a request header, cookie or anything of the disallowed frame (SECURITY I-65).
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult, refOf } from "../src/mcp.ts";
import { B_FRAME_MARK, FLOOD, OBS_SECRET, ObserveSite } from "../src/observe-site.ts";
import { auditRows, rawAuditStorage, setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

/** What the fixture page logs while it loads. */
const EARLY = "EARLY-LOG before any call";

interface ConsoleRow {
  seq: number;
  ts: number;
  level: string;
  source: string;
  text: string;
  origin: string;
}
interface NetRow {
  method: string;
  url: string;
  status: number;
  type: string;
  kind?: string;
  size?: number;
  ms: number;
  origin: string;
  body?: string;
  bodyOmitted?: string;
}

describeBrowser("console_tail and network_tail", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: ObserveSite;
  let ext: Page;
  const results: ToolResult[] = [];

  const call = async (name: string, args: Record<string, unknown> = {}, ms?: number) => {
    const r = await mcp.call(name, args, ms);
    results.push(r);
    return r;
  };
  const policy = (observe: boolean | undefined) =>
    setPolicy(ext, { rules: [{ pattern: site.aPattern, act: true, ...(observe === undefined ? {} : { observe }) }], actMode: true });
  async function openPage(): Promise<{ tabId: number; page: Page; snap: string }> {
    const r = await call("navigate", { url: `${site.a}/page`, newTab: true, observe: "snapshot" });
    expect(r.isError, r.text).toBe(false);
    const page = await pollUntil("the fixture page", () => browser.context.pages().find((p) => p.url() === `${site.a}/page`), { timeoutMs: 10_000, intervalMs: 50 });
    // The B frame listens before anything is clicked.
    await pollUntil("the B frame", () => page.frames().find((f) => f.url().startsWith(`${site.b}/frame`)), { timeoutMs: 10_000, intervalMs: 50 });
    return { tabId: r.data.tabId as number, page, snap: r.text };
  }
  const clickButton = async (tabId: number, snap: string, name: string) => {
    const c = await call("click", { tabId, ref: refOf(snap, "button", name) });
    expect(c.isError, c.text).toBe(false);
    return c;
  };
  const rows = <T>(r: ToolResult) => r.data.entries as T[];

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.configure({ broker: { toolGroups: ["devtools"] } }); // console_tail and network_tail are offered only when their group is on
    await torii.start();
    browser = await rig.browser();
    // Keep every dialog open for the extension (Playwright would dismiss it itself).
    browser.context.on("page", (p) => p.on("dialog", () => undefined));
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await ObserveSite.start();
    mcp = await Mcp.connect(torii, "observe");
    await mcp.waitForCatalogue();
  });
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    await closeWebPages(browser);
  });

  it("off by default: both tools refuse with observe_off, naming the switch and where the person sets it", async () => {
    await policy(undefined);
    const { tabId } = await openPage();
    for (const tool of ["console_tail", "network_tail"]) {
      const r = await call(tool, { tabId });
      expect(r.error?.code, r.text).toBe("observe_off");
      expect(r.error?.message).toContain('"Console & network"');
      expect(r.error?.message).toContain("Torii options");
    }
  });

  it("on: console errors, warnings and uncaught exceptions from the agent tab's load, nothing of the disallowed frame", async () => {
    await policy(true);
    const { tabId, page, snap } = await openPage();
    // SECURITY I-84: the agent's own tab is captured from its load, so the first call shows it.
    const first = await call("console_tail", { tabId });
    expect(first.isError, first.text).toBe(false);
    expect(first.data.started).toBeUndefined();
    expect(rows<ConsoleRow>(first).map((e) => e.text)).toEqual([EARLY]);
    await clickButton(tabId, snap, "Log");
    await page.waitForFunction(() => document.getElementById("out")?.textContent === "logged");
    const r = await pollUntil(
      "the thrown error to be kept",
      async () => {
        const x = await call("console_tail", { tabId });
        return rows<ConsoleRow>(x).some((e) => e.text.includes("E2E-THROWN")) ? x : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    const got = rows<ConsoleRow>(r).slice(1);
    expect(rows<ConsoleRow>(r)[0]?.text).toBe(EARLY);
    expect(got.map((e) => [e.level, e.source, e.origin])).toEqual([
      ["error", "console", site.a],
      ["warning", "console", site.a],
      ["error", "exception", site.a],
    ]);
    expect(got[0]?.text).toBe("E2E-ERROR 42");
    expect(got[1]?.text).toBe("E2E-WARN");
    expect(got[2]?.text).toContain("Uncaught Error: E2E-THROWN");
    // Plain logs are not kept; the B frame's error is dropped and counted.
    const all = `${r.text}\n${JSON.stringify(r.data)}`;
    for (const not of ["E2E-CHATTER", B_FRAME_MARK]) expect(all).not.toContain(not);
    expect((r.data.dropped as { offList: number }).offList).toBeGreaterThanOrEqual(1);
    expect(r.text).toContain("E2E-ERROR 42");
  });

  it("on, bodies off: metadata from webRequest, no Network domain, each body omitted as not_recording, nothing of the disallowed frame", async () => {
    await policy(true);
    const { tabId, page, snap } = await openPage();
    const first = await call("network_tail", { tabId });
    expect(first.data.started).toBeUndefined();
    await clickButton(tabId, snap, "Fetch");
    await page.waitForFunction(() => document.getElementById("out")?.textContent === "fetched 4");
    expect(site.sawSecret).toBeGreaterThanOrEqual(1); // the secret really travelled in the header and cookie
    const r = await pollUntil(
      "four responses",
      async () => {
        const x = await call("network_tail", { tabId, filter: "/api/" });
        return rows<NetRow>(x).length >= 4 ? x : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(r.data.recordingBodies).toBe(false);
    expect(r.text).toContain("(bodies not recorded)");
    const got = rows<NetRow>(r);
    expect(got.map((e) => new URL(e.url).pathname).sort()).toEqual(["/api/big", "/api/bin", "/api/json", "/api/text"]);
    const by = (p: string) => got.find((e) => e.url.endsWith(p));
    expect(by("/api/json")).toMatchObject({ method: "GET", status: 200, type: "application/json", origin: site.a, bodyOmitted: "not_recording" });
    // Only each request's end is heard; how long it took comes from the page's own timeline.
    for (const e of got) {
      expect(e.ms).toBeGreaterThanOrEqual(0);
      expect(e.ms).toBeLessThan(10_000);
      expect(r.text).toContain(`${new URL(e.url).pathname} → 200`);
    }
    expect(r.text).not.toContain("undefined");
    expect(by("/api/text")).toMatchObject({ status: 200, type: "text/plain", bodyOmitted: "not_recording" });
    expect(by("/api/bin")).toMatchObject({ type: "image/png", bodyOmitted: "not_recording" });
    // Without the Network domain nothing tells fetch from XHR, and no body travels.
    for (const e of got) {
      expect(e.kind).toBeUndefined();
      expect(e.body).toBeUndefined();
    }
    const all = `${r.text}\n${JSON.stringify(r.data)}`;
    expect(all).not.toContain("hello text");
    // The B frame's requests (to A and to B) were seen and dropped, never shown.
    const offList = await pollUntil(
      "the B frame's two requests counted as dropped",
      async () => {
        const x = await call("network_tail", { tabId });
        return (x.data.dropped as { offList: number }).offList >= 2 ? x : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(`${offList.text}\n${JSON.stringify(offList.data)}`).not.toContain(B_FRAME_MARK);
    expect(all).not.toContain(B_FRAME_MARK);
    expect(all).not.toContain(site.b);
  });

  it("a page that empties its timeline and leaves it no room still gets its requests timed; a request never timed has no duration, not a guess", async () => {
    await policy(true);
    const { tabId, page, snap } = await openPage();
    expect((await call("network_tail", { tabId })).isError).toBe(false);
    await clickButton(tabId, snap, "Hide");
    await page.waitForFunction(() => document.getElementById("out")?.textContent === "hidden");
    expect(await page.evaluate(() => performance.getEntriesByType("resource").length)).toBe(0);
    const r = await pollUntil(
      "the hidden request",
      async () => {
        const x = await call("network_tail", { tabId, filter: "hidden=1" });
        return rows<NetRow>(x).length >= 1 ? x : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(rows<NetRow>(r)[0]?.ms).toBeGreaterThanOrEqual(0);
    // A new document of the tab that empties its timeline before it is first asked: the entry
    // stands, without a duration.
    const again = await call("navigate", { tabId, url: `${site.a}/page` });
    expect(again.isError, again.text).toBe(false);
    const next = await pollUntil("the new document", () => browser.context.pages().find((p) => p.url() === `${site.a}/page`), { timeoutMs: 10_000, intervalMs: 50 });
    await next.evaluate(async () => {
      performance.clearResourceTimings();
      performance.setResourceTimingBufferSize(0);
      await fetch("/api/json?untimed=1").then((x) => x.text());
    });
    const u = await pollUntil(
      "the untimed request",
      async () => {
        const x = await call("network_tail", { tabId, filter: "untimed=1" });
        return rows<NetRow>(x).length >= 1 ? x : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(rows<NetRow>(u)[0]).toMatchObject({ status: 200, type: "application/json" });
    expect(rows<NetRow>(u)[0]?.ms).toBeUndefined();
    expect(u.text).toMatch(/untimed=1 → 200 application\/json (\d+|\?) B \[body omitted/);
  });

  it("bodies asked for: text bodies recorded, binary and oversized ones omitted with reasons, a URL filter, no secret", async () => {
    await policy(true);
    const { tabId, page, snap } = await openPage();
    const first = await call("network_tail", { tabId, bodies: true });
    expect(first.data.recordingBodies).toBe(true);
    await clickButton(tabId, snap, "Fetch");
    await page.waitForFunction(() => document.getElementById("out")?.textContent === "fetched 4");
    const r = await pollUntil(
      "four responses",
      async () => {
        const x = await call("network_tail", { tabId, bodies: true, filter: "/api/" });
        return rows<NetRow>(x).length >= 4 ? x : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(r.data.recordingBodies).toBe(true);
    const by = (p: string) => rows<NetRow>(r).find((e) => e.url.endsWith(p));
    expect(by("/api/json")).toMatchObject({ method: "GET", status: 200, type: "application/json", kind: "fetch", origin: site.a, body: '{"ok":true,"items":[1,2,3],"from":"a"}' });
    expect(by("/api/json")?.size).toBeGreaterThan(0);
    expect(typeof by("/api/json")?.ms).toBe("number");
    expect(by("/api/text")).toMatchObject({ kind: "xhr", type: "text/plain", body: "hello text" });
    expect(by("/api/bin")).toMatchObject({ type: "image/png", bodyOmitted: "binary" });
    expect(by("/api/bin")?.body).toBeUndefined();
    expect(by("/api/big")).toMatchObject({ type: "text/plain", bodyOmitted: "too_large" });
    expect(by("/api/big")?.body).toBeUndefined();
    // Nothing of the disallowed frame: neither its request to A nor its own.
    const all = `${r.text}\n${JSON.stringify(r.data)}`;
    expect(all).not.toContain(B_FRAME_MARK);
    expect(all).not.toContain(site.b);
    // A call without bodies: none travels (not_asked), the filter narrows by URL, and recording stops.
    const plain = await call("network_tail", { tabId, filter: "/api/te" });
    expect(rows<NetRow>(plain).map((e) => [e.url, e.bodyOmitted])).toEqual([[`${site.a}/api/text`, "not_asked"]]);
    expect(JSON.stringify(plain.data)).not.toContain("hello text");
    expect(plain.data.recordingBodies).toBe(false);
    // What comes next is metadata only; the bodies kept before stay readable.
    await clickButton(tabId, snap, "Work");
    const next = await pollUntil(
      "the response after recording stopped",
      async () => {
        const x = await call("network_tail", { tabId, filter: "/api/json?w=" });
        return rows<NetRow>(x).length >= 1 ? x : undefined;
      },
      { timeoutMs: 10_000, intervalMs: 200 },
    );
    expect(rows<NetRow>(next)[0]).toMatchObject({ status: 200, bodyOmitted: "not_recording" });
  });

  it("10,000 responses in a burst: bounded, newest kept, the dropped counted", { timeout: 330_000 }, async () => {
    await policy(true);
    const { tabId, page, snap } = await openPage();
    await call("network_tail", { tabId });
    const before = site.tiny;
    await clickButton(tabId, snap, "Flood");
    const t0 = Date.now();
    const progress = setInterval(() => console.log(`flood: ${site.tiny - before} served after ${Date.now() - t0} ms`), 5_000);
    await page
      .waitForFunction(() => document.getElementById("out")?.textContent?.startsWith("flood done"), undefined, { timeout: 300_000, polling: 100 })
      .finally(() => clearInterval(progress));
    console.log(`flood: ${await page.locator("#out").textContent()}`);
    expect(site.tiny - before).toBe(FLOOD);
    const r = await pollUntil(
      "every flood response counted",
      async () => {
        const x = await call("network_tail", { tabId, limit: 500 });
        const d = x.data.dropped as { overflow: number };
        return d.overflow + rows<NetRow>(x).length >= FLOOD ? x : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 250 },
    );
    const got = rows<NetRow>(r);
    expect(got.length).toBe(500);
    expect((r.data.dropped as { overflow: number }).overflow).toBe(FLOOD - 500);
    // Newest kept: the last of the flood is there, the first is not.
    const ids = got.map((e) => Number(new URL(e.url).searchParams.get("i")));
    expect(ids).not.toContain(0);
    expect(Math.min(...ids)).toBeGreaterThanOrEqual(FLOOD - 500 - 64);
    expect(Math.max(...ids)).toBeGreaterThanOrEqual(FLOOD - 64);
    expect(r.text).toContain(`dropped ${FLOOD - 500} (over 500)`);
    expect(got.every((e) => e.status === 200 && e.bodyOmitted === "not_recording")).toBe(true);
  });

  it("the other debugger tools keep working while capturing: a dialog, a snapshot, a click", async () => {
    await policy(true);
    const { tabId, snap } = await openPage();
    await call("console_tail", { tabId });
    await call("network_tail", { tabId });
    const c = await call("click", { tabId, ref: refOf(snap, "button", "Alert") });
    expect(c.isError, c.text).toBe(false);
    expect(`${c.text}${JSON.stringify(c.data)}`).toContain("observe alert");
    // Capture reads are not blocked by the dialog.
    expect((await call("console_tail", { tabId })).isError).toBe(false);
    const h = await call("handle_dialog", { tabId, accept: true });
    expect(h.isError, h.text).toBe(false);
    const look = await call("snapshot", { tabId });
    expect(look.isError, look.text).toBe(false);
    await clickButton(tabId, snap, "Log");
    const r = await pollUntil("the error after the dialog", async () => {
      const x = await call("console_tail", { tabId });
      return rows<ConsoleRow>(x).some((e) => e.text === "E2E-ERROR 42") ? x : undefined;
    }, { timeoutMs: 10_000, intervalMs: 200 });
    expect(r.isError).toBe(false);
  });

  it("switched off again: refused at once, and nothing the page logs meanwhile is kept", async () => {
    await policy(true);
    const { tabId, page, snap } = await openPage();
    await call("console_tail", { tabId });
    await policy(false);
    const r = await call("console_tail", { tabId });
    expect(r.error?.code).toBe("observe_off");
    await clickButton(tabId, snap, "Log");
    await page.waitForFunction(() => document.getElementById("out")?.textContent === "logged", undefined, { polling: 100 });
    // The exception is thrown on the next task: wait for the page to have run it; then a real
    // key goes through the tab's debugger session, whose answer comes after every earlier event.
    await page.evaluate(() => new Promise((ok) => setTimeout(ok, 0)));
    const m = await call("press_key", { tabId, key: "Shift" });
    expect(m.isError, m.text).toBe(false);
    await policy(true);
    const back = await call("console_tail", { tabId });
    expect(back.isError, back.text).toBe(false);
    // Only the load's error, kept while the switch was on, shows again.
    expect(rows<ConsoleRow>(back).map((e) => e.text)).toEqual([EARLY]);
    expect((back.data.dropped as { offList: number }).offList).toBeGreaterThanOrEqual(3);
  });

  it("a tab the agent does not own is tab_not_owned, whatever the switch", async () => {
    await policy(true);
    const mine = await openPage();
    const theirs = await browser.context.newPage();
    await theirs.goto(`${site.a}/page`);
    const ids = await ext.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id?: number; url?: string }[]> } } }).chrome;
      return (await c.tabs.query({})).map((t) => ({ id: t.id as number, url: t.url ?? "" }));
    });
    const other = ids.find((t) => t.url === `${site.a}/page` && t.id !== mine.tabId);
    expect(other).toBeDefined();
    for (const tool of ["console_tail", "network_tail"]) {
      const r = await call(tool, { tabId: other?.id });
      expect(r.error?.code, r.text).toBe("tab_not_owned");
    }
  });

  it("the secret sent in request headers and cookies never appears in any result or log", () => {
    expect(results.length).toBeGreaterThan(10);
    for (const r of results) expect(`${r.text}\n${JSON.stringify(r.data)}\n${JSON.stringify(r.error ?? {})}`).not.toContain(OBS_SECRET);
    expect(torii.log.toString()).not.toContain(OBS_SECRET);
    expect(mcp.log.toString()).not.toContain(OBS_SECRET);
    expect(browser.log.toString()).not.toContain(OBS_SECRET);
  });

  it("nothing captured is written to the extension's storage or audit", async () => {
    expect(JSON.stringify(await auditRows(ext))).not.toContain(OBS_SECRET);
    const local = await rawAuditStorage(ext);
    const session = await ext.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { storage: { session: { get(k: null): Promise<unknown> } } } }).chrome;
      return JSON.stringify(await c.storage.session.get(null));
    });
    for (const s of [local, session]) {
      for (const not of [OBS_SECRET, "E2E-ERROR", '"items":[1,2,3]']) expect(s).not.toContain(not);
    }
    const audit = await torii.cli(["audit", "--format", "json"]);
    expect(audit.stdout).toContain("network_tail");
    expect(audit.stdout).not.toContain(OBS_SECRET);
    expect(audit.stdout).not.toContain("E2E-ERROR");
  });
});
