// The navigation watch against a new tab's initial blank document, whose commit and load can
// reach the worker after the watch started (a loaded machine): they must neither end nor fail the
// wait for a navigation to a page, so the landing check never judges that blank document.
import { describe, expect, it } from "vitest";
import { installFakeChrome } from "../fake-chrome.js";

const b = installFakeChrome();
// A watch settles once: when it settles with the page's own load, after the events that must not
// end it, those events did not.

describe("watchNav", () => {
  it("a navigation to a page: the initial blank's late commit, load and abort are not its end", async () => {
    const { installBrowser, watchNav } = await import("../../src/tools/browser.js");
    installBrowser();
    const w = watchNav(7, { toPage: true });
    b.fireNav("onCommitted", { tabId: 7, url: "about:blank" });
    b.fireNav("onCompleted", { tabId: 7, url: "about:blank" });
    b.fireNav("onErrorOccurred", { tabId: 7, url: "about:blank", error: "net::ERR_ABORTED" });
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

  it("events the browser raised before the watch started are not the watched navigation's", async () => {
    const { watchNav } = await import("../../src/tools/browser.js");
    const w = watchNav(9);
    const before = Date.now() - 50;
    // An earlier load of the page, delivered late to the worker.
    b.fireNav("onBeforeNavigate", { tabId: 9, url: "http://127.0.0.1:1/a.html", timeStamp: before });
    b.fireNav("onCommitted", { tabId: 9, url: "http://127.0.0.1:1/a.html", timeStamp: before });
    b.fireNav("onCompleted", { tabId: 9, url: "http://127.0.0.1:1/a.html", timeStamp: before });
    expect(w.started()).toBe(false);
    expect(w.left()).toBe(false);
    b.fireNav("onCommitted", { tabId: 9, url: "http://127.0.0.1:1/c.html" });
    b.fireNav("onCompleted", { tabId: 9, url: "http://127.0.0.1:1/c.html" });
    await expect(w.done).resolves.toEqual({ url: "http://127.0.0.1:1/c.html", sameDocument: false });
  });

  it("a navigation that committed and finished before anyone looked still says the tab left", async () => {
    const { watchNav } = await import("../../src/tools/browser.js");
    const w = watchNav(10);
    b.fireNav("onBeforeNavigate", { tabId: 10, url: "http://127.0.0.1:1/b.html" });
    b.fireNav("onCommitted", { tabId: 10, url: "http://127.0.0.1:1/b.html" });
    b.fireNav("onCompleted", { tabId: 10, url: "http://127.0.0.1:1/b.html" });
    await expect(w.done).resolves.toEqual({ url: "http://127.0.0.1:1/b.html", sameDocument: false });
    expect(w.finished()).toBe(true);
    expect(w.left()).toBe(true);
  });

  it("a same-document navigation finishes the watch but is not leaving", async () => {
    const { watchNav } = await import("../../src/tools/browser.js");
    const w = watchNav(11);
    b.fireNav("onReferenceFragmentUpdated", { tabId: 11, url: "http://127.0.0.1:1/b.html#x" });
    await expect(w.done).resolves.toEqual({ url: "http://127.0.0.1:1/b.html#x", sameDocument: true });
    expect(w.left()).toBe(false);
  });

  it("the previous page's own load, aborted by the navigation, is not the navigation's failure", async () => {
    const { watchNav } = await import("../../src/tools/browser.js");
    // A page still loading (it committed, its body never ends) when the next navigation begins.
    const w = watchNav(12, { toPage: true, from: { documentId: "doc-slow", url: "http://127.0.0.1:1/slow" } });
    b.fireNav("onBeforeNavigate", { tabId: 12, url: "http://127.0.0.1:1/next.html" });
    b.fireNav("onErrorOccurred", { tabId: 12, url: "http://127.0.0.1:1/slow", error: "net::ERR_ABORTED", documentId: "doc-slow" });
    b.fireNav("onCommitted", { tabId: 12, url: "http://127.0.0.1:1/next.html", documentId: "doc-next" });
    b.fireNav("onCompleted", { tabId: 12, url: "http://127.0.0.1:1/next.html", documentId: "doc-next" });
    await expect(w.done).resolves.toEqual({ url: "http://127.0.0.1:1/next.html", sameDocument: false });
  });

  it("the navigation's own failure still fails it", async () => {
    const { watchNav } = await import("../../src/tools/browser.js");
    const w = watchNav(13, { toPage: true, from: { documentId: "doc-before", url: "http://127.0.0.1:1/before" } });
    b.fireNav("onBeforeNavigate", { tabId: 13, url: "http://127.0.0.1:1/gone" });
    b.fireNav("onErrorOccurred", { tabId: 13, url: "http://127.0.0.1:1/gone", error: "net::ERR_CONNECTION_REFUSED" });
    await expect(w.done).rejects.toThrow(/ERR_CONNECTION_REFUSED/);
    // Aborted before it committed: the browser may name the document the tab still shows.
    const v = watchNav(14, { toPage: true, from: { documentId: "doc-blank", url: "about:blank" } });
    b.fireNav("onBeforeNavigate", { tabId: 14, url: "http://127.0.0.1:1/p.html" });
    b.fireNav("onErrorOccurred", { tabId: 14, url: "http://127.0.0.1:1/p.html", error: "net::ERR_ABORTED", documentId: "doc-blank" });
    await expect(v.done).rejects.toThrow(/ERR_ABORTED/);
  });
});
