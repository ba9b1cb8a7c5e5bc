// The ownership decision (SECURITY I-24, I-29, I-45, I-46): a window grant the person's panel made
// lets that agent use the tabs now in its room's window, within the access set there; a token
// client's session (no grant) is refused; the grant ends with the window or the room. A new tab is
// an agent's only when its own call opened it, and the agent's own activity never counts as the
// person looking at a tab. A closed tab stops being the agent's only once Chrome reports it gone.
import { beforeAll, describe, expect, it, vi } from "vitest";
import { installFakeChrome } from "../fake-chrome.js";

const fake = installFakeChrome();
fake.windows.add(2);
const tabs = fake.tabs;

const dbg = await import("../../src/cdp/debugger.js");
const { installBrowser } = await import("../../src/tools/browser.js");
const state = await import("../../src/tools/ownership/state.js");
const grants = await import("../../src/tools/ownership/grants.js");
const checks = await import("../../src/tools/ownership/check.js");
const attribution = await import("../../src/tools/ownership/attribution.js");
const lifecycle = await import("../../src/tools/ownership/lifecycle.js");
const close = await import("../../src/tools/ownership/close.js");
const { openAgentTab } = await import("../../src/tools/ownership/open.js");
const { sessionsView } = await import("../../src/tools/ownership/popup.js");
/** The ownership files' exports as one object: the tests below care about the behaviour, not the file. */
const own = { ...state, ...grants, ...checks, ...attribution, ...lifecycle, ...close, openAgentTab, sessionsView };
const { getTool } = await import("../../src/tools/registry.js");

const READ = getTool("read_text")!;
const CLICK = getTool("click")!;
const EVAL = getTool("evaluate")!;
const INVOKE = getTool("invoke")!;

const tab = (windowId: number, url = "https://example.com/"): number => fake.addTab({ windowId, url });

/** The session the daemon names for a side-panel agent serving chat session gw. */
const agent = (id: string, gw: string) => own.sessionFromMeta({ sessionId: id, session: `agent:x:${id}`, kind: "agent", gatewaySessionId: gw });

async function check(tool: Parameters<typeof own.checkOwnership>[0]["tool"], args: Record<string, unknown>, s: ReturnType<typeof agent>): Promise<string> {
  try {
    await own.checkOwnership({ tool, args }, s);
    return "ok";
  } catch (e) {
    return (e as { code?: string }).code ?? String(e);
  }
}

beforeAll(() => {
  dbg.installDebugger();
  dbg.setDialogJudge(async () => true);
  installBrowser();
  own.installOwnership();
});

