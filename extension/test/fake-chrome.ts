// One fake browser for the worker's unit tests: the chrome.* APIs the tools layer uses (tabs,
// windows, webNavigation, debugger, storage.session), backed by a small model of tabs and windows
// that behaves like Chrome where the code under test depends on it: tabs.remove settles before
// onRemoved fires, a page with a beforeunload prompt holds its close until the prompt is answered,
// a missing tab or window is an error. Events are fired by the model or by the test through
// typed `fire` helpers.

/** The listener type of a chrome event (chrome.tabs.onRemoved → (tabId, info) => void). */
type ListenerOf<E> = E extends { addListener(cb: infer F, ...rest: never[]): void } ? F : never;
type ArgsOf<E> = ListenerOf<E> extends (...a: infer A) => unknown ? A : never;

class FakeEvent<E> {
  private readonly ls = new Set<(...a: ArgsOf<E>) => unknown>();
  addListener(f: (...a: ArgsOf<E>) => unknown): void {
    this.ls.add(f);
  }
  removeListener(f: (...a: ArgsOf<E>) => unknown): void {
    this.ls.delete(f);
  }
  hasListener(f: (...a: ArgsOf<E>) => unknown): boolean {
    return this.ls.has(f);
  }
  /** Calls every listener, as Chrome would deliver the event. */
  fire(...a: ArgsOf<E>): void {
    for (const f of [...this.ls]) f(...a);
  }
}

const ev = <E>() => new FakeEvent<E>();

export interface FakeTab {
  id: number;
  windowId: number;
  index: number;
  url: string;
  title: string;
  active: boolean;
  status?: string;
  pendingUrl?: string;
}

type Tabs = typeof chrome.tabs;
type Windows = typeof chrome.windows;
type Nav = typeof chrome.webNavigation;
type Dbg = typeof chrome.debugger;

const PAGE = "http://127.0.0.1:1/p.html";

/**
 * A fake browser, installed as globalThis.chrome by installFakeChrome. Its state is public so a
 * test can set up a scene (tabs, windows, the focused window) and look at the outcome.
 */
class FakeBrowser {
  readonly tabs = new Map<number, FakeTab>();
  readonly windows = new Set<number>([1]);
  /** chrome.storage.session's contents (stored as structured clones, like Chrome). */
  readonly store: Record<string, unknown> = {};
  /** Tabs whose page asks before it is left (a beforeunload handler after a gesture). */
  readonly prompts = new Set<number>();
  /** tabId → the main frame's documentId (webNavigation.getFrame); "doc" when unset. */
  readonly docs = new Map<number, string>();
  /** The window chrome.windows.getLastFocused names. */
  focused = 1;
  /** How long after tabs.remove settles Chrome reports the tab removed. */
  removeDelayMs = 30;
  private nextTab = 100;
  private nextWin = 10;
  /** Tabs whose close a prompt holds: answering it accepted removes them. */
  private held = new Set<number>();

  readonly on = {
    tabs: {
      onCreated: ev<Tabs["onCreated"]>(),
      onUpdated: ev<Tabs["onUpdated"]>(),
      onActivated: ev<Tabs["onActivated"]>(),
      onRemoved: ev<Tabs["onRemoved"]>(),
      onMoved: ev<Tabs["onMoved"]>(),
      onAttached: ev<Tabs["onAttached"]>(),
      onDetached: ev<Tabs["onDetached"]>(),
      onReplaced: ev<Tabs["onReplaced"]>(),
    },
    windows: {
      onRemoved: ev<Windows["onRemoved"]>(),
      onFocusChanged: ev<Windows["onFocusChanged"]>(),
    },
    webNavigation: {
      onBeforeNavigate: ev<Nav["onBeforeNavigate"]>(),
      onCommitted: ev<Nav["onCommitted"]>(),
      onCompleted: ev<Nav["onCompleted"]>(),
      onHistoryStateUpdated: ev<Nav["onHistoryStateUpdated"]>(),
      onReferenceFragmentUpdated: ev<Nav["onReferenceFragmentUpdated"]>(),
      onErrorOccurred: ev<Nav["onErrorOccurred"]>(),
      onCreatedNavigationTarget: ev<Nav["onCreatedNavigationTarget"]>(),
    },
    debugger: {
      onEvent: ev<Dbg["onEvent"]>(),
      onDetach: ev<Dbg["onDetach"]>(),
    },
  };

  /**
   * Fires a webNavigation event for a frame (the main frame unless frameId says otherwise), with the
   * fields Chrome fills in that the code under test does not read.
   */
  fireNav(name: Exclude<keyof FakeBrowser["on"]["webNavigation"], "onCreatedNavigationTarget">, d: { tabId: number; url: string; frameId?: number; error?: string; timeStamp?: number; documentId?: string }): void {
    const full = { frameId: 0, parentFrameId: -1, processId: 1, timeStamp: Date.now(), documentLifecycle: "active", frameType: "outermost_frame", transitionType: "link", transitionQualifiers: [], ...d };
    (this.on.webNavigation[name] as unknown as FakeEvent<{ addListener(cb: (d: typeof full) => void): void }>).fire(full);
  }

  /** Adds a tab to the model (no event: the test fires what its scene needs). */
  addTab(p: Partial<FakeTab> & { windowId?: number } = {}): number {
    const id = p.id ?? this.nextTab++;
    const windowId = p.windowId ?? 1;
    const index = p.index ?? [...this.tabs.values()].filter((t) => t.windowId === windowId).length;
    const url = p.url ?? PAGE;
    this.tabs.set(id, { title: url, active: false, ...p, id, windowId, index, url });
    return id;
  }

