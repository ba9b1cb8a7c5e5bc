// The tab list `tabs` answers from: asked of the browser once, then kept by Chrome's events; any
// change the events do not describe exactly, or one that comes while the browser is being asked,
// makes the next listing ask again.
import { beforeAll, describe, expect, it, vi } from "vitest";

import { installFakeChrome, type FakeTab } from "../fake-chrome.js";

const tab = (id: number, windowId: number, index: number, url: string, active = false): FakeTab => ({ id, windowId, index, url, active, title: url });

const b = installFakeChrome();
const query = vi.spyOn(b.chrome.tabs, "query");
const ask = vi.fn(() => b.chrome.tabs.query({}) as Promise<chrome.tabs.Tab[]>);
/** The browser's tabs now, listed without the listing's own question counting. */
const browser = () => [...b.tabs.values()];

let allTabs: typeof import("../../src/tools/tabmodel.js").allTabs;

beforeAll(async () => {
  ({ allTabs } = await import("../../src/tools/tabmodel.js"));
});

describe("the tab model", () => {
  it("asks once, then follows updates, activations and removals without asking", async () => {
    b.setTabs([tab(1, 10, 0, "https://a.example/", true), tab(2, 10, 1, "https://b.example/"), tab(3, 20, 0, "https://c.example/", true)]);
    b.focused = 10;
    const first = await allTabs(ask);
    expect(first.tabs.map((t) => t.id)).toEqual([1, 2, 3]);
    expect(first.focused).toBe(1);
    expect(ask).toHaveBeenCalledTimes(1);

    b.on.tabs.onUpdated.fire(2, { url: "https://b.example/next" }, tab(2, 10, 1, "https://b.example/next") as chrome.tabs.Tab);
    b.on.tabs.onActivated.fire({ tabId: 2, windowId: 10 });
    b.on.windows.onFocusChanged.fire(20);
    b.on.tabs.onRemoved.fire(3, { windowId: 20, isWindowClosing: false });
    const now = await allTabs(ask);
    expect(ask).toHaveBeenCalledTimes(1);
    expect(now.tabs.map((t) => [t.id, t.url, t.active])).toEqual([
      [1, "https://a.example/", false],
      [2, "https://b.example/next", true],
    ]);
    // The focused window has no tab left: nothing is focused.
    expect(now.focused).toBeUndefined();
    b.on.windows.onFocusChanged.fire(-1); // the browser lost focus: the last focused window stays
    b.on.windows.onFocusChanged.fire(10);
    expect((await allTabs(ask)).focused).toBe(2);
  });

  it("a created, moved, attached, detached or replaced tab makes the next listing ask again", async () => {
    for (const e of ["onCreated", "onMoved", "onAttached", "onDetached", "onReplaced"] as const) {
      await allTabs(ask);
      const n = ask.mock.calls.length;
      b.setTabs([...browser().filter((t) => t.id !== 9), tab(9, 10, 2, `https://new.example/${e}`)]);
      // Only that one happened: the model must not trust its list (the arguments are not read).
      (b.on.tabs[e] as { fire(...a: unknown[]): void }).fire(9);
      const r = await allTabs(ask);
      expect(ask.mock.calls.length, e).toBe(n + 1);
      expect(r.tabs.find((t) => t.id === 9)?.url, e).toBe(`https://new.example/${e}`);
      expect((await allTabs(ask)) && ask.mock.calls.length, `${e}: then kept again`).toBe(n + 1);
    }
  });

  it("a change while the browser is being asked is not lost: the next listing asks again", async () => {
    b.on.tabs.onCreated.fire(tab(11, 10, 3, "https://x.example/") as chrome.tabs.Tab);
    let release!: () => void;
    const slow = vi.fn(async () => {
      const answer = browser() as chrome.tabs.Tab[];
      await new Promise<void>((r) => (release = r));
      return answer;
    });
    const pending = allTabs(slow);
    await vi.waitFor(() => expect(slow).toHaveBeenCalled());
    // The page in tab 9 moves on while the answer (taken before) is on its way.
    b.setTabs(browser().map((t) => (t.id === 9 ? tab(9, 10, 2, "https://new.example/later") : t)));
    b.on.tabs.onUpdated.fire(9, { url: "https://new.example/later" }, tab(9, 10, 2, "https://new.example/later") as chrome.tabs.Tab);
    release();
    await pending;
    const n = ask.mock.calls.length;
    const next = await allTabs(ask);
    expect(ask.mock.calls.length).toBe(n + 1);
    expect(next.tabs.find((t) => t.id === 9)?.url).toBe("https://new.example/later");
  });

  it("a browser with no focused window (headless) is asked once, not on every listing", async () => {
    vi.resetModules();
    const fresh = (await import("../../src/tools/tabmodel.js")).allTabs;
    b.setTabs([tab(1, 10, 0, "https://a.example/")]); // nothing active: the focus question finds no tab
    const n = ask.mock.calls.length;
    const q = query.mock.calls.length;
    expect((await fresh(ask)).focused).toBeUndefined();
    expect((await fresh(ask)).focused).toBeUndefined();
    expect(ask.mock.calls.length - n).toBe(1);
    expect(query.mock.calls.length - q).toBe(2); // the listing and the focus question, once
  });
});
