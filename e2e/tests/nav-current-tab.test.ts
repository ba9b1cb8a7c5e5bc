// navigate without tabId moves the session's current tab, only ever one it owns (SECURITY I-87),
// through the real daemon, real `torii mcp` sessions (the official MCP SDK client), the real
// extension and headless Chromium. The current tab is reused call after call; it gives way to a
// new tab when it was closed, when the person looked at it or moved it into a window of theirs,
// when its page is now off the person's list, and when newTab asks for one; after a tab the person
// granted, the session's own tab moves; two sessions each keep their own; a tab still loading is
// navigated again; newTab with tabId is invalid_argument and opens nothing.
//
// The person's moves (looking at a tab, dragging it into their window) are made the way the tab
// strip makes them, from Playwright and an extension page: a headless browser has no tab strip.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Browser, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp, type ToolResult } from "../src/mcp.ts";
import { setPolicy } from "../src/safety.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

interface ChromeTab {
  id: number;
  windowId: number;
  url?: string;
  pendingUrl?: string;
}
type ChromeApi = {
  tabs: { get(id: number): Promise<ChromeTab>; query(q: object): Promise<ChromeTab[]>; move(id: number, p: object): Promise<ChromeTab> };
  runtime: { sendMessage(m: unknown): Promise<unknown> };
};
interface ViewSession {
  id: string;
  label: string;
  tabs: { tabId: number; looked: boolean }[];
}

