// The navigation watch against a new tab's initial blank document, whose commit and load can
// reach the worker after the watch started (a loaded machine): they must neither end nor fail the
// wait for a navigation to a page, so the landing check never judges that blank document.
import { describe, expect, it } from "vitest";
import { installFakeChrome } from "../fake-chrome.js";

const b = installFakeChrome();

async function settled(p: Promise<unknown>): Promise<string> {
  return Promise.race([p.then(() => "resolved", () => "rejected"), new Promise<string>((r) => setTimeout(() => r("pending"), 20))]);
}

describe("watchNav", () => {
  it("a navigation to a page: the initial blank's late commit, load and abort are not its end", async () => {
    const { installBrowser, watchNav } = await import("../../src/tools/browser.js");
    installBrowser();
    const w = watchNav(7, { toPage: true });
    b.fireNav("onCommitted", { tabId: 7, url: "about:blank" });
    b.fireNav("onCompleted", { tabId: 7, url: "about:blank" });
    b.fireNav("onErrorOccurred", { tabId: 7, url: "about:blank", error: "net::ERR_ABORTED" });
    expect(await settled(w.done)).toBe("pending");
    expect(w.committed()).toBe(false);
    b.fireNav("onCommitted", { tabId: 7, url: "http://127.0.0.1:1/p.html" });
    b.fireNav("onCompleted", { tabId: 7, url: "http://127.0.0.1:1/p.html" });
    await expect(w.done).resolves.toEqual({ url: "http://127.0.0.1:1/p.html", sameDocument: false });
  });

  it("without toPage (a blank destination) the blank's load ends the wait as before", async () => {
    const { watchNav } = await import("../../src/tools/browser.js");
    const w = watchNav(8);
    b.fireNav("onCommitted", { tabId: 8, url: "about:blank" });
    b.fireNav("onCompleted", { tabId: 8, url: "about:blank" });
    await expect(w.done).resolves.toEqual({ url: "about:blank", sameDocument: false });
  });
});
