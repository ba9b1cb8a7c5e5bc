// invoke and drag in real headless Chromium, through the real daemon and a real MCP client:
// an HTML5 drag-and-drop board and a pointer-events sortable list are reordered by trusted input;
// a drag onto (or across) a frame of another site is refused before any event, decided from what
// that frame's page and server saw; invoke calls the page's own functions only while the person's
// per-origin switch (set in the options page) is on beside evaluate's program switch, and each bad
// path or answer gets its typed error (SECURITY I-36, I-71; the attacks on invoke are in
// adversarial-invoke.test.ts).
import type { Frame, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { EXTENSION_ORIGIN } from "../src/env.ts";
import { GestureSite } from "../src/gesture-site.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

describeBrowser("invoke and drag", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: GestureSite;
  let ext: Page;

  const call = (name: string, args: Record<string, unknown> = {}, ms?: number) => mcp.call(name, args, ms);
  const policy = (rule: Record<string, unknown> = {}, actMode = true) => setPolicy(ext, { rules: [{ pattern: site.aPattern, ...rule }], actMode });
  const pageAt = (url: string) =>
    pollUntil(`a page at ${url}`, () => browser.context.pages().find((p) => p.url().startsWith(url)), { timeoutMs: 10_000, intervalMs: 50 });

  async function open(path: string, m: Mcp = mcp): Promise<{ tabId: number; page: Page }> {
    const r = await m.call("navigate", { url: `${site.a}${path}`, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const page = await pageAt(`${site.a}${path}`);
    await page.waitForLoadState("load");
    return { tabId: r.data.tabId as number, page };
  }
  /** A list item's ref, from find's `listitem [a1]: Delta` line. */
  const ref = async (tabId: number, name: string) => {
    const r = await call("find", { tabId, text: name });
    const m = r.text.match(new RegExp(`listitem \\[([a-z]+\\d+)\\]: ${name}`));
    if (!m) throw new Error(`no ref for ${name} in ${r.text}`);
    return m[1] as string;
  };
  const pageLog = (page: Page) => page.evaluate(() => (window as unknown as { log: string[] }).log.slice());
  const column = (page: Page, id: string) => page.evaluate((c) => [...document.querySelectorAll(`#${c} .card`)].map((e) => e.id), id);

  async function foreignFrame(page: Page): Promise<Frame> {
    return pollUntil("the partner frame", async () => {
      const f = page.frames().find((fr) => fr.url().startsWith(`${site.x}/sink-drop`));
      if (!f) return undefined;
      await f.waitForLoadState("load");
      return f;
    }, { timeoutMs: 10_000, intervalMs: 50 });
  }
  /** What the foreign page saw, and what reached its server, once a marker it sends last has arrived. */
  async function foreignSaw(frame: Frame): Promise<{ page: string[]; server: string[] }> {
    const n = Math.random().toString(36).slice(2);
    await frame.evaluate((m) => fetch(`/marker?${m}`), n);
    await pollUntil("the marker", () => site.hits(site.x, "/marker").some((h) => h.query === `?${n}`), { timeoutMs: 5_000, intervalMs: 20 });
    return { page: await frame.evaluate(() => (window as unknown as { seen: string[] }).seen.slice()), server: site.hits(site.x, "/beacon").map((h) => h.body) };
  }

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.configure({ broker: { toolGroups: ["invoke"] } }); // invoke is offered only when its group is on
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await GestureSite.start();
    mcp = await Mcp.connect(torii, "gestures");
    await mcp.waitForCatalogue();
  }, 60_000);
  afterAll(async () => {
    await mcp?.close();
    await site?.close();
  });
  beforeEach(async () => {
    await policy();
    site.clear();
    await closeWebPages(browser);
  });

  // ---------- drag ----------

  it("HTML5 drag-and-drop: a card dragged onto another column moves there, by trusted events", async () => {
    const { tabId, page } = await open("/board");
    const r = await call("drag", { tabId, from: { selector: "#c1" }, to: { selector: "#done" } });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.html5).toBe(true);
    expect(await column(page, "done")).toEqual(["c1"]);
    expect(await column(page, "todo")).toEqual(["c2"]);
    const log = await pageLog(page);
    expect(log).toEqual(expect.arrayContaining(["mousedown", "dragstart", "dragenter", "dragover", "drop", "dragend"]));
    expect(log.filter((e) => e.endsWith(":untrusted"))).toEqual([]);
  });

  it("a pointer-events sortable list: refs and a point as the ends, reordered by trusted pointer events", async () => {
    const { tabId, page } = await open("/sortable");
    const delta = await ref(tabId, "Delta");
    const alpha = await page.locator("#list li", { hasText: "Alpha" }).boundingBox();
    if (!alpha) throw new Error("no Alpha box");
    const r = await call("drag", { tabId, from: { ref: delta }, to: { x: alpha.x + alpha.width / 2, y: alpha.y + 4 } });
    expect(r.isError, r.text).toBe(false);
    expect(r.data.html5).toBe(false);
    await expect.poll(() => page.evaluate(() => document.body.dataset.sorted ?? "")).toMatch(/^Delta,Alpha,Bravo,Charlie after \d+ moves$/);
    const moves = Number((await page.evaluate(() => document.body.dataset.sorted ?? "")).match(/after (\d+)/)?.[1]);
    expect(moves).toBeGreaterThan(1);
    const log = await pageLog(page);
    expect(log).toEqual(expect.arrayContaining(["pointerdown", "pointerup"]));
    expect(log.filter((e) => e.endsWith(":untrusted"))).toEqual([]);
    // Ref to ref, back down.
    const r2 = await call("drag", { tabId, from: { ref: await ref(tabId, "Delta") }, to: { ref: await ref(tabId, "Charlie") } });
    expect(r2.isError, r2.text).toBe(false);
    await expect.poll(() => page.evaluate(() => (document.body.dataset.sorted ?? "").split(" ")[0])).toMatch(/^Alpha,Bravo,(Delta,Charlie|Charlie,Delta)$/);
  });

  for (const at of ["onto", "between"] as const) {
    it(`a drag ${at === "onto" ? "onto" : "across"} a frame of another site is refused before any event; the frame sees nothing`, async () => {
      const { tabId, page } = await open(`/attack-board?x=${encodeURIComponent(site.x)}${at === "between" ? "&at=between" : ""}`);
      const frame = await foreignFrame(page);
      const to = at === "onto" ? { x: 670, y: 200 } : { selector: "#done" };
      const r = await call("drag", { tabId, from: { selector: "#c1" }, to });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      expect(r.text).not.toContain("127.0.0.2");
      const saw = await foreignSaw(frame);
      expect(saw.page).toEqual([]);
      expect(saw.server).toEqual([]);
      // Refused before the press: the allowed page saw no event either, and nothing moved.
      expect(await pageLog(page)).toEqual([]);
      expect(await column(page, "todo")).toEqual(["c1", "c2"]);
    });
  }

  for (const on of ["dragstart", "pointerdown"] as const) {
    it(`a frame of another site moved under the drag's path at its ${on} gets no event; the drag fails`, async () => {
      const { tabId, page } = await open(`/move-board?x=${encodeURIComponent(site.x)}&on=${on}`);
      const frame = await foreignFrame(page);
      const r = await call("drag", { tabId, from: { selector: "#c1" }, to: { selector: "#done" } });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      // The page did move it there: the test is not vacuous.
      expect(await page.evaluate(() => document.getElementById("xf")?.style.left)).toBe("300px");
      const saw = await foreignSaw(frame);
      expect(saw.page).toEqual([]);
      expect(saw.server).toEqual([]);
      expect(await column(page, "done")).toEqual([]);
    });
  }

  it("a drag whose end point is off-screen is refused, naming the field; nothing was sent", async () => {
    const { tabId, page } = await open("/board");
    const r = await call("drag", { tabId, from: { selector: "#c1" }, to: { x: 5000, y: 200 } });
    expect(r.error?.code, r.text).toBe("invalid_argument");
    expect(r.error?.field).toBe("to");
    expect(r.text).toContain("off-screen");
    const bad = await call("drag", { tabId, from: { selector: "#c1" }, to: { x: 10 } });
    expect(bad.error?.code, bad.text).toBe("invalid_argument");
    expect(await pageLog(page)).toEqual([]);
  });

  it("a drag on a tab the agent does not own is refused; that page sees nothing", async () => {
    const other = await Mcp.connect(torii, "gestures-other");
    try {
      const { tabId, page } = await open("/board", other);
      const r = await call("drag", { tabId, from: { selector: "#c1" }, to: { selector: "#done" } });
      expect(r.error?.code, r.text).toBe("tab_not_owned");
      expect(await pageLog(page)).toEqual([]);
      expect(await column(page, "todo")).toEqual(["c1", "c2"]);
    } finally {
      await other.close();
    }
  });

  it("drag needs act mode, like every write tool", async () => {
    const { tabId, page } = await open("/board");
    await policy({}, false);
    const r = await call("drag", { tabId, from: { selector: "#c1" }, to: { selector: "#done" } });
    expect(r.error?.code, r.text).toBe("act_mode_off");
    expect(await pageLog(page)).toEqual([]);
  });

  // ---------- invoke ----------

  it("invoke is off by default and on only while the person's switch in the options page is on", async () => {
    // Evaluate's program switch is on: invoke's own switch is what this test turns.
    await policy({ evalProgram: true });
    const { tabId, page } = await open("/functions");
    const off = await call("invoke", { tabId, path: "app.store.reset", args: "[3]" });
    expect(off.error?.code, off.text).toBe("eval_not_allowed");
    expect(off.text).toContain("invoke is off");
    expect(off.text).toContain("Torii options");
    expect(await page.evaluate(() => document.body.dataset.items ?? null)).toBeNull();

    // The person turns it on in the options page.
    const options = await browser.context.newPage();
    try {
      await options.goto(`${EXTENSION_ORIGIN}/options.html`);
      const box = options.locator(`#rules [data-pattern="${site.aPattern}"] input[data-field="invoke"]`);
      await box.waitFor();
      expect(await box.isChecked()).toBe(false);
      await box.check();
      await expect.poll(() => options.locator(`#rules [data-pattern="${site.aPattern}"] input[data-field="invoke"]`).isChecked()).toBe(true);
      const on = await pollUntil("invoke allowed", async () => {
        const r = await call("invoke", { tabId, path: "app.store.reset", args: "[3]" });
        return r.isError ? undefined : r;
      }, { timeoutMs: 10_000, intervalMs: 100 });
      expect(JSON.parse(on.text)).toEqual({ count: 3, items: ["item0", "item1", "item2"] });
      expect(await page.evaluate(() => document.body.dataset.items)).toBe("item0,item1,item2");
      // And off again: refused at once.
      await options.locator(`#rules [data-pattern="${site.aPattern}"] input[data-field="invoke"]`).uncheck();
      await pollUntil("invoke refused", async () => ((await call("invoke", { tabId, path: "app.add", args: "[1, 2]" })).error?.code === "eval_not_allowed" ? true : undefined), {
        timeoutMs: 10_000,
        intervalMs: 100,
      });
    } finally {
      await options.close();
    }
    // evaluate's switches do not grant it.
    await policy({ evalExpression: true, evalProgram: true });
    expect((await call("invoke", { tabId, path: "app.add", args: "[1, 2]" })).error?.code).toBe("eval_not_allowed");
  });

  it("invoke calls page functions with JSON arguments: methods, async ones, a lexical global", async () => {
    await policy({ invoke: true, evalProgram: true });
    const { tabId } = await open("/functions");
    const add = await call("invoke", { tabId, path: "app.add", args: "[2, 3]" });
    expect(add.text, add.text).toBe("5");
    expect((await call("invoke", { tabId, path: "app.later", args: "[21]" })).text).toBe('{"doubled":42}');
    expect((await call("invoke", { tabId, path: "lexicalApi.hello", args: '["torii"]' })).text).toBe('"hello torii"');
  });

  it("invoke's bad paths and answers: not a function, a throw, a cycle, 10 MB, a getter that navigates, prototype paths, a built-in", async () => {
    await policy({ invoke: true, evalProgram: true });
    const { tabId, page } = await open("/functions");

    const notFn = await call("invoke", { tabId, path: "app.version" });
    expect(notFn.error?.code, notFn.text).toBe("invalid_argument");
    expect(notFn.text).toContain("app.version is a string, not a function");

    const missing = await call("invoke", { tabId, path: "app.nothing.here" });
    expect(missing.error?.code, missing.text).toBe("not_found");

    const threw = await call("invoke", { tabId, path: "app.boom" });
    expect(threw.error?.code, threw.text).toBe("page_error");
    expect(threw.text).toContain("RangeError: quota exceeded: 3 of 3 used");

    const cyc = await call("invoke", { tabId, path: "app.cycle" });
    expect(cyc.isError, cyc.text).toBe(false);
    expect(cyc.text).toContain('"[Circular]"');
    expect(cyc.data.cycles).toBe(2);

    const huge = await call("invoke", { tabId, path: "app.huge" });
    expect(huge.isError, huge.text).toBe(false);
    expect(huge.data.truncated).toBe(true);
    expect(huge.text.length).toBeLessThan(21_000);
    expect(huge.text).toContain("[truncated at 20000 chars");

    const getter = await call("invoke", { tabId, path: "app.session.id" });
    expect(getter.error?.code, getter.text).toBe("invalid_argument");
    expect(getter.text).toContain("app.session is a getter");

    for (const path of ["__proto__.constructor", "app.__proto__.constructor", "app.add.constructor", "Object.prototype.toString"]) {
      const r = await call("invoke", { tabId, path, args: '["return 1"]' });
      expect(r.error?.code, `${path}: ${r.text}`).toBe("invalid_argument");
      expect(r.text).toContain("prototypes");
    }
    for (const path of ["eval", "location.assign", "fetch"]) {
      const r = await call("invoke", { tabId, path, args: '["/navigated"]' });
      expect(r.error?.code, `${path}: ${r.text}`).toBe("invalid_argument");
    }
    // None of it moved the page: the getter never ran, no built-in navigated.
    const n = Math.random().toString(36).slice(2);
    await page.evaluate((m) => fetch(`/marker?${m}`), n);
    await pollUntil("the marker", () => site.hits(site.a, "/marker").some((h) => h.query === `?${n}`), { timeoutMs: 5_000, intervalMs: 20 });
    expect(site.hits(site.a, "/navigated")).toEqual([]);
    expect(page.url()).toBe(`${site.a}/functions`);
  });
});