describe("window grants (SECURITY I-29)", () => {
  it("read access: read tools on the window's tabs, nothing else", async () => {
    const t = tab(1);
    const other = tab(2);
    await own.setWindowGrant("gw-read", 1, "read");
    const s = agent("s-read", "gw-read");
    expect(await check(READ, { tabId: t }, s)).toBe("ok");
    expect(await check(CLICK, { tabId: t }, s)).toBe("tab_not_owned");
    expect(await check(READ, { tabId: other }, s)).toBe("tab_not_owned"); // another window
    expect(own.ownedOnly([...tabs.values()], s).map((x) => x.id)).toContain(t);
    expect(own.ownedOnly([...tabs.values()], s).map((x) => x.id)).not.toContain(other);
    // A missing tabId falls back to the last tab it used.
    const args: Record<string, unknown> = {};
    expect(await check(READ, args, s)).toBe("ok");
    expect(args.tabId).toBe(t);
  });

  it("act access: write too, never evaluate; not the extension's pages or another agent's tab", async () => {
    const t = tab(1);
    const page = tab(1, "chrome-extension://abc/sidepanel.html");
    await own.setWindowGrant("gw-act", 1, "act");
    const s = agent("s-act", "gw-act");
    expect(await check(CLICK, { tabId: t }, s)).toBe("ok");
    expect(await check(EVAL, { tabId: t }, s)).toBe("tab_not_owned");
    // A page function's call is code execution (SECURITY I-71): act access does not cover it.
    expect(await check(INVOKE, { tabId: t }, s)).toBe("tab_not_owned");
    expect(await check(READ, { tabId: page }, s)).toBe("tab_not_owned");
    // navigate without tabId opens the tab in the room's window, in the background.
    const opened = await own.openAgentTab(s);
    expect(tabs.get(opened)?.windowId).toBe(1);
    expect(tabs.get(opened)?.active).toBe(false);
    // That tab is the agent's own: another agent of the same room cannot use it.
    await own.setWindowGrant("gw-act2", 1, "act");
    expect(await check(READ, { tabId: opened }, agent("s-act2", "gw-act2"))).toBe("tab_not_owned");
  });

  it("a token client's session (no grant the panel made) is refused, whatever it claims", async () => {
    const t = tab(1);
    await own.setWindowGrant("gw-panel", 1, "act");
    // Its own chat session has no grant.
    expect(await check(READ, { tabId: t }, agent("s-token", "gw-token"))).toBe("tab_not_owned");
    // A session not of kind agent never uses a window grant, even naming the panel's chat session.
    const http = own.sessionFromMeta({ sessionId: "s-http", session: "http", kind: "http", gatewaySessionId: "gw-panel" });
    expect(await check(READ, { tabId: t }, http)).toBe("tab_not_owned");
    expect(own.ownedOnly([...tabs.values()], http)).toEqual([]);
    // A new tab of such a session goes to its own agent window, not the person's.
    const opened = await own.openAgentTab(agent("s-token", "gw-token"));
    expect(tabs.get(opened)?.windowId).not.toBe(1);
  });

  it("none, closing the room and closing the window remove the grant", async () => {
    const t = tab(1);
    const s = agent("s-rev", "gw-rev");
    await own.setWindowGrant("gw-rev", 1, "act");
    expect(await check(READ, { tabId: t }, s)).toBe("ok");
    await own.setWindowGrant("gw-rev", 1, "none");
    expect(await check(READ, { tabId: t }, s)).toBe("tab_not_owned");

    await own.setWindowGrant("gw-rev", 1, "read");
    await own.dropWindowGrant("gw-rev");
    expect(await check(READ, { tabId: t }, s)).toBe("tab_not_owned");

    fake.windows.add(3);
    const t3 = tab(3);
    await own.setWindowGrant("gw-rev", 3, "read");
    expect(await check(READ, { tabId: t3 }, s)).toBe("ok");
    fake.closeWindow(3);
    await new Promise((r) => setTimeout(r, 0));
    // Even a window id Chrome hands out again later carries no grant.
    fake.windows.add(3);
    expect(await check(READ, { tabId: t3 }, s)).toBe("tab_not_owned");

    // A grant for a window that does not exist is never recorded.
    expect(await own.setWindowGrant("gw-rev", 99, "act")).toBeUndefined();
  });

  it("the agent session ending ends its window grant", async () => {
    const t = tab(1);
    const s = agent("s-end", "gw-end");
    await own.setWindowGrant("gw-end", 1, "read");
    expect(await check(READ, { tabId: t }, s)).toBe("ok");
    await own.sessionEnded("s-end", false);
    expect(await check(READ, { tabId: t }, s)).toBe("tab_not_owned");
  });
});

describe("tab grants (SECURITY I-27, I-28)", () => {
  const person = () => own.sessionFromMeta({ sessionId: "g-1", session: "grantee", kind: "stdio" });

  it("a grant works within its scopes, then fails closed on another origin, a replaced document or expiry", async () => {
    const s = person();
    const t = tab(1, "https://bank.example/account");
    expect(await check(READ, { tabId: t }, s)).toBe("tab_not_owned"); // the person's tab: no grant yet
    await own.createGrant({ tabId: t, sessionId: "g-1", scopes: ["read"], minutes: 5 });
    expect(await check(READ, { tabId: t }, s)).toBe("ok");
    expect(await check(CLICK, { tabId: t }, s)).toBe("tab_not_owned"); // read only: never widened

    tabs.get(t)!.url = "https://elsewhere.example/";
    expect(await check(READ, { tabId: t }, s)).toBe("origin_changed");
    tabs.get(t)!.url = "https://bank.example/account";
    fake.docs.set(t, "another-document");
    expect(await check(READ, { tabId: t }, s)).toBe("stale_document");
    fake.docs.delete(t);
    expect(await check(READ, { tabId: t }, s)).toBe("ok");

    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 6 * 60_000);
    try {
      expect(await check(READ, { tabId: t }, s)).toBe("tab_not_owned"); // expired
    } finally {
      vi.restoreAllMocks();
    }
  });
});

// ---------- who opened a tab, who looked at one (SECURITY I-45, I-46) ----------