describeBrowser("navigate without tabId: the session's own current tab (SECURITY I-87)", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let site: Site;
  let ext: Page;
  let person: Page;
  let personTab: number;
  const clients: Mcp[] = [];

  /** Runs fn(chrome, arg) in the extension page (sent as source: its CSP forbids eval of text there). */
  const chromeCall = <T, A>(fn: (c: ChromeApi, a: A) => Promise<T>, arg: A): Promise<T> =>
    ext.evaluate(`(${fn.toString()})(chrome, ${JSON.stringify(arg)})`) as Promise<T>;
  const tabUrl = async (id: number) => {
    const t = await chromeCall((c, i) => c.tabs.get(i), id);
    return t.url || t.pendingUrl || "";
  };
  const send = <T>(m: Record<string, unknown>) => chromeCall((c, msg) => c.runtime.sendMessage(msg), m) as Promise<T>;
  const session = async (label: string) => (await send<{ sessions: ViewSession[] }>({ type: "torii.sessions.view" })).sessions.find((s) => s.label === label && s.tabs.length > 0);
  const connect = async (label: string): Promise<Mcp> => {
    const m = await Mcp.connect(torii, label);
    clients.push(m);
    await m.waitForCatalogue();
    return m;
  };
  const go = (m: Mcp, id: string, extra: Record<string, unknown> = {}): Promise<ToolResult> => m.ok("navigate", { url: site.url(`session.html?id=${id}`), ...extra });
  const mine = async (m: Mcp) => ((await m.ok("tabs")).data.tabs as { tabId: number }[]).map((t) => t.tabId).sort((a, b) => a - b);

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    ext = popup;
    await allowEverything(popup);
    site = await Site.start();
    person = await browser.context.newPage();
    await person.goto(site.url("session.html?id=person"));
    personTab = await pollUntil("the person's tab id", () =>
      chromeCall(async (c, u) => (await c.tabs.query({})).find((t) => t.url === u)?.id, site.url("session.html?id=person")),
    );
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    await site?.close();
  });

  test("the current tab is reused; newTab opens another, which becomes current; newTab with tabId opens nothing", async () => {
    const m = await connect("cur-reuse");
    const first = await go(m, "R1");
    expect(first.data).toMatchObject({ created: true });
    const t = first.data.tabId as number;
    const second = await go(m, "R2");
    expect(second.data.tabId, "the same tab").toBe(t);
    expect(second.data.created).toBeUndefined();
    expect(second.text).toContain("session.html?id=R2");
    expect(await tabUrl(t)).toBe(site.url("session.html?id=R2"));
    expect(await mine(m)).toEqual([t]);

    const both = await m.call("navigate", { url: site.url("session.html?id=R3"), tabId: t, newTab: true });
    expect(both.error?.code, both.text).toBe("invalid_argument");
    expect(both.error?.field).toBe("newTab");
    expect(both.error?.message).toContain("not both");
    expect(await mine(m), "nothing opened").toEqual([t]);
    expect(await tabUrl(t), "nothing navigated").toBe(site.url("session.html?id=R2"));

    const other = await go(m, "R4", { newTab: true });
    expect(other.data).toMatchObject({ created: true });
    const t2 = other.data.tabId as number;
    expect(t2).not.toBe(t);
    expect((await go(m, "R5")).data.tabId, "the new tab is now current").toBe(t2);
    expect(await tabUrl(t), "the first tab stays where it was").toBe(site.url("session.html?id=R2"));
  });

  test("closed: a new tab opens; still loading: the same tab is navigated again and lands", async () => {
    const m = await connect("cur-closed");
    const t = (await go(m, "C1")).data.tabId as number;
    await m.ok("close_tab", { tabId: t });
    const next = await go(m, "C2");
    expect(next.data).toMatchObject({ created: true });
    expect(next.data.tabId).not.toBe(t);

    const slow = await m.ok("navigate", { url: site.url("slow"), timeoutMs: 2_000 });
    expect(slow.text).toContain("(still loading)");
    expect(slow.data.tabId).toBe(next.data.tabId);
    const landed = await go(m, "C3");
    expect(landed.data.tabId, "the loading tab, navigated again").toBe(next.data.tabId);
    expect(landed.data.loaded).toBeUndefined();
    expect(await tabUrl(next.data.tabId as number)).toBe(site.url("session.html?id=C3"));
  });

  test("two sessions each move their own current tab, never the other's", async () => {
    const [a, b] = [await connect("cur-alpha"), await connect("cur-beta")];
    const ta = (await go(a, "A1")).data.tabId as number;
    const tb = (await go(b, "B1")).data.tabId as number;
    expect(tb).not.toBe(ta);
    expect((await go(a, "A2")).data.tabId).toBe(ta);
    expect((await go(b, "B2")).data.tabId).toBe(tb);
    expect(await tabUrl(ta)).toBe(site.url("session.html?id=A2"));
    expect(await tabUrl(tb)).toBe(site.url("session.html?id=B2"));
  });

  test("the session's last used tab is one the person granted: its own tab moves, the person's tab stays", async () => {
    const m = await connect("cur-grant");
    const own = (await go(m, "G1")).data.tabId as number;
    const sid = (await session("cur-grant"))!.id;
    const grant = await send<{ id: string; error?: string }>({ type: "torii.sessions.grant", tabId: personTab, sessionId: sid, scopes: ["read", "write"], minutes: 15 });
    expect(grant.error).toBeUndefined();
    expect((await m.ok("read_text", { tabId: personTab })).text).toContain("Owner person"); // now its last used tab
    const next = await go(m, "G2");
    expect(next.data.tabId, "the session's own tab").toBe(own);
    expect(next.data.created).toBeUndefined();
    expect(await tabUrl(personTab), "the person's tab is not moved").toBe(site.url("session.html?id=person"));
    expect(await tabUrl(own)).toBe(site.url("session.html?id=G2"));
    // With no tab of its own left, a new one opens: still never the granted tab.
    await m.ok("close_tab", { tabId: own });
    expect((await m.ok("read_text", { tabId: personTab })).text).toContain("Owner person");
    const fresh = await go(m, "G3");
    expect(fresh.data).toMatchObject({ created: true });
    expect([personTab, own]).not.toContain(fresh.data.tabId);
    expect(await tabUrl(personTab)).toBe(site.url("session.html?id=person"));
    await send({ type: "torii.sessions.revoke", id: grant.id });
  });

  test("its page is now off the person's list: a new tab opens, nothing of the old page is read", async () => {
    const m = await connect("cur-offlist");
    const cross = site.crossUrl("session.html?id=X1");
    const t = (await m.ok("navigate", { url: cross })).data.tabId as number;
    await setPolicy(ext, { rules: [{ pattern: new URL(site.url("")).host }], actMode: true });
    try {
      const next = await go(m, "X2");
      expect(next.data).toMatchObject({ created: true });
      expect(next.data.tabId).not.toBe(t);
      expect(next.text).not.toContain(new URL(cross).host);
      expect(await tabUrl(t)).toBe(cross);
    } finally {
      await allowEverything(ext);
    }
  });

  test("moved by the person into a window of theirs: a new tab opens, the moved tab stays", async () => {
    const m = await connect("cur-moved");
    const t = (await go(m, "M1")).data.tabId as number;
    const personWindow = (await chromeCall((c, i) => c.tabs.get(i), personTab)).windowId;
    await chromeCall((c, a) => c.tabs.move(a.t, { windowId: a.w, index: -1 }), { t, w: personWindow });
    const next = await go(m, "M2");
    expect(next.data).toMatchObject({ created: true });
    expect(next.data.tabId).not.toBe(t);
    expect(await tabUrl(t)).toBe(site.url("session.html?id=M1"));
  });

  test("looked at by the person (they took it back): a new tab opens, the looked-at tab stays", { timeout: 60_000 }, async () => {
    const m = await connect("cur-looked");
    const url = site.url("session.html?id=L1");
    const t = (await go(m, "L1")).data.tabId as number;
    const page = await pollUntil("the agent tab's page", () => browser.context.pages().find((p) => p.url() === url));
    const looked = async () => (await session("cur-looked"))?.tabs.find((x) => x.tabId === t)?.looked;
    // SECURITY I-46: a look within a second of the agent's own activity is not counted; the person
    // looks elsewhere, then at the tab, until the extension counts it.
    for (let i = 0; i < 5 && !(await looked()); i++) {
      await person.bringToFront();
      await new Promise((r) => setTimeout(r, 1_300));
      await page.bringToFront();
      await expect.poll(looked, { timeout: 2_000 }).toBe(true).catch(() => undefined);
    }
    expect(await looked()).toBe(true);
    const next = await go(m, "L2");
    expect(next.data).toMatchObject({ created: true });
    expect(next.data.tabId).not.toBe(t);
    expect(await tabUrl(t)).toBe(url);
    // Named, it is still the session's own tab to navigate.
    expect((await m.ok("navigate", { tabId: t, url: site.url("session.html?id=L3") })).data.tabId).toBe(t);
  });
});
