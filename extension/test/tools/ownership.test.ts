// The ownership decision for side-panel agents (SECURITY I-24, I-29): a window grant the person's
// panel made lets that agent use the tabs now in its room's window, within the access set there;
// a token client's session (no grant) is refused; the grant ends with the window or the room.
import { beforeAll, describe, expect, it, vi } from "vitest";

type Listener = (...a: unknown[]) => void;
const ev = () => {
  const ls: Listener[] = [];
  return { addListener: (f: Listener) => ls.push(f), fire: (...a: unknown[]) => ls.forEach((f) => f(...a)) };
};

interface FakeTab {
  id: number;
  windowId: number;
  url: string;
  active: boolean;
}

const windows = new Set<number>([1, 2]);
const tabs = new Map<number, FakeTab>();
let nextTab = 100;
let nextWin = 10;
const store: Record<string, unknown> = {};
const onWindowRemoved = ev();
const docs = new Map<number, string>(); // tabId → documentId, when a test replaces a document

const fakeChrome = {
  storage: {
    session: {
      get: async (k: string) => (k in store ? { [k]: structuredClone(store[k]) } : {}),
      set: async (o: Record<string, unknown>) => Object.assign(store, structuredClone(o)),
    },
  },
  tabs: {
    query: async () => [...tabs.values()],
    get: async (id: number) => {
      const t = tabs.get(id);
      if (!t) throw new Error(`No tab with id: ${id}`);
      return t;
    },
    create: async (p: { windowId?: number; url?: string; active?: boolean }) => {
      const t = { id: nextTab++, windowId: p.windowId ?? 1, url: p.url ?? "about:blank", active: p.active ?? true };
      tabs.set(t.id, t);
      return t;
    },
    remove: async (id: number) => void tabs.delete(id),
    update: async () => undefined,
    onCreated: ev(),
    onRemoved: ev(),
    onActivated: ev(),
  },
  windows: {
    WINDOW_ID_NONE: -1,
    getAll: async () => [...windows].map((id) => ({ id })),
    get: async (id: number) => {
      if (!windows.has(id)) throw new Error(`No window with id: ${id}`);
      return { id };
    },
    create: async () => {
      const id = nextWin++;
      windows.add(id);
      const t = { id: nextTab++, windowId: id, url: "about:blank", active: true };
      tabs.set(t.id, t);
      return { id, tabs: [t] };
    },
    update: async () => undefined,
    getLastFocused: async () => ({ id: 1, focused: true }),
    onRemoved: onWindowRemoved,
    onFocusChanged: ev(),
  },
  webNavigation: { getFrame: async (f: { tabId: number }) => ({ documentId: docs.get(f.tabId) ?? "doc" }), onCreatedNavigationTarget: ev() },
};

vi.stubGlobal("chrome", fakeChrome);
const own = await import("../../src/tools/ownership.js");
const { getTool } = await import("../../src/tools/registry.js");

const READ = getTool("read_text")!;
const CLICK = getTool("click")!;
const EVAL = getTool("evaluate")!;

function tab(windowId: number, url = "https://example.com/"): number {
  const t = { id: nextTab++, windowId, url, active: false };
  tabs.set(t.id, t);
  return t.id;
}

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

    windows.add(3);
    const t3 = tab(3);
    await own.setWindowGrant("gw-rev", 3, "read");
    expect(await check(READ, { tabId: t3 }, s)).toBe("ok");
    windows.delete(3);
    onWindowRemoved.fire(3);
    await new Promise((r) => setTimeout(r, 0));
    // Even a window id Chrome hands out again later carries no grant.
    windows.add(3);
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
    docs.set(t, "another-document");
    expect(await check(READ, { tabId: t }, s)).toBe("stale_document");
    docs.delete(t);
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