  /** Replaces every tab (in the browser's order). */
  setTabs(list: FakeTab[]): void {
    this.tabs.clear();
    for (const t of list) this.tabs.set(t.id, t);
  }

  /** The tab goes now, as when the person or a page closes it: onRemoved fires. */
  closeTab(id: number): void {
    const t = this.tabs.get(id);
    this.tabs.delete(id);
    this.held.delete(id);
    this.on.tabs.onRemoved.fire(id, { windowId: t?.windowId ?? 1, isWindowClosing: false });
  }

  /** The window goes (its tabs are not modelled as going with it): onRemoved fires. */
  closeWindow(id: number): void {
    this.windows.delete(id);
    this.on.windows.onRemoved.fire(id);
  }

  private tab(id: number): FakeTab {
    const t = this.tabs.get(id);
    if (!t) throw new Error(`No tab with id: ${id}`);
    return t;
  }

  private dialogEvent(tabId: number, method: string, params: Record<string, unknown>): void {
    this.on.debugger.onEvent.fire({ tabId }, method, params);
  }

  private activate(id: number): void {
    const t = this.tab(id);
    for (const x of this.tabs.values()) if (x.windowId === t.windowId) x.active = x.id === id;
    this.on.tabs.onActivated.fire({ tabId: id, windowId: t.windowId });
  }

  /** The object installed as globalThis.chrome. */
  readonly chrome = {
    storage: {
      session: {
        get: async (k: string | string[]) => {
          const out: Record<string, unknown> = {};
          for (const key of Array.isArray(k) ? k : [k]) if (key in this.store) out[key] = structuredClone(this.store[key]);
          return out;
        },
        set: async (o: Record<string, unknown>) => void Object.assign(this.store, structuredClone(o)),
        remove: async (k: string | string[]) => {
          for (const key of Array.isArray(k) ? k : [k]) delete this.store[key];
        },
      },
    },
    tabs: {
      ...this.on.tabs,
      query: async (q: { active?: boolean; windowId?: number; lastFocusedWindow?: boolean } = {}) =>
        [...this.tabs.values()].filter(
          (t) =>
            (q.active === undefined || t.active === q.active) &&
            (q.windowId === undefined || t.windowId === q.windowId) &&
            (!q.lastFocusedWindow || t.windowId === this.focused),
        ),
      get: async (id: number) => this.tab(id),
      create: async (p: { windowId?: number; url?: string; active?: boolean }) => {
        if (p.windowId !== undefined && !this.windows.has(p.windowId)) throw new Error(`No window with id: ${p.windowId}`);
        return this.tab(this.addTab({ windowId: p.windowId ?? 1, url: p.url ?? "about:blank", active: p.active ?? true }));
      },
      update: async (id: number, p: { active?: boolean }) => {
        if (p.active) this.activate(id);
        return this.tab(id);
      },
      // Like Chrome: the promise may settle before the tab is gone, or never while a prompt holds it.
      remove: (id: number) => {
        if (!this.tabs.has(id)) return Promise.reject(new Error(`No tab with id: ${id}`));
        if (this.prompts.has(id)) {
          this.held.add(id);
          setTimeout(() => this.dialogEvent(id, "Page.javascriptDialogOpening", { type: "beforeunload", message: "", url: this.tabs.get(id)?.url ?? PAGE }), 5);
          return new Promise<void>(() => undefined);
        }
        setTimeout(() => this.tabs.has(id) && this.closeTab(id), this.removeDelayMs);
        return Promise.resolve();
      },
    },
    windows: {
      ...this.on.windows,
      WINDOW_ID_NONE: -1,
      getAll: async () => [...this.windows].map((id) => ({ id })),
      get: async (id: number) => {
        if (!this.windows.has(id)) throw new Error(`No window with id: ${id}`);
        return { id };
      },
      create: async () => {
        const id = this.nextWin++;
        this.windows.add(id);
        return { id, tabs: [this.tab(this.addTab({ windowId: id, url: "about:blank", active: true }))] };
      },
      update: async (id: number) => ({ id }),
      getLastFocused: async () => ({ id: this.focused, focused: true }),
    },
    webNavigation: {
      ...this.on.webNavigation,
      getFrame: async (f: { tabId: number }) => ({ documentId: this.docs.get(f.tabId) ?? "doc" }),
    },
    debugger: {
      ...this.on.debugger,
      attach: async ({ tabId }: { tabId: number }) => void this.tab(tabId),
      detach: async () => undefined,
      sendCommand: async ({ tabId }: { tabId: number }, method: string, params: { accept?: boolean } = {}) => {
        if (method === "Page.addScriptToEvaluateOnNewDocument") return { identifier: "1" };
        if (method === "Page.handleJavaScriptDialog") {
          this.dialogEvent(tabId, "Page.javascriptDialogClosed", { result: params.accept });
          if (this.held.delete(tabId) && params.accept) setTimeout(() => this.tabs.has(tabId) && this.closeTab(tabId), 10);
        }
        return {};
      },
    },
  };
}

/** A new fake browser, installed as globalThis.chrome (before the code under test is imported). */
export function installFakeChrome(): FakeBrowser {
  const b = new FakeBrowser();
  (globalThis as { chrome?: unknown }).chrome = b.chrome;
  return b;
}
