// Agents' tabs are visible as theirs (SECURITY I-83), through the real daemon, real `torii mcp`
// sessions, the real extension and real headless Chromium: each session's tabs sit in a Chrome
// tab group titled with its label, in a colour of its own; a tab the person grants joins a group
// of that look while the grant lasts and leaves it when the grant ends; the person's own tab is
// never grouped, moved or deactivated; a group the person renames or removes is not fought over;
// the popup lists the sessions, their tabs and their groups' colours.
//
// The person's edits to a group (rename, recolour, ungroup, taking a tab out) are made with the
// chrome.tabGroups / chrome.tabs calls the tab strip's menu makes, from an extension page: a
// headless browser has no tab strip to click. Chrome reports them to the worker exactly as it
// reports the person's own.
import type { Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { type Browser, pairBrowser } from "../src/browser.ts";
import { describeBrowser, useRig } from "../src/harness.ts";
import { Mcp } from "../src/mcp.ts";
import { Site } from "../src/site.ts";
import { allowEverything } from "../src/tools-rig.ts";
import type { Torii } from "../src/torii.ts";
import { pollUntil } from "../src/util.ts";

interface TabInfo {
  id: number;
  windowId: number;
  index: number;
  groupId: number;
  active: boolean;
}
interface GroupInfo {
  id: number;
  title?: string;
  color: string;
  windowId: number;
}
interface ViewSession {
  id: string;
  label: string;
  tabs: { tabId: number }[];
  granted: { tabId: number }[];
  group?: { title: string; color: string; declined?: boolean; edited?: boolean };
}

/** Chrome's own answers, as an extension page sees them (the worker's view is the same browser's). */
type ChromeApi = {
  tabs: {
    get(id: number): Promise<TabInfo>;
    query(q: object): Promise<(TabInfo & { url?: string; pendingUrl?: string })[]>;
    ungroup(ids: number[] | number): Promise<void>;
  };
  tabGroups: { get(id: number): Promise<GroupInfo>; query(q: object): Promise<GroupInfo[]>; update(id: number, p: object): Promise<GroupInfo> };
  windows: { getAll(): Promise<{ id: number; focused: boolean }[]> };
  runtime: { sendMessage(m: unknown): Promise<unknown> };
};

describeBrowser("agents' tab groups", () => {
  const rig = useRig();
  let torii: Torii;
  let browser: Browser;
  let site: Site;
  let ext: Page;
  let personUrl: string;
  let personTab: number;
  const clients: Mcp[] = [];

  /** Runs fn(chrome, arg) in the extension page. Sent as source: an extension page's CSP forbids building a function from text there. */
  const chromeCall = <T, A>(fn: (c: ChromeApi, a: A) => Promise<T>, arg: A): Promise<T> =>
    ext.evaluate(`(${fn.toString()})(chrome, ${JSON.stringify(arg)})`) as Promise<T>;
  const tab = (id: number) => chromeCall((c, i) => c.tabs.get(i), id);
  const group = (id: number) => chromeCall((c, i) => c.tabGroups.get(i).catch(() => null), id);
  const send = <T>(m: Record<string, unknown>) => chromeCall((c, msg) => c.runtime.sendMessage(msg), m) as Promise<T>;
  const view = async () => (await send<{ sessions: ViewSession[] }>({ type: "torii.sessions.view" })).sessions;

  /** What the person sees of their own tab: where it is, its group, and which tab of its window is active. */
  const personState = async () => {
    const t = await tab(personTab);
    const active = await chromeCall(async (c, w) => (await c.tabs.query({ windowId: w, active: true }))[0]?.id, t.windowId);
    // Whether the person's window has focus. (Headless Chromium reports an agent's window focused
    // too once a second tab opens in it, grouped or not: measured before tab groups existed.)
    const focused = await chromeCall(async (c, w) => (await c.windows.getAll()).some((x) => x.id === w && x.focused), t.windowId);
    return { windowId: t.windowId, index: t.index, groupId: t.groupId, active, focused };
  };

  const connect = async (label: string): Promise<Mcp> => {
    const m = await Mcp.connect(torii, label);
    clients.push(m);
    await m.waitForCatalogue();
    return m;
  };
  const navigate = async (m: Mcp, id: string): Promise<number> => (await m.ok("navigate", { url: site.url(`session.html?id=${id}`), newTab: true })).data.tabId as number;
  const groupOf = (tabId: number) =>
    pollUntil(`tab ${tabId} to be in a group`, async () => {
      const g = (await tab(tabId)).groupId;
      return g !== -1 ? g : undefined;
    }, { timeoutMs: 10_000, intervalMs: 50 });

  beforeAll(async () => {
    torii = await rig.daemon();
    await torii.start();
    browser = await rig.browser();
    const { popup } = await pairBrowser(browser, torii);
    ext = popup;
    await allowEverything(popup);
    site = await Site.start();
    const person = await browser.context.newPage();
    personUrl = site.url("session.html?id=person");
    await person.goto(personUrl);
    personTab = await pollUntil("the person's tab id", () =>
      chromeCall(async (c, u) => (await c.tabs.query({})).find((t) => t.url === u)?.id, personUrl),
    );
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) await c.close();
    await site?.close();
  });

  let alpha: Mcp;
  let alphaGroup: number;
  let beta: Mcp;

  test("a session's tabs sit in one group titled with its label; the person's tab is not grouped, moved or left", async () => {
    const before = await personState();
    alpha = await connect("alpha");
    const t1 = await navigate(alpha, "A1");
    alphaGroup = await groupOf(t1);
    const g = (await group(alphaGroup))!;
    expect(g.title).toBe("alpha");
    expect(g.windowId, "in the agent's own window").toBe((await tab(t1)).windowId);
    const t2 = await navigate(alpha, "A2");
    expect(await groupOf(t2), "the session's next tab joins its group").toBe(alphaGroup);
    expect(await personState(), "the person's tab: same window, place, no group, still active; focus where it was").toEqual(before);
    expect(before).toMatchObject({ groupId: -1, active: personTab, focused: true });
  });

  test("two sessions: two groups, each its own colour", async () => {
    beta = await connect("beta");
    const t = await navigate(beta, "B1");
    const g = await groupOf(t);
    expect(g).not.toBe(alphaGroup);
    const [a, b] = [(await group(alphaGroup))!, (await group(g))!];
    expect(b.title).toBe("beta");
    expect(b.color, "a colour no other session's group has").not.toBe(a.color);
  });

  test("a granted tab joins a group of the session's look where it stands, leaves it when the grant ends; the popup lists it all", async () => {
    const before = await personState();
    const sessionId = (await view()).find((s) => s.label === "alpha" && s.tabs.length > 0)!.id;
    const grant = await send<{ id: string; error?: string }>({ type: "torii.sessions.grant", tabId: personTab, sessionId, scopes: ["read"], minutes: 15 });
    expect(grant.error).toBeUndefined();
    const g = await groupOf(personTab);
    const [gg, ag] = [(await group(g))!, (await group(alphaGroup))!];
    expect({ title: gg.title, color: gg.color }, "the session's title and colour").toEqual({ title: ag.title, color: ag.color });
    const during = await personState();
    expect({ ...during, groupId: before.groupId }, "not moved, not activated, focus unchanged").toEqual(before);
    // The agent may read it, as granted.
    expect((await alpha.ok("read_text", { tabId: personTab })).text).toContain("Owner person");

    // The popup: each session with its tabs, its group's colour, and the granted tab.
    await ext.reload();
    const sessions = ext.locator("#sessions");
    await expect.poll(() => sessions.textContent(), { timeout: 10_000 }).toContain("(your tab, granted)");
    const text = (await sessions.textContent()) ?? "";
    for (const w of ["alpha", "beta", "Session page A1", "Session page A2", "Session page B1", `[${personTab}] Session page person`]) expect(text).toContain(w);
    expect(await ext.locator(`.session[data-session="${sessionId}"] .group-dot`).getAttribute("data-color")).toBe(ag.color);
    expect(text).toContain(`tab group “alpha”, ${ag.color}`);

    await send({ type: "torii.sessions.revoke", id: grant.id });
    await pollUntil("the granted tab to leave the group", async () => (await tab(personTab)).groupId === -1, { timeoutMs: 10_000, intervalMs: 50 });
    expect(await personState(), "back as it was").toEqual(before);
    expect(await group(alphaGroup), "the session's own group stays").not.toBeNull();
  });

  test("a group the person renames keeps the person's name; a tab the person takes out stays out", async () => {
    await chromeCall((c, id) => c.tabGroups.update(id, { title: "my agent", color: "grey" }), alphaGroup);
    const [t1, t2] = (await view()).find((s) => s.label === "alpha" && s.tabs.length > 0)!.tabs.map((t) => t.tabId);
    await chromeCall((c, id) => c.tabs.ungroup(id), t2!);
    // The session acts on the tab taken out, then opens another: the new one joins the renamed group.
    await alpha.ok("navigate", { tabId: t2, url: site.url("session.html?id=A2b") });
    const t3 = await navigate(alpha, "A3");
    expect(await groupOf(t3)).toBe(alphaGroup);
    expect(await group(alphaGroup)).toMatchObject({ title: "my agent", color: "grey" });
    expect((await tab(t2!)).groupId, "the tab the person took out").toBe(-1);
    expect((await tab(t1!)).groupId).toBe(alphaGroup);
    expect((await view()).find((s) => s.label === "alpha" && s.tabs.length > 0)!.group).toMatchObject({ title: "my agent", edited: true });
  });

  test("a group the person removes is not made again for that session; other sessions keep theirs", async () => {
    const betaTabs = (await view()).find((s) => s.label === "beta" && s.tabs.length > 0)!.tabs.map((t) => t.tabId);
    const g = (await tab(betaTabs[0]!)).groupId;
    await chromeCall((c, ids) => c.tabs.ungroup(ids), betaTabs);
    await pollUntil("the group to be gone", async () => (await group(g)) === null);
    const t = await navigate(beta, "B2");
    // Grouping runs one step at a time: once a later tab of another session is grouped, beta's was decided.
    expect(await groupOf(await navigate(alpha, "A4"))).toBe(alphaGroup);
    expect((await tab(t)).groupId, "beta's new tab is left ungrouped").toBe(-1);
    for (const id of betaTabs) expect((await tab(id)).groupId, "the ungrouped tabs stay ungrouped").toBe(-1);
    const groups = await chromeCall((c) => c.tabGroups.query({}), 0);
    expect(groups.map((x) => x.title)).not.toContain("beta");
    expect((await view()).find((s) => s.label === "beta" && s.tabs.length > 0)!.group?.declined).toBe(true);
  });
});