const stdio = (id: string) => own.sessionFromMeta({ sessionId: id, session: id, kind: "stdio" });
const MOUSE = getTool("mouse_click")!;
const SNAPSHOT = getTool("snapshot")!;
const SHOT = getTool("screenshot")!;
const NAVIGATE = getTool("navigate")!;
const ev2 = fake.on.webNavigation.onCreatedNavigationTarget;
const settle = () => new Promise((r) => setTimeout(r, 450)); // past the attention settle delay

/** A page in `from` opened a new tab, Chrome about to create it at `at` (as onCreatedNavigationTarget says). */
async function pageOpens(from: number, at = Date.now(), windowId?: number): Promise<number> {
  const t = tab(windowId ?? tabs.get(from)!.windowId, "about:blank");
  fake.on.tabs.onCreated.fire({ ...tabs.get(t)!, openerTabId: from } as chrome.tabs.Tab);
  ev2.fire({ tabId: t, sourceTabId: from, sourceFrameId: 0, sourceProcessId: 1, timeStamp: at, url: "https://example.com/popup" });
  await new Promise((r) => setTimeout(r, 0));
  return t;
}

function listed(s: ReturnType<typeof stdio>): number[] {
  return own.ownedOnly([...tabs.values()], s).map((t) => t.id);
}

async function looked(tabId: number): Promise<boolean | undefined> {
  const v = await own.sessionsView();
  return v.sessions.flatMap((x) => x.tabs).find((t) => t.tabId === tabId)?.looked;
}

describe("a new tab is the agent's only if its own call opened it (SECURITY I-45)", () => {
  it("a popup during the agent's click on its tab is the agent's; the same page's popup with no call running is the person's", async () => {
    const s = stdio("adopt-1");
    const mine = await own.openAgentTab(s);
    const gctx = { tabId: mine };
    const before = Date.now() - 50;
    const m = own.beginAgentCall(s, CLICK, gctx);
    const during = await pageOpens(mine);
    own.endAgentCall(m);
    expect(listed(s)).toContain(during);
    expect(await check(READ, { tabId: during }, s)).toBe("ok");

    // Created before the call began (reported late), or later by a page timer or the person's
    // Ctrl+click with no call running: the person's.
    const early = await pageOpens(mine, before);
    expect(listed(s)).not.toContain(early);
    const idle = await pageOpens(mine, Date.now() + 1_500);
    expect(listed(s)).not.toContain(idle);
    expect(await check(READ, { tabId: idle }, s)).toBe("tab_not_owned");
    expect(await check(CLICK, { tabId: idle }, s)).toBe("tab_not_owned");
  });

  it("a popup set off by a timer the click started: the agent's within the grace, the person's after it", async () => {
    const s = stdio("adopt-grace");
    const mine = await own.openAgentTab(s);
    const m = own.beginAgentCall(s, MOUSE, { tabId: mine });
    own.endAgentCall(m);
    const ended = Date.now();
    const soon = await pageOpens(mine, ended + 500);
    const late = await pageOpens(mine, ended + 1_500);
    expect(listed(s)).toContain(soon);
    expect(listed(s)).not.toContain(late);
  });

  it("a read-only call, a call on another tab, another session's call and a cancelled call adopt nothing", async () => {
    const a = stdio("adopt-a");
    const b = stdio("adopt-b");
    const ta = await own.openAgentTab(a);
    const ta2 = await own.openAgentTab(a);
    const tb = await own.openAgentTab(b);

    const read = own.beginAgentCall(a, SNAPSHOT, { tabId: ta });
    const p1 = await pageOpens(ta);
    own.endAgentCall(read);

    const other = own.beginAgentCall(a, CLICK, { tabId: ta2 });
    const p2 = await pageOpens(ta);
    own.endAgentCall(other);

    // Two sessions at once: b's click runs while a's page opens a tab; neither gets it.
    const bs = own.beginAgentCall(b, CLICK, { tabId: tb });
    const p3 = await pageOpens(ta);
    own.endAgentCall(bs);

    // A cancelled call ends when the registry returns; what its handler still sets off later is not its own.
    const cancelled = own.beginAgentCall(a, CLICK, { tabId: ta });
    own.endAgentCall(cancelled);
    const p4 = await pageOpens(ta, Date.now() + 2_000);

    for (const p of [p1, p2, p3, p4]) {
      expect(listed(a)).not.toContain(p);
      expect(listed(b)).not.toContain(p);
    }
    expect(listed(b)).toEqual([tb]);
  });

  it("the person's new tab (Ctrl+T, a new page) is never adopted, even while the agent's call runs on the active tab", async () => {
    const s = stdio("adopt-newtab");
    const mine = await own.openAgentTab(s);
    const m = own.beginAgentCall(s, CLICK, { tabId: mine });
    // Chrome sets openerTabId to the window's active tab for a new tab page; no navigation target event.
    const t = tab(tabs.get(mine)!.windowId, "chrome://newtab/");
    fake.on.tabs.onCreated.fire({ ...tabs.get(t)!, openerTabId: mine } as chrome.tabs.Tab);
    await new Promise((r) => setTimeout(r, 0));
    own.endAgentCall(m);
    expect(listed(s)).not.toContain(t);
  });

  it("a popup from a person's tab granted to the agent stays the person's", async () => {
    const s = stdio("adopt-granted");
    const person = tab(1, "https://bank.example/");
    await check(READ, { tabId: 0 }, s); // the session exists
    await own.createGrant({ tabId: person, sessionId: "adopt-granted", scopes: ["read", "write"], minutes: 5 });
    const m = own.beginAgentCall(s, CLICK, { tabId: person });
    const p = await pageOpens(person);
    own.endAgentCall(m);
    expect(listed(s)).not.toContain(p);
  });

  it("navigate without tabId: the tab is the agent's from birth", async () => {
    const s = stdio("adopt-nav");
    const m = own.beginAgentCall(s, NAVIGATE, {});
    const t = await own.openAgentTab(s);
    own.endAgentCall(m);
    expect(listed(s)).toEqual([t]);
  });
});

