// close_tab against a fake browser: "closed" only once Chrome reports the tab removed; a page whose
// beforeunload prompt holds the close is reported with the dialog (the tab stays), and accepting
// that prompt through handle_dialog closes it.
import { beforeAll, describe, expect, it } from "vitest";

type L = (...a: unknown[]) => void;
const listeners: Record<string, L[]> = {};
const ev = (name: string) => ({ addListener: (f: L) => (listeners[name] ??= []).push(f) });
const fire = (name: string, ...a: unknown[]) => {
  for (const f of listeners[name] ?? []) f(...a);
};

const tabs = new Set<number>();
/** Tabs whose page asks before it goes (a beforeunload handler after a gesture). */
const asks = new Set<number>();
const store: Record<string, unknown> = {};

function removed(tabId: number): void {
  tabs.delete(tabId);
  fire("tabs.removed", tabId, { windowId: 1 });
}

beforeAll(async () => {
  (globalThis as { chrome?: unknown }).chrome = {
    storage: {
      session: {
        get: async (k: string) => (k in store ? { [k]: store[k] } : {}),
        set: async (o: Record<string, unknown>) => void Object.assign(store, o),
        remove: async (k: string) => void delete store[k],
      },
    },
    webNavigation: {
      onBeforeNavigate: ev("before"),
      onCommitted: ev("committed"),
      onCompleted: ev("completed"),
      onHistoryStateUpdated: ev("history"),
      onReferenceFragmentUpdated: ev("fragment"),
      onErrorOccurred: ev("error"),
    },
    tabs: {
      onRemoved: ev("tabs.removed"),
      get: async (id: number) => {
        if (!tabs.has(id)) throw new Error(`No tab with id: ${id}`);
        return { id, windowId: 1, url: "http://127.0.0.1:1/p.html", active: true };
      },
      // Like Chrome: the promise may settle before the tab is gone, or never while a prompt holds it.
      remove: (id: number) => {
        if (!tabs.has(id)) return Promise.reject(new Error(`No tab with id: ${id}`));
        if (asks.has(id)) {
          setTimeout(() => fire("debugger.event", { tabId: id }, "Page.javascriptDialogOpening", { type: "beforeunload", message: "", url: "http://127.0.0.1:1/p.html" }), 5);
          return new Promise(() => undefined);
        }
        setTimeout(() => removed(id), 30);
        return Promise.resolve();
      },
    },
    debugger: {
      attach: async () => undefined,
      sendCommand: async ({ tabId }: { tabId: number }, method: string, params: { accept?: boolean }) => {
        if (method === "Page.handleJavaScriptDialog") {
          fire("debugger.event", { tabId }, "Page.javascriptDialogClosed", { result: params.accept });
          if (params.accept) setTimeout(() => removed(tabId), 10);
        }
        return {};
      },
      onEvent: ev("debugger.event"),
      onDetach: ev("debugger.detach"),
    },
  };
  const dbg = await import("../../src/cdp/debugger.js");
  dbg.installDebugger();
  dbg.setDialogJudge(async () => true);
  (await import("../../src/tools/browser.js")).installBrowser();
});

const ctx = () => ({ signal: new AbortController().signal, deadline: Date.now() + 30_000 });

describe("close_tab", () => {
  it("says closed only once Chrome reports the tab removed", async () => {
    const { closeTab } = await import("../../src/tools/tabs.js");
    tabs.add(5);
    let gone = false;
    listeners["tabs.removed"]!.push(() => (gone = true));
    const r = await closeTab.handler({ tabId: 5 }, ctx());
    expect(gone).toBe(true);
    expect(r.data).toMatchObject({ tabId: 5, closed: true });
  });

  it("a beforeunload prompt holds the close: the dialog is reported, the tab stays; accepting it closes the tab", async () => {
    const { closeTab, closeHeld } = await import("../../src/tools/tabs.js");
    const { handleDialog } = await import("../../src/tools/dialog.js");
    const { dialogOf } = await import("../../src/cdp/debugger.js");
    tabs.add(6);
    asks.add(6);
    const r = await closeTab.handler({ tabId: 6 }, ctx());
    expect(r.data).toMatchObject({ tabId: 6, ok: true, closed: false, dialog: { type: "beforeunload" } });
    expect(r.text).not.toMatch(/^closed/);
    expect(r.text).toContain("handle_dialog");
    expect(tabs.has(6)).toBe(true);
    expect(dialogOf(6)?.type).toBe("beforeunload");
    expect(closeHeld(6)).toBe(true);
    const h = await handleDialog.handler({ tabId: 6, accept: true }, ctx());
    expect(h.data).toMatchObject({ tabId: 6, accepted: true, closed: true });
    expect(tabs.has(6)).toBe(false);
    expect(closeHeld(6)).toBe(false);
  });

  it("a prompt answered by someone else releases the held close", async () => {
    const { closeTab, closeHeld } = await import("../../src/tools/tabs.js");
    tabs.add(7);
    asks.add(7);
    await closeTab.handler({ tabId: 7 }, ctx());
    expect(closeHeld(7)).toBe(true);
    fire("debugger.event", { tabId: 7 }, "Page.javascriptDialogClosed", { result: false });
    expect(closeHeld(7)).toBe(false);
  });

  it("a tab that is already gone is no_tab", async () => {
    const { closeTab } = await import("../../src/tools/tabs.js");
    await expect(closeTab.handler({ tabId: 99 }, ctx())).rejects.toMatchObject({ code: "no_tab" });
  });
});
