// Input gated where it happens, in real headless Chromium through the real daemon and a real MCP
// client: keys and clicks never reach a frame off the allowlist (frames moved under the pointer,
// focus moved mid-typing, Tab into a frame), a password field takes no key even behind a closed
// shadow root or when focus moves to it mid-typing, and approvals hold whichever tool causes the
// effect (SECURITY I-18, I-19, I-36…I-39). Leaks are decided from what reached the foreign
// servers and the page, never from Torii's own report.
import type { Frame, Page } from "playwright-core";
import { afterAll, beforeAll, beforeEach, expect, it } from "vitest";
import { type Browser, closeWebPages, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { InputSite } from "../src/input-site.ts";
import { Mcp, type ToolResult, refOf } from "../src/mcp.ts";
import { setPolicy } from "../src/safety.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

const SENTINEL = "Pw-S3ntinel-61c2";

describeBrowser("input gates at the point of effect", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let mcp: Mcp;
  let site: InputSite;
  let ext: Page;

  const call = (name: string, args: Record<string, unknown> = {}, ms?: number) => mcp.call(name, args, ms);
  const policy = (approvals: Record<string, "allow" | "ask" | "deny"> = {}, rule: Record<string, unknown> = {}) =>
    setPolicy(ext, { rules: [{ pattern: site.aPattern, approvals, ...rule }], actMode: true, approvalTimeoutMs: 15_000 });
  const pageAt = (url: string) =>
    pollUntil(`a page at ${url}`, () => browser.context.pages().find((p) => p.url().startsWith(url)), { timeoutMs: 10_000, intervalMs: 50 });

  async function openA(path: string): Promise<{ tabId: number; page: Page }> {
    const r = await call("navigate", { url: `${site.a}${path}`, newTab: true });
    expect(r.isError, r.text).toBe(false);
    const page = await pageAt(`${site.a}${path}`);
    return { tabId: r.data.tabId as number, page };
  }
  async function sinkFrame(page: Page, origin: string): Promise<Frame> {
    return pollUntil("the foreign frame", async () => {
      const f = page.frames().find((fr) => fr.url().startsWith(`${origin}/sink`));
      if (!f) return undefined;
      await f.waitForLoadState("load");
      return f;
    }, { timeoutMs: 10_000, intervalMs: 50 });
  }
  /**
   * What the foreign page saw: its own record and what reached its server. A marker request sent
   * last, from that page, is awaited, so earlier beacons have had their turn.
   */
  async function foreignSaw(frame: Frame, origin: string): Promise<{ page: string[]; server: string[] }> {
    const n = Math.random().toString(36).slice(2);
    await frame.evaluate((m) => fetch(`/marker?${m}`), n);
    await pollUntil("the marker", () => site.hits(origin, "/marker").some((h) => h.query === `?${n}`), { timeoutMs: 5_000, intervalMs: 20 });
    const seen = await frame.evaluate(() => (window as unknown as { seen: string[] }).seen.slice());
    return { page: seen, server: site.hits(origin, "/beacon").map((h) => h.body) };
  }
  /** A marker from the allowed page: requests the page started before it have arrived. */
  async function settleA(page: Page): Promise<void> {
    const n = Math.random().toString(36).slice(2);
    await page.evaluate((m) => fetch(`/marker?${m}`), n);
    await pollUntil("the marker", () => site.hits(site.a, "/marker").some((h) => h.query === `?${n}`), { timeoutMs: 5_000, intervalMs: 20 });
  }

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    ({ popup: ext } = await pairBrowser(browser, torii));
    site = await InputSite.start();
    mcp = await Mcp.connect(torii, "gates-input");
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
    // An answered approval window closes itself; a test starts once the last one has gone.
    await pollUntil("no approval window", () => !browser.context.pages().some((p) => p.url().includes("/approval.html") && !p.isClosed()), { timeoutMs: 10_000, intervalMs: 50 });
  });

  for (const which of ["b", "x"] as const) {
    const label = which === "b" ? "same-site" : "cross-site";

    it(`focus moved into a ${label} foreign frame mid-typing: the rest of the keys never reach it, even its first listener`, async () => {
      await policy();
      const foreign = site[which];
      const { tabId, page } = await openA(`/focus-move?b=${encodeURIComponent(foreign)}`);
      const frame = await sinkFrame(page, foreign);
      const r = await call("type", { tabId, selector: "#field", text: "abcdef", keys: true });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      expect(r.text).not.toContain(foreign.replace("http://", ""));
      const saw = await foreignSaw(frame, foreign);
      expect(saw.page).toEqual([]);
      expect(saw.server).toEqual([]);
      expect(await frame.locator("#sink").inputValue()).toBe("");
    });

    it(`a ${label} foreign frame inserted and focused while typing (a document that starts armed) gets no key`, async () => {
      const foreign = site[which];
      // The frame loads while the keys go in; on a loaded machine it can load only after the last
      // key, so the text grows until one call outlasts the load. Every try must leak nothing.
      let refused = false;
      for (const n of [150, 600, 2400]) {
        const { tabId, page } = await openA(`/insert-frame?b=${encodeURIComponent(foreign)}`);
        const r = await call("type", { tabId, selector: "#field", text: "x".repeat(n), keys: true }, 60_000);
        const frame = await sinkFrame(page, foreign);
        const saw = await foreignSaw(frame, foreign);
        // A frame that loaded after the call may take focus by the page's own hand; no key is the agent's.
        const agents = (l: string[]) => (r.isError ? l : l.filter((e) => !/^focus(in)?$/.test(e)));
        expect(agents(saw.server)).toEqual([]);
        expect(agents(saw.page)).toEqual([]);
        expect(await frame.locator("#sink").inputValue()).toBe("");
        await page.close();
        if (r.isError) {
          expect(r.error?.code, r.text).toBe("origin_not_allowed");
          refused = true;
          break;
        }
      }
      expect(refused, "no call outlasted the frame's load").toBe(true);
    });

    it(`a ${label} foreign page's blank child frame, whose listeners the page set before anything ran in it, gets no key`, async () => {
      const foreign = site[which];
      const { tabId, page } = await openA(`/focus-move-nest?b=${encodeURIComponent(foreign)}`);
      const frame = await pollUntil("the foreign frame", () => page.frames().find((fr) => fr.url().startsWith(`${foreign}/nest-sink`)), { timeoutMs: 10_000, intervalMs: 50 });
      await frame.waitForLoadState("load");
      const r = await call("type", { tabId, selector: "#field", text: "abcdefgh", keys: true });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      const n = Math.random().toString(36).slice(2);
      await frame.evaluate((m) => fetch(`/marker?${m}`), n);
      await pollUntil("the marker", () => site.hits(foreign, "/marker").some((h) => h.query === `?${n}`), { timeoutMs: 5_000, intervalMs: 20 });
      // No key or text of the agent's; the page may still focus its own child once the call is over.
      const typed = (l: string[]) => l.filter((e) => !/ focus(in)?$/.test(e));
      expect(typed(await frame.evaluate(() => (window as unknown as { seen: string[] }).seen.slice()))).toEqual([]);
      expect(typed(site.hits(foreign, "/beacon").map((h) => h.body))).toEqual([]);
      // The control: once no agent call is armed, the person's own keys do reach that child.
      await frame.evaluate(() => (document.querySelector("iframe") as HTMLIFrameElement).contentDocument?.getElementById("in")?.focus());
      await page.keyboard.type("zz");
      await pollUntil("the person's keys in the child", async () => (await frame.evaluate(() => (window as unknown as { seen: string[] }).seen)).includes("inner keydown"), { timeoutMs: 5_000, intervalMs: 50 });
    });

    it(`a ${label} foreign page's blank child frame has its guard before the page's own listeners, and is armed with the rest`, async () => {
      const foreign = site[which];
      const { tabId, page } = await openA(`/nest-probe?b=${encodeURIComponent(foreign)}`);
      const frame = await pollUntil("the foreign frame", () => page.frames().find((fr) => fr.url().startsWith(`${foreign}/nest-sink`)), { timeoutMs: 10_000, intervalMs: 50 });
      await frame.waitForLoadState("load");
      const r = await call("type", { tabId, selector: "#field", text: "y".repeat(60), keys: true });
      // The foreign page's own scripted submits during the call are stopped and fail it.
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      const ticks = await frame.evaluate(() => (window as unknown as { ticks: string[] }).ticks.slice());
      // While armed, this foreign document's own scripted submits were stopped ("0x")...
      expect(ticks.some((t) => t.startsWith("0"))).toBe(true);
      // ...and the child's listener saw none its guard should have stopped: a guard behind the
      // page's listener would show "01" on every armed tick. Arming and disarming reach the frames
      // one task at a time, so a tick can fall between the parent's turn and the child's: that is
      // all an "01" may be.
      expect(ticks.filter((t) => t === "01").length, ticks.slice(-300).join(" ")).toBeLessThanOrEqual(2);
    });

    it(`Tab into a ${label} foreign frame: nothing it sees, and keys after it fail fast`, async () => {
      const foreign = site[which];
      const { tabId, page } = await openA(`/tab?b=${encodeURIComponent(foreign)}`);
      const frame = await sinkFrame(page, foreign);
      expect((await call("mouse_click", { tabId, selector: "#first" })).isError).toBe(false);
      const tab = await call("press_key", { tabId, key: "Tab" });
      // The Tab itself lands in the allowed page; its key-up would be the frame's.
      expect(["origin_not_allowed", undefined], tab.text).toContain(tab.error?.code);
      const after = await call("press_key", { tabId, key: "x" });
      expect(after.error?.code, after.text).toBe("origin_not_allowed");
      const typed = await call("type", { tabId, text: "secret", keys: true });
      expect(typed.error?.code, typed.text).toBe("origin_not_allowed");
      const saw = await foreignSaw(frame, foreign);
      expect(saw.server).toEqual([]);
      expect(saw.page).toEqual([]);
    });

    it(`a ${label} foreign frame moved under the pointer during mouse_click gets no event`, async () => {
      const foreign = site[which];
      const { tabId, page } = await openA(`/hit-move?b=${encodeURIComponent(foreign)}`);
      const frame = await sinkFrame(page, foreign);
      const r = await call("mouse_click", { tabId, selector: "#target" });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      const saw = await foreignSaw(frame, foreign);
      expect(saw.server).toEqual([]);
      expect(saw.page).toEqual([]);
      expect(await page.locator("#out").textContent()).toBe("");
    });

    it(`a click whose point is in a ${label} foreign frame is refused before anything is sent`, async () => {
      const foreign = site[which];
      const { tabId, page } = await openA(`/hit-over?b=${encodeURIComponent(foreign)}`);
      const frame = await sinkFrame(page, foreign);
      await page.frameLocator("#inner").locator("#ib").waitFor();
      const snap = await call("snapshot", { tabId });
      const ref = refOf(snap.text, "button", "Inner button");
      const r = await call("mouse_click", { tabId, ref });
      expect(r.error?.code, r.text).toBe("origin_not_allowed");
      expect(r.text).toMatch(/nothing was sent/);
      const saw = await foreignSaw(frame, foreign);
      expect(saw.server).toEqual([]);
      expect(saw.page).toEqual([]);
      expect(await page.title()).toBe("Hit over");
    });
  }

  it("a password field behind a closed shadow root: refused as a target and when it has focus", async () => {
    const { tabId, page } = await openA("/pw-closed");
    for (const [tool, args] of [
      ["type", { text: SENTINEL }],
      ["press_key", { key: "a" }],
      ["fill", { value: SENTINEL, mode: "insertText" }],
    ] as const) {
      const r = await call(tool, { tabId, selector: "#login", ...args });
      expect(r.error?.code, `${tool}: ${r.text}`).toBe("password_field");
    }
    await page.evaluate(() => (window as unknown as { focusClosed(): void }).focusClosed());
    for (const [tool, args] of [["type", { text: SENTINEL }], ["type", { text: SENTINEL, keys: true }], ["press_key", { key: "a" }]] as const) {
      const r = await call(tool, { tabId, ...args });
      expect(r.error?.code, `${tool}: ${r.text}`).toBe("password_field");
    }
    expect(await page.evaluate(() => (window as unknown as { closedValue(): string }).closedValue())).toBe("");
  });

  for (const move of ["closed", "open"] as const) {
    it(`a keydown handler that moves focus to a password field (${move} shadow root or light DOM) mid-typing gets none of the rest`, async () => {
      const { tabId, page } = await openA(`/pw-closed?move=${move}`);
      const r = await call("type", { tabId, selector: "#user", text: SENTINEL, keys: true });
      expect(r.error?.code, r.text).toBe("password_field");
      expect(r.text).not.toContain(SENTINEL);
      const closed = await page.evaluate(() => (window as unknown as { closedValue(): string }).closedValue());
      expect(closed).toBe("");
      expect(await page.locator("#open-pw").inputValue()).toBe("");
      // The keys before the move reached the field they were meant for; none after it.
      expect(SENTINEL.startsWith(await page.locator("#user").inputValue())).toBe(true);
    });
  }

  it("Tab from a user field into the password field is no typing; the key after it is refused", async () => {
    const { tabId, page } = await openA("/pw-closed");
    const tab = await call("press_key", { tabId, selector: "#user", key: "Tab" });
    expect(tab.isError, tab.text).toBe(false);
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("open-pw");
    const r = await call("type", { tabId, text: SENTINEL, keys: true });
    expect(r.error?.code, r.text).toBe("password_field");
    expect(await page.locator("#open-pw").inputValue()).toBe("");
  });

  it("with allowPassword and the origin's switch, the same typing goes through", async () => {
    await policy({}, { allowPassword: true });
    const { tabId, page } = await openA("/pw-closed?move=open");
    const r = await call("type", { tabId, selector: "#user", text: "abcdef", keys: true, allowPassword: true });
    expect(r.isError, r.text).toBe(false);
    // The key whose keydown moved the focus is typed where the focus went, as a person's would be.
    expect(await page.locator("#open-pw").inputValue()).toBe("bcdef");
  });

  // ---------- approvals judged by effect ----------

  const EVASIONS: { name: string; kind: "submit" | "destructive_click"; steps: (tabId: number, refs: Record<string, string>) => [string, Record<string, unknown>][] }[] = [
    { name: "press_key Enter aimed at a form field", kind: "submit", steps: (tabId, r) => [["press_key", { tabId, ref: r.query, key: "Enter" }]] },
    { name: "press_key Enter in the focused form field", kind: "submit", steps: (tabId, r) => [["mouse_click", { tabId, ref: r.query }], ["press_key", { tabId, key: "Enter" }]] },
    { name: "type text ending in a newline", kind: "submit", steps: (tabId, r) => [["type", { tabId, ref: r.query, text: "hello\n", keys: true }]] },
    { name: "type submit: true", kind: "submit", steps: (tabId, r) => [["type", { tabId, ref: r.query, text: "hello", submit: true }]] },
    { name: "Tab, Tab then Space on the submit button", kind: "submit", steps: (tabId, r) => [["mouse_click", { tabId, ref: r.query }], ["press_key", { tabId, key: "Tab" }], ["press_key", { tabId, key: "Tab" }], ["press_key", { tabId, key: "Space" }]] },
    { name: "press_key Enter aimed at the destructive button", kind: "destructive_click", steps: (tabId, r) => [["press_key", { tabId, ref: r.danger, key: "Enter" }]] },
    { name: "type aimed at the destructive button", kind: "destructive_click", steps: (tabId, r) => [["type", { tabId, ref: r.danger, text: "x" }]] },
    { name: "Space on the focused destructive button", kind: "destructive_click", steps: (tabId, r) => [["press_key", { tabId, ref: r.free, key: "Shift+Tab" }], ["press_key", { tabId, key: "Space" }]] },
  ];

  async function formRefs(tabId: number): Promise<Record<string, string>> {
    const snap = await call("snapshot", { tabId });
    return {
      query: refOf(snap.text, "textbox", "Query"),
      danger: refOf(snap.text, "button", "Delete account"),
      free: refOf(snap.text, "textbox", "Free field"),
    };
  }
  const effectHappened = async (page: Page, kind: "submit" | "destructive_click") => {
    await settleA(page).catch(() => undefined);
    return kind === "submit" ? site.hits(site.a, "/done").length : site.hits(site.a, "/destroyed").length;
  };

  for (const ev of EVASIONS) {
    it(`deny holds: ${ev.name}`, async () => {
      await policy({ submit: "deny", destructive_click: "deny" });
      const { tabId, page } = await openA("/form");
      const refs = await formRefs(tabId);
      const steps = ev.steps(tabId, refs);
      let last: ToolResult | undefined;
      for (const [tool, args] of steps) {
        last = await call(tool, args);
        if (last.isError) break;
      }
      expect(last?.error?.code, last?.text).toBe("approval_denied");
      expect(await effectHappened(page, ev.kind)).toBe(0);
      expect(await page.locator("#out").textContent()).toBe("");
      expect(page.url()).toBe(`${site.a}/form`);
    });
  }

  for (const ev of EVASIONS.filter((e) => ["press_key Enter aimed at a form field", "Tab, Tab then Space on the submit button", "Space on the focused destructive button", "type text ending in a newline"].includes(e.name))) {
    it(`ask: ${ev.name} opens the approval window; approved, it happens once`, async () => {
      await policy({ submit: "ask", destructive_click: "ask" });
      const { tabId, page } = await openA("/form");
      const refs = await formRefs(tabId);
      const steps = ev.steps(tabId, refs);
      for (const [tool, args] of steps.slice(0, -1)) expect((await call(tool, args)).isError).toBe(false);
      const [tool, args] = steps[steps.length - 1] as [string, Record<string, unknown>];
      const pending = call(tool, args);
      const w = await pollUntil("the approval window", () => browser.context.pages().find((p) => p.url().includes("/approval.html")), { timeoutMs: 10_000, intervalMs: 50 });
      // The window names the action in its heading line.
      await w.locator("#action", { hasText: ev.kind === "submit" ? /submit|form/i : /destructive/i }).waitFor({ timeout: 5_000 });
      await w.locator("#approve").click({ noWaitAfter: true }).catch((e: Error) => {
        if (!/closed/i.test(e.message)) throw e;
      });
      const r = await pending;
      expect(r.isError, r.text).toBe(false);
      if (ev.kind === "submit") await pollUntil("the submission", () => site.hits(site.a, "/done").length > 0, { timeoutMs: 10_000, intervalMs: 50 });
      else await pollUntil("the destructive effect", async () => (await page.locator("#out").textContent()) === "deleted", { timeoutMs: 10_000, intervalMs: 50 });
      expect(await effectHappened(page, ev.kind)).toBe(1);
    });
  }

  it("an unpredicted submission (a key handler's requestSubmit) is stopped where it happens", async () => {
    for (const choice of ["deny", "ask"] as const) {
      await policy({ submit: choice });
      const { tabId, page } = await openA("/form");
      const refs = await formRefs(tabId);
      const r = await call("press_key", { tabId, ref: refs.free, key: "Enter" });
      expect(r.error?.code, r.text).toBe("approval_denied");
      expect(r.text).toMatch(/nothing was submitted/);
      expect(await effectHappened(page, "submit")).toBe(0);
      expect(browser.context.pages().some((p) => p.url().includes("/approval.html"))).toBe(false);
      await page.close();
    }
  });

  it("a click whose handler submits a form in a frame inside a shadow root is judged in that frame", async () => {
    // The frame is in no window.frames: the browser's frame tree is what finds it, so the click
    // is not armed in its own document alone.
    await policy({ submit: "deny" });
    const { tabId, page } = await openA("/shadow-form");
    await pollUntil("the shadow frame's form", () => page.frames().find((f) => f.url().endsWith("/form")), { timeoutMs: 10_000, intervalMs: 50 });
    const snap = await call("snapshot", { tabId });
    const r = await call("click", { tabId, ref: refOf(snap.text, "button", "Go") });
    expect(r.error?.code, r.text).toBe("approval_denied");
    expect(await effectHappened(page, "submit")).toBe(0);
    await policy({ submit: "allow" });
    expect((await call("click", { tabId, ref: refOf(snap.text, "button", "Go") })).isError).toBe(false);
    await pollUntil("the allowed submission", () => site.hits(site.a, "/done").length > 0, { timeoutMs: 10_000, intervalMs: 50 });
  });

  for (const shadow of [false, true]) {
    it(`a frame a click inserts${shadow ? " in a shadow root" : ""} is not left armed after the click`, async () => {
      await policy({ submit: "deny" });
      const { tabId, page } = await openA(`/add-frame${shadow ? "?shadow" : ""}`);
      const snap = await call("snapshot", { tabId });
      const r = await call("click", { tabId, ref: refOf(snap.text, "button", "Add frame") });
      expect(r.isError, r.text).toBe(false);
      // The person submits the new frame's form: nothing of the call's arming is left to stop it.
      const frame = await pollUntil("the inserted frame", () => page.frames().find((f) => f !== page.mainFrame()), { timeoutMs: 10_000, intervalMs: 50 });
      await frame.locator("#b").click();
      await pollUntil("the person's submission", () => site.hits(site.a, "/done").length > 0, { timeoutMs: 10_000, intervalMs: 50 });
    });
  }

  it("a page that rewrote itself with document.open (its window's listeners erased) is still guarded", async () => {
    await policy({ submit: "deny" });
    const { tabId, page } = await openA("/reopen");
    await page.locator("#done").waitFor({ timeout: 10_000 });
    const snap = await call("snapshot", { tabId });
    const r = await call("click", { tabId, ref: refOf(snap.text, "button", "Go") });
    expect(r.error?.code, r.text).toBe("approval_denied");
    expect(await effectHappened(page, "submit")).toBe(0);
    const t = await call("type", { tabId, ref: refOf(snap.text, "textbox", "Secret code"), text: "abcdef", keys: true });
    expect(t.error?.code, t.text).toBe("password_field");
    expect((await page.locator("#pw").inputValue()).length).toBeLessThanOrEqual(1);
  });

  it("a form whose action, or a link whose ping, is off the list sends nothing there, even with submissions allowed", async () => {
    await policy({ submit: "allow", new_origin: "allow" });
    const { tabId, page } = await openA(`/form-remote?b=${encodeURIComponent(site.x)}`);
    const snap = await call("snapshot", { tabId });
    const query = refOf(snap.text, "textbox", "Query");
    for (const [tool, args] of [
      ["type", { tabId, ref: query, text: SENTINEL, submit: true }],
      ["press_key", { tabId, ref: query, key: "Enter" }],
      ["click", { tabId, ref: refOf(snap.text, "button", "Send") }],
      ["mouse_click", { tabId, ref: refOf(snap.text, "link", "Ping link") }],
    ] as const) {
      const r = await call(tool, args);
      expect(r.error?.code, `${tool}: ${r.text}`).toBe("origin_not_allowed");
    }
    await settleA(page);
    const n = Math.random().toString(36).slice(2);
    await page.evaluate(([o, m]) => fetch(`${o}/marker?${m}`, { mode: "no-cors" }), [site.x, n] as const);
    await pollUntil("the marker", () => site.hits(site.x, "/marker").length > 0, { timeoutMs: 5_000, intervalMs: 20 });
    expect(site.hits(site.x).filter((h) => h.path !== "/marker")).toEqual([]);
    expect(page.url()).toBe(`${site.a}/form-remote?b=${encodeURIComponent(site.x)}`);
  });

  it("allowed effects still work through every tool, with no approval window", async () => {
    await policy({ submit: "allow", destructive_click: "allow" });
    const { tabId } = await openA("/form");
    const refs = await formRefs(tabId);
    const r = await call("type", { tabId, ref: refs.query, text: "hello\n", keys: true });
    expect(r.isError, r.text).toBe(false);
    await pollUntil("the submission", () => site.hits(site.a, "/done").length === 1, { timeoutMs: 10_000, intervalMs: 50 });
  });
});