describe("only the person's own activation counts as looking (SECURITY I-46)", () => {
  const activate = (t: number) => {
    const w = tabs.get(t)!.windowId;
    for (const x of tabs.values()) if (x.windowId === w) x.active = x.id === t;
    fake.on.tabs.onActivated.fire({ tabId: t, windowId: w });
  };

  it("the person switching to an agent tab marks it looked; the same switch during the agent's input call does not", async () => {
    const s = stdio("look-1");
    const t1 = await own.openAgentTab(s);
    const t2 = await own.openAgentTab(s);
    await settle(); // past Chrome's own activation of the new tabs
    fake.focused = tabs.get(t1)!.windowId;

    const m = own.beginAgentCall(s, MOUSE, { tabId: t2 });
    activate(t1);
    await settle();
    own.endAgentCall(m);
    expect(await looked(t1)).toBe(false);

    // Just after the call: still explained by it (a CDP press's focus is delivered late).
    activate(t2);
    await settle();
    expect(await looked(t2)).toBe(false);

    await new Promise((r) => setTimeout(r, 800));
    activate(t1);
    await settle();
    expect(await looked(t1)).toBe(true);
    fake.focused = 1;
  });

  it("a CDP click focusing the agent's window is not the person's", async () => {
    const s = stdio("look-focus");
    const t = await own.openAgentTab(s);
    tabs.get(t)!.active = true;
    await settle();
    const w = tabs.get(t)!.windowId;
    fake.focused = w;
    const m = own.beginAgentCall(s, MOUSE, { tabId: t });
    fake.on.windows.onFocusChanged.fire(w);
    await settle();
    own.endAgentCall(m);
    expect(await looked(t)).toBe(false);
    // An agent call in another window does not hide the person's own focus here.
    const other = await own.openAgentTab(stdio("look-elsewhere"));
    await new Promise((r) => setTimeout(r, 1_100)); // past the quiet time after the first click here
    const m2 = own.beginAgentCall(stdio("look-elsewhere"), MOUSE, { tabId: other });
    fake.on.windows.onFocusChanged.fire(w);
    await settle();
    own.endAgentCall(m2);
    expect(await looked(t)).toBe(true);
    fake.focused = 1;
  });

  it("a click on a tab since closed, in another window, does not hide the person's look here", async () => {
    const a = stdio("look-closed-a");
    const b = stdio("look-closed-b");
    const ta = await own.openAgentTab(a);
    const tb = await own.openAgentTab(b);
    tabs.get(tb)!.active = true;
    await settle();
    const m = own.beginAgentCall(a, MOUSE, { tabId: ta });
    own.endAgentCall(m);
    await new Promise((r) => setTimeout(r, 0));
    await own.closeAgentTab(ta);
    await settle();
    const w = tabs.get(tb)!.windowId;
    fake.focused = w;
    fake.on.windows.onFocusChanged.fire(w);
    await settle();
    expect(await looked(tb)).toBe(true);
    fake.focused = 1;
  });

  it("Chrome's own picks are not the person's: a new tab activated as it opens, a neighbour activated as a tab closes", async () => {
    const s = stdio("look-chrome");
    const t1 = await own.openAgentTab(s);
    const w = tabs.get(t1)!.windowId;
    fake.focused = w;
    await settle();
    // The page closes a popup (window.close): Chrome activates t1; the removal may be reported after.
    const popup = tab(w);
    activate(t1);
    fake.closeTab(popup);
    await settle();
    expect(await looked(t1)).toBe(false);
    // A tab activated as it is created.
    const m = own.beginAgentCall(s, CLICK, { tabId: t1 });
    const p = await pageOpens(t1);
    own.endAgentCall(m);
    activate(p);
    await settle();
    expect(listed(s)).toContain(p);
    expect(await looked(p)).toBe(false);
    fake.focused = 1;
  });

  it("the extension's own activation (a screenshot shows its tab) is not the person's; the tab stays evictable under the cap", async () => {
    // The cap counts every agent tab: start from none.
    for (const x of (await own.sessionsView()).sessions) await own.closeSessionTabs(x.id);
    const s = own.sessionFromMeta({ sessionId: "look-cap", session: "look-cap", kind: "stdio", tabCap: 2 });
    const t1 = await own.openAgentTab(s);
    const t2 = await own.openAgentTab(s);
    await settle();
    fake.focused = tabs.get(t1)!.windowId;
    // The screenshot's gate activates t1 in its window (tabs.update) while the call is marked.
    const m = own.beginAgentCall(s, SHOT, { tabId: t1 });
    expect(await check(SHOT, { tabId: t1 }, s)).toBe("ok");
    own.endAgentCall(m);
    await settle();
    expect(await looked(t1)).toBe(false);
    // At the cap the least recently used own tab goes: t1, which the agent's activation did not pin.
    await new Promise((r) => setTimeout(r, 5));
    expect(await check(READ, { tabId: t2 }, s)).toBe("ok");
    const t3 = await own.openAgentTab(s);
    expect(tabs.has(t1)).toBe(false);
    expect(listed(s).sort()).toEqual([t2, t3].sort());
    fake.focused = 1;
  });
});

