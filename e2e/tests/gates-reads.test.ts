// Reads judged by the document they really read, end to end: real Chromium, the real daemon and a
// real MCP client. The allowlist holds origin A only; B (another port) and C (B under "localhost",
// cross-site) attack through blank popups and frames they write, dialogs, captures and listings
// that race a bouncing page, navigations during a call, and fetch_in_page's base URL and redirects.
// Leaks are decided from what reached the agent (every text, data and error field) and from what
// reached the blocked server (its request log), never from Torii's own report.
import type { Dialog, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult, refOf } from "../src/mcp.ts";
import { countColour } from "../src/pixels.ts";
import { B_MARK, B_RGB, ReadsSite } from "../src/reads-site.ts";
import { setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

/** A tab the agent's call did not open may be refused by ownership before the allowlist. */
const REFUSED = ["origin_not_allowed", "tab_not_owned"];
const RACE_ROUNDS = 20;

describeBrowser("reads by the document's real origin", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: ReadsSite;
  let ext: Page;
  const dialogs: Dialog[] = [];

  const call = (name: string, args: Record<string, unknown> = {}, ms?: number) => mcp.call(name, args, ms);
  /** Nothing of B or C in anything the agent got: text, data, error message, hint and fields. */
  const expectClean = (r: ToolResult, what = "") => {
    const all = `${r.text}\n${JSON.stringify(r.data)}\n${JSON.stringify(r.error ?? {})}`;
    for (const f of [...site.forbidden, "secret-path", "token="]) expect(all, `${what} names ${f}: ${all}`).not.toContain(f);
  };
  /** A read of A's own page: A's markup may name B (its iframe's src), nothing of B's document may appear. */
  const expectNoBContent = (r: ToolResult, what = "") => {
    const all = `${r.text}\n${JSON.stringify(r.data)}\n${JSON.stringify(r.error ?? {})}`;
    expect(all, `${what}: ${all}`).not.toContain(B_MARK);
  };
  const allowA = (extra: Record<string, unknown> = {}) => setPolicy(ext, { rules: [{ pattern: site.aPattern, ...extra }], actMode: true });
  async function openA(path: string): Promise<{ tabId: number; page: Page }> {
    const r = await call("navigate", { url: `${site.a}${path}`, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const page = await pollUntil(`a page at ${path}`, () => browser.context.pages().find((p) => p.url() === `${site.a}${path}`), { timeoutMs: 10_000, intervalMs: 50 });
    return { tabId: r.data.tabId as number, page };
  }
  /** Tab ids the browser has (from the person's side: an extension page), with their URLs. */
  const browserTabs = () =>
    ext.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id?: number; url?: string; title?: string }[]> } } }).chrome;
      return (await c.tabs.query({})).map((t) => ({ id: t.id as number, url: t.url ?? "", title: t.title ?? "" }));
    });

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    // Keep every dialog open for the extension (Playwright would dismiss it itself).
    browser.context.on("page", (p) => p.on("dialog", (d) => dialogs.push(d)));
    for (const p of browser.context.pages()) p.on("dialog", (d) => dialogs.push(d));
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await ReadsSite.start();
    mcp = await Mcp.connect(torii, "reads");
    await mcp.waitForCatalogue();
  });
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    for (const d of dialogs.splice(0)) await d.dismiss().catch(() => {});
    await allowA();
    site.bouncing = true;
    await closeWebPages(browser);
  });

  it("an about:blank popup written by a B frame is not read, listed by its title or clicked", async () => {
    const { tabId } = await openA("/writer-host");
    const snap = await call("snapshot", { tabId });
    expectNoBContent(snap, "host snapshot");
    const popupSeen = browser.context.waitForEvent("page", { timeout: 10_000 });
    const c = await call("click", { tabId, ref: refOf(snap.text, "button", "Ask popup") });
    expectClean(c, "click");
    const popup = await popupSeen;
    await popup.waitForFunction((m) => document.body?.textContent?.includes(m), B_MARK);
    const tabs = await call("tabs");
    expectClean(tabs, "tabs");
    const popupId = (await browserTabs()).find((t) => t.url === "about:blank")?.id;
    expect(popupId).toBeDefined();
    for (const [tool, args] of [
      ["snapshot", {}],
      ["read_text", {}],
      ["find", { text: "Go" }],
      ["click", { selector: "button" }],
      ["screenshot", {}],
    ] as [string, Record<string, unknown>][]) {
      const r = await call(tool, { tabId: popupId, ...args });
      expect(REFUSED, `${tool}: ${r.text}`).toContain(r.error?.code);
      expectClean(r, tool);
    }
    // The click really was refused: the popup's own button did not run.
    expect(await popup.title()).toBe(`${B_MARK} popup`);
  });

  it("a blank iframe and a srcdoc written by B inside A's page are not read; A's own srcdoc is", async () => {
    const { tabId, page } = await openA("/writer-host");
    const snap = await call("snapshot", { tabId });
    await call("click", { tabId, ref: refOf(snap.text, "button", "Ask frame") });
    const writer = page.frames().find((f) => f.url().endsWith("/writer"));
    await pollUntil("B's blank frame to be written", async () => (await writer?.childFrames()[0]?.textContent("body").catch(() => null))?.includes(B_MARK) || undefined, { timeoutMs: 5_000, intervalMs: 50 });
    for (const tool of ["snapshot", "read_text"]) {
      const r = await call(tool, { tabId });
      expect(r.isError, r.text).toBe(false);
      expectNoBContent(r, tool);
      if (tool === "snapshot") expect(r.text).toContain("A srcdoc content");
    }
    const f = await call("find", { tabId, text: "Go" });
    expectNoBContent(f, "find");
  });

  for (const frameSite of ["b", "c"]) {
    it(`a dialog raised by a ${frameSite === "c" ? "cross-site" : "cross-origin"} frame shows no text anywhere and only the person can answer it`, async () => {
      const { tabId } = await openA(`/writer-host?site=${frameSite}`);
      const snap = await call("snapshot", { tabId });
      for (const kind of ["alert", "prompt"]) {
        const c = await call("click", { tabId, ref: refOf(snap.text, "button", `Ask ${kind}`) });
        expectClean(c, "click");
        await pollUntil("the dialog to open", () => dialogs.find((d) => d.message().includes(B_MARK)), { timeoutMs: 5_000, intervalMs: 50 });
        const seen = [c, await call("tabs"), await call("snapshot", { tabId }), await call("read_text", { tabId }), await call("click", { tabId, selector: "#own" })];
        for (const r of seen) expectNoBContent(r, "while the dialog is open");
        expect(seen[2]?.error?.code).toBe("dialog_blocking");
        expect(String(seen[2]?.error?.hint)).toContain("handoff");
        const h = await call("handle_dialog", { tabId, accept: true, promptText: "agent answer" });
        expect(h.error?.code, h.text).toBe("origin_not_allowed");
        expect(String(h.error?.hint)).toContain("handoff");
        expectClean(h, "handle_dialog");
        // Still open: the person answers it.
        const d = dialogs.find((x) => x.message().includes(B_MARK));
        expect(d).toBeDefined();
        dialogs.splice(dialogs.indexOf(d as Dialog), 1);
        await d?.dismiss();
      }
      // A's own dialog keeps today's behaviour: its text is shown and the agent answers it.
      const own = await call("click", { tabId, selector: "#own" });
      expect(own.text).toContain("own dialog of A");
      const h = await call("handle_dialog", { tabId, accept: true });
      expect(h.isError, h.text).toBe(false);
    });
  }

  for (const frameSite of ["b", "c"]) {
    it(`screenshots while a ${frameSite === "c" ? "cross-site" : "cross-origin"} frame flashes over the page: zero B pixels in ${RACE_ROUNDS} captures`, async () => {
      const { tabId } = await openA(`/flash?site=${frameSite}`);
      let images = 0;
      let refused = 0;
      for (let i = 0; i < RACE_ROUNDS; i++) {
        const r = await call("screenshot", { tabId, format: "png" });
        expectClean(r, "screenshot");
        if (r.isError) {
          expect(r.error?.code, r.text).toBe("origin_not_allowed");
          refused++;
          continue;
        }
        images++;
        expect(countColour(Buffer.from(r.images[0]?.data ?? "", "base64"), B_RGB), `capture ${i}`).toBe(0);
      }
      // The page is A's most of the time: some captures must get through, or the check proves nothing.
      expect(images + refused).toBe(RACE_ROUNDS);
      expect(refused).toBeGreaterThan(0);
    });
  }

  it(`screenshots and tabs while the tab bounces between A and B: zero B pixels, titles or URLs in ${RACE_ROUNDS} rounds`, async () => {
    const r0 = await call("navigate", { url: `${site.a}/bounce`, newTab: true });
    expectClean(r0, "navigate");
    const tabId = await pollUntil("the bouncing tab", async () => (await browserTabs()).find((t) => t.url.includes("/bounce"))?.id, { timeoutMs: 5_000, intervalMs: 50 });
    for (let i = 0; i < RACE_ROUNDS; i++) {
      const t = await call("tabs");
      expectClean(t, "tabs");
      const s = await call("screenshot", { tabId, format: "png" });
      expectClean(s, "screenshot");
      if (!s.isError) expect(countColour(Buffer.from(s.images[0]?.data ?? "", "base64"), B_RGB), `capture ${i}`).toBe(0);
      else expect(REFUSED, s.text).toContain(s.error?.code);
    }
    // End the bounce on A, so the tab closes cleanly.
    site.bouncing = false;
    await pollUntil("the bounce to end on A", async () => (await browserTabs()).find((t) => t.id === tabId && t.title === "A still"), { timeoutMs: 10_000, intervalMs: 100 });
  });

  it("a navigation to B during wait_for, type and press_key names no B host, path or query", async () => {
    const w = await openA("/leave?delay=1500");
    const r1 = await call("wait_for", { tabId: w.tabId, selector: "#never", timeoutMs: 10_000 });
    expect(r1.isError, r1.text).toBe(true);
    expectClean(r1, "wait_for");
    const t = await openA("/leave?keys=20");
    const r2 = await call("type", { tabId: t.tabId, selector: "#f", text: "x".repeat(200), keys: true });
    expect(r2.isError, r2.text).toBe(true);
    expectClean(r2, "type");
    const p = await openA("/leave?keys=20");
    const r3 = await call("press_key", { tabId: p.tabId, selector: "#f", key: "a", repeat: 100 });
    expect(r3.isError, r3.text).toBe(true);
    expectClean(r3, "press_key");
    const o = await openA("/leave");
    const r4 = await call("click", { tabId: o.tabId, selector: "h1", waitFor: { selector: "#never", timeoutMs: 5_000 }, observe: "snapshot" });
    expectClean(r4, "click + waitFor");
  });

  it("a redirect to B that ends on an empty response names no B host, path or query", async () => {
    const r = await call("navigate", { url: `${site.a}/redir-empty`, newTab: true });
    expect(r.isError, r.text).toBe(true);
    expectClean(r, "navigate");
    const { tabId } = await openA("/");
    const r2 = await call("navigate", { tabId, url: `${site.a}/redir-empty`, observe: "snapshot" });
    expect(r2.isError, r2.text).toBe(true);
    expectClean(r2, "navigate in a tab");
    // A link the agent clicks, redirected the same way.
    const { tabId: t3 } = await openA("/");
    const r3 = await call("click", { tabId: t3, selector: "#re", observe: "snapshot" });
    expect(r3.isError, r3.text).toBe(true);
    expectClean(r3, "click on a redirected link");
    expectClean(await call("tabs"), "tabs");
  });

  it("fetch_in_page resolves against the page's <base href> and never sends to B; a redirect to B is not followed", async () => {
    await allowA({ fetch: true });
    const { tabId, page } = await openA("/based");
    const r = await call("fetch_in_page", { tabId, url: "collect?x=1", method: "POST", body: "BODY-SECRET" });
    expect(r.error?.code, r.text).toBe("origin_not_allowed");
    expectClean(r, "fetch relative");
    // A request the page sends to B after the refusal arrives after any the refusal let through.
    await page.evaluate((u) => fetch(u, { mode: "no-cors" }).catch(() => null), `${site.b}/sync-after`);
    await pollUntil("B to log the later request", () => site.blockedHits("/sync-after").length > 0 || undefined, { timeoutMs: 5_000, intervalMs: 20 });
    expect(site.blockedHits("/collect")).toEqual([]);
    // An absolute URL on A goes, with its answer.
    const ok = await call("fetch_in_page", { tabId, url: `${site.a}/api` });
    expect(ok.isError, ok.text).toBe(false);
    expect(ok.text).toContain("A api ok");
    // A request redirected to B: not followed, so neither the request nor its body reaches B, and
    // nothing of B comes back.
    const { tabId: t2, page: p2 } = await openA("/");
    const red = await call("fetch_in_page", { tabId: t2, url: "/to-b", method: "POST", body: "BODY-SECRET" });
    expect(red.error?.code, red.text).toBe("origin_not_allowed");
    expectClean(red, "fetch redirected");
    await p2.evaluate((u) => fetch(u, { mode: "no-cors" }).catch(() => null), `${site.b}/sync-after-redirect`);
    await pollUntil("B to log the later request", () => site.blockedHits("/sync-after-redirect").length > 0 || undefined, { timeoutMs: 5_000, intervalMs: 20 });
    expect(site.blockedHits("/data")).toEqual([]);
    // Spelt to reach B from A's page: protocol-relative.
    const pr = await call("fetch_in_page", { tabId: t2, url: `//${site.b.replace("http://", "")}/collect`, method: "POST", body: "BODY-SECRET" });
    expect(pr.error?.code, pr.text).toBe("origin_not_allowed");
    expectClean(pr, "protocol-relative");
    const rel = await call("fetch_in_page", { tabId: t2, url: "api" });
    expect(rel.text).toContain("A api ok");
  });
});
