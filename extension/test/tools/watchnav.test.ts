// The navigation watch against a new tab's initial blank document, whose commit and load can
// reach the worker after the watch started (a loaded machine): they must neither end nor fail the
// wait for a navigation to a page, so the landing check never judges that blank document.
import { beforeAll, describe, expect, it } from "vitest";

type L = (d: Record<string, unknown>) => void;
const listeners: Record<string, L[]> = {};
const ev = (name: string) => ({ addListener: (f: L) => (listeners[name] ??= []).push(f) });
const fire = (name: string, d: Record<string, unknown>) => {
  for (const f of listeners[name] ?? []) f(d);
};

beforeAll(() => {
  (globalThis as { chrome?: unknown }).chrome = {
    webNavigation: {
      onBeforeNavigate: ev("before"),
      onCommitted: ev("committed"),
      onCompleted: ev("completed"),
      onHistoryStateUpdated: ev("history"),
      onReferenceFragmentUpdated: ev("fragment"),
      onErrorOccurred: ev("error"),
    },
    tabs: { onRemoved: ev("removed") },
  };
});

async function settled(p: Promise<unknown>): Promise<string> {
  return Promise.race([p.then(() => "resolved", () => "rejected"), new Promise<string>((r) => setTimeout(() => r("pending"), 20))]);
}

describe("watchNav", () => {
  it("a navigation to a page: the initial blank's late commit, load and abort are not its end", async () => {
    const { installBrowser, watchNav } = await import("../../src/tools/browser.js");
    installBrowser();
    const w = watchNav(7, { toPage: true });
    fire("committed", { tabId: 7, frameId: 0, url: "about:blank" });
    fire("completed", { tabId: 7, frameId: 0, url: "about:blank" });
    fire("error", { tabId: 7, frameId: 0, url: "about:blank", error: "net::ERR_ABORTED" });
    expect(await settled(w.done)).toBe("pending");
    expect(w.committed()).toBe(false);
    fire("committed", { tabId: 7, frameId: 0, url: "http://127.0.0.1:1/p.html" });
    fire("completed", { tabId: 7, frameId: 0, url: "http://127.0.0.1:1/p.html" });
    await expect(w.done).resolves.toEqual({ url: "http://127.0.0.1:1/p.html", sameDocument: false });
  });

  it("without toPage (a blank destination) the blank's load ends the wait as before", async () => {
    const { watchNav } = await import("../../src/tools/browser.js");
    const w = watchNav(8);
    fire("committed", { tabId: 8, frameId: 0, url: "about:blank" });
    fire("completed", { tabId: 8, frameId: 0, url: "about:blank" });
    await expect(w.done).resolves.toEqual({ url: "about:blank", sameDocument: false });
  });
});