describe("closing agent tabs: ownership ends only once the tab is gone", () => {
  const clear = async () => {
    for (const x of (await own.sessionsView()).sessions) await own.closeSessionTabs(x.id);
  };
  /** The person (or the agent) answers the prompt holding tab t's close. */
  const answer = (t: number, accept: boolean) => fake.chrome.debugger.sendCommand({ tabId: t }, "Page.handleJavaScriptDialog", { accept });
  const gone = (t: number) => new Promise<void>((r) => fake.chrome.tabs.onRemoved.addListener((id) => id === t && r()));

  it("close-all: a tab whose page holds the close with a prompt stays the session's and is reported; the others go", async () => {
    await clear();
    const s = stdio("close-all");
    const quiet = await own.openAgentTab(s);
    const asks = await own.openAgentTab(s);
    fake.prompts.add(asks);
    const r = await own.closeSessionTabs("close-all");
    expect(r.closed).toEqual([quiet]);
    expect(r.stayed).toEqual([{ tabId: asks, prompt: true, why: expect.stringContaining("asks before it is left") }]);
    expect(tabs.has(asks)).toBe(true);
    expect(listed(s)).toEqual([asks]);
    expect(await check(READ, { tabId: asks }, s)).toBe("ok"); // still the session's to act on
    // The prompt answered: Chrome removes the tab, and only then is it no longer the session's.
    const removed = gone(asks);
    await answer(asks, true);
    await removed;
    await new Promise((r) => setTimeout(r, 0));
    expect(listed(s)).toEqual([]);
    expect(await check(READ, { tabId: asks }, s)).toBe("no_tab");
  });

  it("eviction at the cap: a tab held by its page's prompt stays owned, and the busy error names it", async () => {
    await clear();
    const s = own.sessionFromMeta({ sessionId: "evict-held", session: "evict-held", kind: "stdio", tabCap: 2 });
    const t1 = await own.openAgentTab(s);
    const t2 = await own.openAgentTab(s);
    // t1, the least recently used, is the one to go; its page (a popup whose handler ran before
    // the extension could quiet it) asks before it is left.
    await new Promise((r) => setTimeout(r, 5));
    expect(await check(READ, { tabId: t2 }, s)).toBe("ok");
    fake.prompts.add(t1);
    const err = await own.openAgentTab(s).then(
      () => undefined,
      (e: { code?: string; message?: string; hint?: string }) => e,
    );
    expect(err?.code).toBe("busy");
    expect(err?.message).toContain(`tab ${t1}, closed to make room, is still open`);
    expect(err?.hint).toContain(`handle_dialog on tab ${t1}`);
    expect(listed(s).sort()).toEqual([t1, t2].sort());
    expect(tabs.has(t1)).toBe(true);
    // Accepting the prompt closes it; then there is room.
    const removed = gone(t1);
    await answer(t1, true);
    await removed;
    const t3 = await own.openAgentTab(s);
    expect(listed(s).sort()).toEqual([t2, t3].sort());
  });

  it("session end: the tabs close when the decision (a managed profile's, known later) says so, and stay when not", async () => {
    await clear();
    const kept = stdio("end-kept");
    const k = await own.openAgentTab(kept);
    await own.sessionEnded("end-kept", Promise.resolve(false));
    expect(tabs.has(k)).toBe(true);
    const closed = stdio("end-closed");
    const c = await own.openAgentTab(closed);
    const removed = gone(c);
    await own.sessionEnded("end-closed", Promise.resolve(true));
    await removed;
    expect(tabs.has(c)).toBe(false);
  });
});

