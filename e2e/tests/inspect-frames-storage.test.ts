// End to end: frames, cookies, storage and set_viewport in real Chromium with the real extension and
// daemon. A's page embeds a same-origin frame, a frame of B (allowed, cross site) and one of C (off
// the list); every page sets cookies and storage. The store switches are off by default and tried
// both ways; a sentinel in an HttpOnly cookie never reaches the agent (results, audit, logs) without
// the HttpOnly switch, and nothing of C's pages ever does (SECURITY I-43, I-68).
import type { Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { C_SECRET, InspectSite } from "../src/inspect-site.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { auditRows, rawAuditStorage, setPolicy, type RuleIn } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

const SENTINEL = "S3ntinel-HttpOnly-7c0d";

interface FrameRow {
  frameId: number;
  parentFrameId: number;
  readable: boolean;
  kind?: string;
  origin?: string;
  url?: string;
  title?: string;
  reason?: string;
}

describeBrowser("frames, cookies, storage, set_viewport", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: InspectSite;
  let ext: Page;
  /** Every result the agent got before the HttpOnly switch was turned on anywhere. */
  const beforeHttpOnly: ToolResult[] = [];
  /** Every result the agent got in this file: none may hold C's secret. */
  const all: ToolResult[] = [];

  const call = async (name: string, args: Record<string, unknown> = {}, ms?: number) => {
    const r = await mcp.call(name, args, ms);
    all.push(r);
    return r;
  };
  const allow = (a: Partial<RuleIn> = {}, b: Partial<RuleIn> = {}, actMode = true) =>
    setPolicy(ext, { rules: [{ pattern: site.pattern("a"), ...a }, { pattern: site.pattern("b"), ...b }], actMode });

  async function open(path: string, role: "a" | "b" = "a"): Promise<{ tabId: number; page: Page }> {
    const url = `${site.origin[role]}${path}`;
    const r = await call("navigate", { url, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const page = await pollUntil(`a page at ${url}`, () => browser.context.pages().find((p) => p.url() === url), { timeoutMs: 10_000, intervalMs: 50 });
    await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true, undefined, { timeout: 10_000, polling: 50 });
    return { tabId: r.data.tabId as number, page };
  }

  /** The inspect page with every frame's stores written. */
  async function openInspect(): Promise<{ tabId: number; page: Page }> {
    const t = await open("/inspect");
    for (const prefix of [`${site.origin.b}/widget`, `${site.origin.c}/evil`]) {
      const f = await pollUntil(`the frame ${prefix}`, () => t.page.frames().find((x) => x.url().startsWith(prefix)), { timeoutMs: 10_000, intervalMs: 50 });
      await f.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true, undefined, { timeout: 10_000, polling: 50 });
      // C is cross site: Chromium refuses it storage, which changes nothing here.
      if (prefix.startsWith(site.origin.b)) expect(await f.evaluate(() => (window as unknown as { __storeError?: string }).__storeError ?? ""), prefix).toBe("");
    }
    return t;
  }

  async function framesOf(tabId: number): Promise<FrameRow[]> {
    const r = await call("frames", { tabId });
    expect(r.isError, r.text).toBe(false);
    return r.data.frames as FrameRow[];
  }

  const tabIdOf = (page: Page) =>
    pollUntil(`the tab id of ${page.url()}`, async () => {
      const ids = await ext.evaluate(async (u) => {
        const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id?: number; url?: string }[]> } } }).chrome;
        return (await c.tabs.query({})).filter((t) => t.url === u).map((t) => t.id);
      }, page.url());
      return ids.length === 1 ? ids[0] : undefined;
    }, { timeoutMs: 5_000, intervalMs: 50 });
  /** The person's window as the browser has it (never resized by emulation). */
  const windowOf = (tabId: number) =>
    ext.evaluate(async (id) => {
      const c = (globalThis as unknown as { chrome: { tabs: { get(i: number): Promise<{ windowId: number }> }; windows: { get(i: number): Promise<{ width?: number; height?: number }> } } }).chrome;
      const w = await c.windows.get((await c.tabs.get(id)).windowId);
      return { width: w.width, height: w.height };
    }, tabId);
  /**
   * After reset the page has the window's own viewport: the window's width, its height less the
   * browser's own bars, scale 1. (That also clears the 1280×720 override Playwright itself sets on
   * every page it drives: the browser keeps one device override per tab, whoever set it.)
   */
  async function expectWindowViewport(page: Page, tabId: number, reset: ToolResult): Promise<void> {
    expect(reset.isError, reset.text).toBe(false);
    const w = await windowOf(tabId);
    const now = await seen(page);
    expect(now.w).toBe(w.width);
    expect(now.h).toBeGreaterThan(0);
    expect(now.h).toBeLessThanOrEqual(w.height ?? 0);
    expect(now.dpr).toBe(1);
    expect(reset.data.page).toMatchObject({ innerWidth: now.w, innerHeight: now.h, devicePixelRatio: now.dpr, touch: false });
  }
  const seen = (page: Page) => page.evaluate(() => ({ w: window.innerWidth, h: window.innerHeight, dpr: window.devicePixelRatio }));

  beforeAll(async () => {
    torii = await rig.daemon();
    // frames, cookies, storage and set_viewport are offered only when their groups are on.
    await torii.configure({ broker: { toolGroups: ["devtools", "storage", "emulation"] } });
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await InspectSite.start(SENTINEL);
    mcp = await Mcp.connect(torii, "inspect");
    await mcp.waitForCatalogue();
  }, 60_000);
  afterAll(async () => {
    for (const r of all) expect(JSON.stringify(r)).not.toContain(C_SECRET);
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    await setPolicy(ext, {});
    await closeWebPages(browser);
  });

  it("frames: main, same-origin and cross-origin frames by their own origin; the frame off the list by id only", async () => {
    await allow();
    const { tabId } = await openInspect();
    const frames = await framesOf(tabId);
    beforeHttpOnly.push(all[all.length - 1] as ToolResult);
    expect(frames).toHaveLength(4);
    expect(frames[0]).toMatchObject({ frameId: 0, readable: true, kind: "main", origin: site.origin.a, url: `${site.origin.a}/inspect`, title: "Inspect top" });
    const same = frames.find((f) => f.kind === "same-origin");
    expect(same).toMatchObject({ readable: true, origin: site.origin.a, url: `${site.origin.a}/child`, title: "Child", parentFrameId: 0 });
    const cross = frames.find((f) => f.kind === "cross-origin");
    expect(cross).toMatchObject({ readable: true, origin: site.origin.b, url: `${site.origin.b}/widget`, title: "Widget", parentFrameId: 0 });
    const off = frames.filter((f) => !f.readable);
    expect(off).toHaveLength(1);
    expect(off[0]).toEqual({ frameId: off[0]?.frameId, parentFrameId: 0, readable: false, reason: "origin_not_allowed" });
    const text = JSON.stringify(all[all.length - 1]);
    expect(text).not.toContain(site.pattern("c"));
    expect(text).not.toContain("Evil");
    // Once B is off the list too, its frame is listed by id only as well.
    await setPolicy(ext, { rules: [{ pattern: site.pattern("a") }], actMode: true });
    const fewer = await framesOf(tabId);
    expect(fewer.filter((f) => f.readable).map((f) => f.kind)).toEqual(["main", "same-origin"]);
    expect(JSON.stringify(all[all.length - 1])).not.toContain(site.pattern("b"));
  });

  it("cookies and storage are refused while their switches are off (the default), naming the switch and where to set it", async () => {
    await allow({}, {}, true);
    const { tabId } = await openInspect();
    for (const [tool, label] of [
      ["cookies", "Cookies"],
      ["storage", "Storage"],
    ] as const) {
      const r = await call(tool, { tabId });
      beforeHttpOnly.push(r);
      expect(r.error?.code, r.text).toBe("storage_not_allowed");
      expect(r.error?.message).toContain(`"${label}"`);
      expect(r.error?.hint).toMatch(/Torii options/);
      expect(r.text).not.toContain("visible-A");
      expect(r.text).not.toContain("alpha");
    }
    // One switch does not open the other store.
    await allow({ storage: true });
    const c = await call("cookies", { tabId });
    beforeHttpOnly.push(c);
    expect(c.error?.code).toBe("storage_not_allowed");
  });

  it("cookies with the switch on: values, HttpOnly ones listed by name with the value withheld; with the HttpOnly switch, its value", async () => {
    await allow({ cookies: true });
    const { tabId } = await openInspect();
    const r = await call("cookies", { tabId });
    beforeHttpOnly.push(r);
    expect(r.isError, r.text).toBe(false);
    const list = r.data.cookies as { name: string; value?: string; withheld?: string; httpOnly: boolean }[];
    expect(list.find((x) => x.name === "plain")).toMatchObject({ value: "visible-A", httpOnly: false });
    const sid = list.find((x) => x.name === "sid");
    expect(sid).toMatchObject({ httpOnly: true, withheld: "httpOnly" });
    expect(sid).not.toHaveProperty("value");
    expect(r.text).toMatch(/sid=\(value withheld: HttpOnly/);
    // Cookies of other hosts are not this origin's.
    expect(list.map((x) => x.name)).not.toContain("evil");
    // The HttpOnly switch alone opens nothing; beside Cookies it gives the value.
    await allow({ cookiesHttpOnly: true });
    const alone = await call("cookies", { tabId });
    beforeHttpOnly.push(alone);
    expect(alone.error?.code).toBe("storage_not_allowed");
    // Sentinel: nothing the agent got, nor the audit, nor any log, holds the HttpOnly value.
    for (const x of beforeHttpOnly) expect(JSON.stringify(x)).not.toContain(SENTINEL);
    expect(JSON.stringify(await auditRows(ext))).not.toContain(SENTINEL);
    expect(await rawAuditStorage(ext)).not.toContain(SENTINEL);
    expect(torii.log.toString()).not.toContain(SENTINEL);
    expect(browser.log.toString()).not.toContain(SENTINEL);
    expect(mcp.log.toString()).not.toContain(SENTINEL);
    await allow({ cookies: true, cookiesHttpOnly: true });
    const full = await call("cookies", { tabId });
    expect(full.isError, full.text).toBe(false);
    expect((full.data.cookies as { name: string; value?: string }[]).find((x) => x.name === "sid")?.value).toBe(SENTINEL);
  });

  it("the person turns Cookies on in the options page: the next call reads them; a new entry has every store switch off", async () => {
    await allow();
    const { tabId } = await openInspect();
    const options = await browser.context.newPage();
    await options.goto(`${EXTENSION_ORIGIN}/options.html`);
    const row = options.locator(`#rules [data-pattern="${site.pattern("a")}"]`);
    for (const f of ["cookies", "cookiesHttpOnly", "storage"]) await expect.poll(() => row.locator(`input[data-field="${f}"]`).isChecked(), { message: f }).toBe(false);
    expect((await call("cookies", { tabId })).error?.code).toBe("storage_not_allowed");
    await row.locator('input[data-field="cookies"]').check();
    await expect.poll(async () => (await call("cookies", { tabId })).isError).toBe(false);
    const r = all[all.length - 1] as ToolResult;
    expect(r.text).toContain("plain=visible-A");
    expect(r.text).not.toContain(SENTINEL);
    beforeHttpOnly.push(r);
    await options.close();
  });

  it("storage with the switch on: local and session entries (bounded), IndexedDB database and store names only", async () => {
    await allow({ storage: true });
    const { tabId } = await openInspect();
    const r = await call("storage", { tabId });
    expect(r.isError, r.text).toBe(false);
    const d = r.data as {
      origin: string;
      localStorage: { count: number; items: { key: string; value: string; length?: number }[] };
      sessionStorage: { items: { key: string; value: string }[] };
      indexedDB: { name: string; stores: string[] }[];
    };
    expect(d.origin).toBe(site.origin.a);
    expect(d.localStorage.items.find((i) => i.key === "alpha")?.value).toBe("one");
    const long = d.localStorage.items.find((i) => i.key === "long");
    expect(long?.value.length).toBe(2000);
    expect(long?.length).toBe(3000);
    expect(d.sessionStorage.items).toEqual([{ key: "tab", value: "two" }]);
    expect(d.indexedDB).toEqual([{ name: "shop", version: 2, stores: ["carts", "orders"] }]);
    expect(r.text).toContain("shop (v2): carts, orders");
  });

  it("a frame: read by its own origin's switch; a frame off the list is refused and its stores never read", async () => {
    await allow({ storage: true, cookies: true }, {});
    const { tabId } = await openInspect();
    const frames = await framesOf(tabId);
    const cross = frames.find((f) => f.kind === "cross-origin") as FrameRow;
    const off = frames.find((f) => !f.readable) as FrameRow;
    // B is allowed, but its own storage switch is off.
    const bOff = await call("storage", { tabId, frameId: cross.frameId });
    expect(bOff.error?.code, bOff.text).toBe("storage_not_allowed");
    expect(bOff.text).not.toContain("b-value");
    for (const tool of ["storage", "cookies"]) {
      const r = await call(tool, { tabId, frameId: off.frameId });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      expect(JSON.stringify(r)).not.toContain(site.pattern("c"));
    }
    await allow({ storage: true }, { storage: true });
    const bOn = await call("storage", { tabId, frameId: cross.frameId });
    expect(bOn.isError, bOn.text).toBe(false);
    expect(bOn.data.origin).toBe(site.origin.b);
    expect((bOn.data.localStorage as { items: { key: string; value: string }[] }).items).toEqual([{ key: "widget", value: "b-value" }]);
    expect(bOn.data.indexedDB).toEqual([{ name: "widgetdb", version: 2, stores: ["w"] }]);
    // Even the permissive policy opens no store: the switches are per origin only.
    await setPolicy(ext, { permissive: true, actMode: true });
    const perm = await call("storage", { tabId, frameId: off.frameId });
    expect(perm.error?.code, perm.text).toBe("storage_not_allowed");
    const unknown = await call("storage", { tabId, frameId: 987654 });
    expect(unknown.error?.code).toBeDefined();
  });

  it("set_viewport: a preset on the agent's tab, kept across navigations (cross site too), the window never resized, other debugger tools still right, reset", async () => {
    await allow();
    const { tabId, page } = await open("/vp");
    const natural = await seen(page);
    const win = await windowOf(tabId);
    const r = await call("set_viewport", { tabId, preset: "mobile" });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.page).toMatchObject({ innerWidth: 393, innerHeight: 852, devicePixelRatio: 3, touch: true, orientation: "portrait-primary" });
    expect(await seen(page)).toEqual({ w: 393, h: 852, dpr: 3 });
    expect(await page.evaluate(() => navigator.maxTouchPoints)).toBeGreaterThan(0);
    expect(await windowOf(tabId)).toEqual(win);
    // Screenshots and clicks go through the same debugger session: still right.
    const shot = await call("screenshot", { tabId, format: "png" });
    expect(shot.isError, shot.text).toBe(false);
    // The capture is of what the page sees, and says its real size.
    const png = Buffer.from(shot.images[0]?.data ?? "", "base64");
    const size = `${png.readUInt32BE(16)}x${png.readUInt32BE(20)}`;
    expect(size).toBe(`${393 * 3}x${852 * 3}`);
    expect(shot.text).toContain(`${size} png`);
    const small = await call("screenshot", { tabId, format: "png", maxWidth: 400 });
    const spng = Buffer.from(small.images[0]?.data ?? "", "base64");
    expect(spng.readUInt32BE(16), small.text).toBeLessThanOrEqual(400);
    expect(small.text).toContain(`${spng.readUInt32BE(16)}x${spng.readUInt32BE(20)} png`);
    const click = await call("mouse_click", { tabId, selector: "#b" });
    expect(click.isError, click.text).toBe(false);
    expect(await page.evaluate(() => (window as unknown as { __clicks?: number }).__clicks)).toBe(1);
    // A navigation keeps it, to another site too (C is allowed for this test alone).
    await setPolicy(ext, { rules: [{ pattern: site.pattern("a") }, { pattern: site.pattern("c") }], actMode: true });
    for (const role of ["a", "c"] as const) {
      const url = `${site.origin[role]}/vp?n=${role}`;
      const nav = await call("navigate", { tabId, url });
      expect(nav.isError, nav.text).toBe(false);
      await page.waitForURL(url);
      await page.waitForFunction(() => (window as unknown as { __ready?: boolean }).__ready === true, undefined, { timeout: 10_000, polling: 50 });
      expect(await seen(page), role).toEqual({ w: 393, h: 852, dpr: 3 });
    }
    // An explicit size, turned.
    const ex = await call("set_viewport", { tabId, width: 500, height: 700, deviceScaleFactor: 1.5, orientation: "landscape" });
    expect(ex.isError, ex.text).toBe(false);
    expect(ex.data.page).toMatchObject({ innerWidth: 700, innerHeight: 500, devicePixelRatio: 1.5, orientation: "landscape-primary", touch: false });
    expect(await seen(page)).toEqual({ w: 700, h: 500, dpr: 1.5 });
    const reset = await call("set_viewport", { tabId, reset: true });
    expect(reset.isError, reset.text).toBe(false);
    expect(reset.data.emulation).toBeNull();
    await expectWindowViewport(page, tabId, reset);
    expect(await windowOf(tabId)).toEqual(win);
  });

  it("set_viewport bad input: scale 4, width 0 or 100000, an unknown preset, act mode off, a tab the agent does not own — typed errors, the page untouched", async () => {
    await allow();
    const { tabId, page } = await open("/vp");
    const natural = await seen(page);
    for (const [args, field] of [
      [{ preset: "mobile", deviceScaleFactor: 4 }, "deviceScaleFactor"],
      [{ width: 0, height: 600 }, "width"],
      [{ width: 100000, height: 600 }, "width"],
      [{ preset: "phablet" }, "preset"],
      [{ preset: "mobile", width: 400 }, "width"],
    ] as const) {
      const r = await call("set_viewport", { tabId, ...args });
      expect(r.error?.code, JSON.stringify(args)).toBe("invalid_argument");
      expect(r.error?.field, JSON.stringify(args)).toBe(field);
    }
    await allow({}, {}, false);
    const off = await call("set_viewport", { tabId, preset: "tablet" });
    expect(off.error?.code).toBe("act_mode_off");
    await allow();
    // The person's own tab on the same allowed origin.
    const mine = await browser.context.newPage();
    await mine.goto(`${site.origin.a}/vp?person=1`);
    const before = await seen(mine);
    const personTab = await tabIdOf(mine);
    const other = await call("set_viewport", { tabId: personTab, preset: "mobile" });
    expect(other.error?.code, other.text).toBe("tab_not_owned");
    expect(await seen(mine)).toEqual(before);
    expect(await seen(page)).toEqual(natural);
  });

  it("set_viewport on one tab leaves the session's other tab alone, and a closed tab's emulation goes with it", async () => {
    await allow();
    const one = await open("/vp?t=1");
    const two = await open("/vp?t=2");
    const natural = await seen(two.page);
    const r = await call("set_viewport", { tabId: one.tabId, preset: "mobile-small" });
    expect(r.data.page).toMatchObject({ innerWidth: 375, innerHeight: 667, devicePixelRatio: 2 });
    expect(await seen(two.page)).toEqual(natural);
    const closed = await call("close_tab", { tabId: one.tabId });
    expect(closed.isError, closed.text).toBe(false);
    // The other tab still takes its own emulation, and resets cleanly.
    const t = await call("set_viewport", { tabId: two.tabId, preset: "desktop-wide" });
    expect(t.data.page).toMatchObject({ innerWidth: 1920, innerHeight: 1080, devicePixelRatio: 1 });
    const gone = await call("set_viewport", { tabId: one.tabId, preset: "mobile" });
    expect(["no_tab", "tab_not_owned"]).toContain(gone.error?.code);
    await expectWindowViewport(two.page, two.tabId, await call("set_viewport", { tabId: two.tabId, reset: true }));
  });
});
