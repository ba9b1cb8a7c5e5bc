// Tab ownership a page cannot widen (SECURITY I-45, I-46), through the real daemon, the real
// extension and real headless Chromium: a tab the person opens from an agent's tab stays the
// person's (the agent does not list it and naming it is tab_not_owned); a popup the agent's own
// click opens is the agent's; the agent's own clicks never count as the person looking at its
// tab, so a beforeunload page it closes or leaves asks the person nothing, and the tab stays
// evictable under the tab cap. A tab the person did look at keeps its prompt: closing it from the
// popup leaves it open and the agent's until Chrome removes it, and the popup says which one stayed.
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Dialog, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Browser, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

/** The cap on open agent tabs (all sessions) for this file's daemon: small enough to reach. */
const TAB_CAP = 5;

type Send = (m: unknown) => Promise<unknown>;
interface ViewTab {
  tabId: number;
  url: string;
  looked: boolean;
}

describeBrowser("tab ownership a page cannot widen", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let site: Site;
  let ext: Page; // an extension page: the person's UI (and our window on chrome.tabs)
  const dialogs: { url: string; type: string }[] = [];
  const clients: Mcp[] = [];
  let seq = 0;

  const code = (r: ToolResult) => (r.isError ? r.error?.code : "ok");
  const connect = async (label: string): Promise<Mcp> => {
    const m = await Mcp.connect(torii, label);
    clients.push(m);
    await m.waitForCatalogue();
    return m;
  };
  const tabIds = async (m: Mcp): Promise<number[]> => ((await m.ok("tabs")).data.tabs as { tabId: number }[]).map((t) => t.tabId);
  /** Opens testdata/pages/PATH in the session's own new tab; returns its id and Playwright page. */
  const open = async (m: Mcp, path: string): Promise<{ tabId: number; page: Page; url: string }> => {
    const u = new URL(site.url(path));
    u.searchParams.set("t", String(++seq)); // one URL per tab: maps the tab to its Playwright page
    const tabId = (await m.ok("navigate", { url: u.href, newTab: true })).data.tabId as number;
    const page = await pollUntil(`the page of tab ${tabId}`, () => browser.context.pages().find((p) => p.url() === u.href), { timeoutMs: 5_000, intervalMs: 25 });
    return { tabId, page, url: u.href };
  };
  /** Chrome's id of the tab showing a URL, as an extension page sees it. */
  const chromeTabId = (url: string) =>
    pollUntil(`a tab at ${url}`, () =>
      ext.evaluate(async (u) => {
        const c = (globalThis as unknown as { chrome: { tabs: { query(q: object): Promise<{ id?: number; url?: string; pendingUrl?: string }[]> } } }).chrome;
        return (await c.tabs.query({})).find((t) => t.url === u || t.pendingUrl === u)?.id;
      }, url),
    );
  /** The popup's sessions view: the agent tabs and whether the person looked at each. */
  const viewTab = async (tabId: number): Promise<ViewTab | undefined> => {
    const v = (await ext.evaluate(async () => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendMessage: Send } } }).chrome;
      return c.runtime.sendMessage({ type: "torii.sessions.view" });
    })) as { sessions: { tabs: ViewTab[] }[] };
    return v.sessions.flatMap((s) => s.tabs).find((t) => t.tabId === tabId);
  };
  /** Ended sessions' tabs go first under the cap: ends the earlier tests' sessions and waits until they are. */
  const endEarlierSessions = async () => {
    for (const c of clients.splice(0)) await c.close();
    await pollUntil("the earlier sessions to end", async () => {
      const st = await torii.cliJSON<{ sessions: { label: string; ended?: string }[] }>(["status", "--json"]);
      return st.sessions.every((s) => s.ended);
    });
  };
  /** The text of a tab the agent owns, once its page has loaded (a new popup starts blank). */
  const textOf = (m: Mcp, tabId: number, want: string) =>
    pollUntil(`tab ${tabId} to read "${want}"`, async () => {
      const r = await m.call("read_text", { tabId });
      return !r.isError && r.text.includes(want) ? r.text : undefined;
    });
  /** A positive control: the agent's own click opens a popup; once it is listed, every earlier tab event has been judged. */
  const agentPopup = async (m: Mcp, tabId: number): Promise<number> => {
    const before = new Set(await tabIds(m));
    expect(code(await m.call("click", { tabId, selector: "#open" }))).toBe("ok");
    return pollUntil("the agent's own popup to join its tabs", async () => (await tabIds(m)).find((t) => !before.has(t)));
  };

  beforeAll(async () => {
    torii = await rig.daemon();
    await writeFile(join(torii.configDir, "config.json"), JSON.stringify({ listen: torii.addr, broker: { tabCap: TAB_CAP } }) + "\n", { mode: 0o600 });
    await torii.start();
    browser = await rig.browser();
    const watch = (p: Page) =>
      p.on("dialog", (d: Dialog) => {
        // Recorded, and left to the extension (a listener keeps Playwright from answering it).
        dialogs.push({ url: p.url(), type: d.type() });
      });
    browser.context.on("page", watch);
    browser.context.pages().forEach(watch);
    const { popup } = await pairBrowser(browser, torii);
    ext = popup;
    await allowEverything(popup);
    site = await Site.start();
  });
  afterAll(async () => {
    for (const c of clients) await c.close();
    await site?.close();
  });

  test("tabs the person opens from an agent's tab stay the person's; the agent's own popup is the agent's", { timeout: 90_000 }, async () => {
    const a = await connect("owner-a");
    const { tabId, page } = await open(a, "opener.html?id=A");

    // 1. The page itself calls window.open with no agent call running (a page timer, a script).
    const byPage = site.url(`session.html?id=bypage-${seq}`);
    await page.evaluate((u) => void window.open(u, "_blank"), byPage);
    // 2. The person's Ctrl+click on a target=_blank link in the agent's tab.
    const ctrlUrl = site.url("session.html?id=link");
    await page.click("#blank", { modifiers: ["Control"] });
    // 3. The person's new tab while the agent's tab is the active one (Chrome sets its openerTabId to it).
    const mine = await browser.context.newPage();
    const newUrl = site.url(`session.html?id=newtab-${seq}`);
    await mine.goto(newUrl);

    const person = [await chromeTabId(byPage), await chromeTabId(ctrlUrl), await chromeTabId(newUrl)];
    // The agent's own click opens a popup: its own. Tab events are judged in order, so once this
    // one is listed the three above have been judged too.
    const popup = await agentPopup(a, tabId);
    expect(person).not.toContain(popup);
    expect(await textOf(a, popup, "Owner click")).toContain("Owner click");

    const listed = await tabIds(a);
    expect(listed.sort()).toEqual([tabId, popup].sort());
    for (const t of person) {
      for (const [tool, args] of [["read_text", {}], ["click", { selector: "#bump" }], ["screenshot", {}], ["close_tab", {}]] as const) {
        const r = await a.call(tool, { tabId: t, ...args });
        expect(code(r), `${tool} on the person's tab ${t}`).toBe("tab_not_owned");
      }
    }
    // Nothing reached the person's tabs: the counter the click would bump is still 0.
    const personPage = browser.context.pages().find((p) => p.url() === byPage)!;
    expect(await personPage.locator("#count").textContent()).toBe("0");
    await mine.close();
  });

  test("a popup the agent's click sets off on a timer is the agent's too", { timeout: 60_000 }, async () => {
    const a = await connect("owner-timer");
    const { tabId } = await open(a, "opener.html?id=T");
    const before = new Set(await tabIds(a));
    expect(code(await a.call("click", { tabId, selector: "#later" }))).toBe("ok"); // opens 300 ms after the click
    const later = await pollUntil("the timer's popup to join the agent's tabs", async () => (await tabIds(a)).find((t) => !before.has(t)));
    expect(await textOf(a, later, "Owner later")).toContain("Owner later");
  });

  test("the agent's clicks never count as the person looking: no beforeunload prompt, still evictable; the person's own look does count", { timeout: 120_000 }, async () => {
    await endEarlierSessions();
    const a = await connect("owner-looked");
    // A page that asks before it is left, once it has had a user gesture.
    const t1 = await open(a, "opener.html?id=U&unload=1");
    // Trusted CDP input: a press focuses the window (that used to mark the tab looked), then typing.
    expect(code(await a.call("mouse_click", { tabId: t1.tabId, selector: "#draft" }))).toBe("ok");
    expect(code(await a.call("type", { tabId: t1.tabId, selector: "#draft", text: "unsaved" }))).toBe("ok");
    expect(code(await a.call("mouse_click", { tabId: t1.tabId, selector: "#focus" }))).toBe("ok"); // the page calls window.focus()
    // The extension judges a focus 300 ms after it arrives: look for longer than that, in a bounded loop.
    for (let i = 0; i < 8; i++) {
      expect((await viewTab(t1.tabId))?.looked, `looked after ${i * 100} ms`).toBe(false);
      await new Promise((r) => setTimeout(r, 100));
    }

    // The agent leaves the page: no prompt holds it, it lands.
    const nav = await a.call("navigate", { tabId: t1.tabId, url: site.url("landing.html") });
    expect(code(nav), nav.text).toBe("ok");
    expect(nav.data.dialog).toBeUndefined();
    await expect.poll(() => t1.page.url()).toBe(site.url("landing.html"));

    // Another such page, closed by the agent: it closes, no prompt.
    const t2 = await open(a, "opener.html?id=V&unload=1");
    expect(code(await a.call("mouse_click", { tabId: t2.tabId, selector: "#draft" }))).toBe("ok");
    expect(code(await a.call("type", { tabId: t2.tabId, selector: "#draft", text: "unsaved" }))).toBe("ok");
    const closed = new Promise<void>((r) => t2.page.once("close", () => r()));
    expect(code(await a.call("close_tab", { tabId: t2.tabId }))).toBe("ok");
    await closed;

    // The tab cap: with TAB_CAP agent tabs open, a new one evicts the least recently used
    // of the session's own (t3, clicked and typed into by the agent, never looked at).
    const t3 = await open(a, "opener.html?id=W&unload=1");
    expect(code(await a.call("mouse_click", { tabId: t3.tabId, selector: "#draft" }))).toBe("ok");
    expect(code(await a.call("type", { tabId: t3.tabId, selector: "#draft", text: "unsaved" }))).toBe("ok");
    const evicted = new Promise<void>((r) => t3.page.once("close", () => r()));
    const opened: number[] = [];
    while ((await tabIds(a)).includes(t3.tabId) && opened.length < 2 * TAB_CAP) {
      await a.ok("read_text", { tabId: t1.tabId }); // t1 stays more recently used than t3
      opened.push((await open(a, "session.html?id=filler")).tabId);
    }
    await evicted;
    expect((await tabIds(a)).includes(t1.tabId), "the more recently used tab stays").toBe(true);

    // The person's own look does count: brought to the front with no agent input running, the
    // tab is looked at (and would keep its prompts). Polled: Chrome's event is judged after a settle.
    await new Promise((r) => setTimeout(r, 1_200)); // past the quiet time after the agent's last input
    const last = opened[opened.length - 1]!;
    await t1.page.bringToFront();
    await expect.poll(async () => (await viewTab(t1.tabId))?.looked, { timeout: 5_000 }).toBe(true);
    expect((await viewTab(last))?.looked, "only the tab the person looked at").toBe(false);

    expect(dialogs.filter((d) => d.type === "beforeunload"), "no prompt was put in front of the person").toEqual([]);
  });
  test("the popup's close-all: a looked-at tab whose page asks before it is left stays open and the agent's; the popup says so", { timeout: 90_000 }, async () => {
    await endEarlierSessions();
    const a = await connect("owner-closeall");
    const asks = await open(a, "opener.html?id=X&unload=1");
    const other = await open(a, "session.html?id=closeall");
    // The person looks at it (SECURITY I-46: a look within a second of a tab opening in that
    // window or of the agent's input is not counted, and re-fronting the active tab raises no event).
    for (let i = 0; i < 5 && !(await viewTab(asks.tabId))?.looked; i++) {
      await other.page.bringToFront();
      await new Promise((r) => setTimeout(r, 1_300));
      await asks.page.bringToFront();
      await expect.poll(async () => (await viewTab(asks.tabId))?.looked, { timeout: 2_000 }).toBe(true).catch(() => undefined);
    }
    expect((await viewTab(asks.tabId))?.looked, "the person's look was counted").toBe(true);
    // Chrome asks only once the page has had a user gesture.
    expect(code(await a.call("type", { tabId: asks.tabId, selector: "#draft", text: "unsaved" }))).toBe("ok");

    let prompt: Dialog | undefined;
    asks.page.on("dialog", (d) => void (prompt = d));
    const otherClosed = new Promise<void>((r) => other.page.once("close", () => r()));
    // The person clicks Close all for that session in the popup.
    const sessionId = await ext.evaluate(async (t) => {
      const c = (globalThis as unknown as { chrome: { runtime: { sendMessage: Send } } }).chrome;
      const v = (await c.runtime.sendMessage({ type: "torii.sessions.view" })) as { sessions: { id: string; tabs: { tabId: number }[] }[] };
      return v.sessions.find((s) => s.tabs.some((x) => x.tabId === t))?.id;
    }, asks.tabId);
    await ext.reload();
    await ext.locator(`button[data-session="${sessionId}"]`).click();
    await expect.poll(() => ext.locator("#sessions").innerText(), { timeout: 15_000 }).toContain(`Tab ${asks.tabId} stayed open: its page asks before it is left`);
    await otherClosed;
    expect(prompt?.type()).toBe("beforeunload");
    // Held by its prompt: still open, still the agent's (listed, and acted on).
    expect(asks.page.isClosed()).toBe(false);
    expect(await viewTab(asks.tabId)).toMatchObject({ tabId: asks.tabId, looked: true });
    expect(await tabIds(a)).toContain(asks.tabId);
    // The person leaves the page: Chrome removes the tab, and only then is it no longer the agent's.
    const closed = new Promise<void>((r) => asks.page.once("close", () => r()));
    await prompt!.accept();
    await closed;
    await expect.poll(() => viewTab(asks.tabId)).toBeUndefined();
    expect(await tabIds(a)).not.toContain(asks.tabId);
    expect(code(await a.call("read_text", { tabId: asks.tabId }))).toBe("no_tab");
  });
});