describe("navigate without tabId moves the session's own current tab only (SECURITY I-87)", () => {
  const NAV = getTool("navigate")!;
  /** The tab navigate's ownership check picks: a number, "new" (it opens one) or the refusal's code. */
  async function picks(s: ReturnType<typeof stdio>, extra: Record<string, unknown> = {}): Promise<number | string> {
    const args: Record<string, unknown> = { url: "https://example.com/next", ...extra };
    const r = await check(NAV, args, s);
    if (r !== "ok") return r;
    return (args.tabId as number | undefined) ?? "new";
  }

  it("reuses the tab the session opened, until newTab, a close, the person's look or a move says otherwise", async () => {
    const s = stdio("cur-1");
    expect(await picks(s)).toBe("new"); // none yet
    const t = await own.openAgentTab(s);
    expect(await picks(s)).toBe(t);
    expect(await picks(s, { newTab: true })).toBe("new");
    // The person took it back: looked at it (SECURITY I-46).
    own.ownerOf(t)!.looked = true;
    expect(await picks(s)).toBe("new");
    const t2 = await own.openAgentTab(s);
    expect(await picks(s)).toBe(t2);
    // The person moved it into a window of theirs.
    tabs.get(t2)!.windowId = 1;
    expect(await picks(s)).toBe("new");
    const t3 = await own.openAgentTab(s);
    expect(await picks(s)).toBe(t3);
    // Closed.
    fake.closeTab(t3);
    expect(await picks(s)).toBe("new");
  });

  it("never a granted tab, a room window's tab or another session's: after one of those, its own tab used last", async () => {
    const s = stdio("cur-grant");
    const mine = await own.openAgentTab(s);
    const lent = tab(1, "https://bank.example/");
    await own.createGrant({ tabId: lent, sessionId: "cur-grant", scopes: ["read", "write"], minutes: 5 });
    expect(await check(READ, { tabId: lent }, s)).toBe("ok"); // now its last used tab
    expect(await picks(s)).toBe(mine);
    const another = await own.openAgentTab(s);
    expect(await check(READ, { tabId: mine }, s)).toBe("ok");
    expect(await check(READ, { tabId: lent }, s)).toBe("ok");
    expect(await picks(s), "the own tab it used most recently").toBe(mine);
    expect(await check(READ, { tabId: another }, s)).toBe("ok");
    expect(await picks(s)).toBe(another);
    expect(await picks(s, { tabId: lent })).toBe(lent); // named: the grant decides, as before

    const a = agent("cur-room", "gw-cur");
    await own.setWindowGrant("gw-cur", 1, "act");
    const roomTab = tab(1);
    expect(await check(READ, { tabId: roomTab }, a)).toBe("ok");
    expect(await picks(a as ReturnType<typeof stdio>)).toBe("new");
    // A tab it opened in its room's window (in the background) is its own, and its current tab.
    const opened = await own.openAgentTab(a);
    expect(await picks(a as ReturnType<typeof stdio>)).toBe(opened);

    // Two sessions: each keeps its own current tab.
    const other = stdio("cur-other");
    const theirs = await own.openAgentTab(other);
    expect(await picks(other)).toBe(theirs);
    expect(await picks(s, { tabId: mine })).toBe(mine);
    expect(await picks(s)).toBe(mine);
    expect(await picks(s, { tabId: another })).toBe(another);
    expect(await picks(other)).toBe(theirs);
  });
});
