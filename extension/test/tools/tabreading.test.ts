// The gate's reading of a call's tab: taken from the browser, then remembered until the tab's top
// frame has any event (a navigation starting, committing, completing, a same-document URL change,
// the tab going), so a call on an unchanged page does not ask the browser again; a landing check
// after a navigation leaves its reading for the next call's gate the same way.
import { beforeAll, describe, expect, it } from "vitest";
import { installFakeChrome } from "../fake-chrome.js";
import { defaultPolicy, type Policy } from "../../src/policy/policy.js";

const b = installFakeChrome();
const A = "http://127.0.0.1:1";
let gets = 0;
const get = b.chrome.tabs.get;
b.chrome.tabs.get = async (id: number) => {
  gets++;
  return get(id);
};

let O: typeof import("../../src/tools/origin.js");
let tab: (id: number) => Promise<{ tabId: number; url: string }>;

beforeAll(async () => {
  const B = await import("../../src/tools/browser.js");
  B.installBrowser();
  O = await import("../../src/tools/origin.js");
  const policy: Policy = { ...defaultPolicy(), rules: [{ pattern: "127.0.0.1:1" }] } as Policy;
  O.installOrigin(async () => policy);
  const { policyEnv } = await import("../../src/tools/safety.js");
  tab = (id) => policyEnv.tab(id) as Promise<{ tabId: number; url: string }>;
});

describe("the gate's reading of the tab", () => {
  it("is asked of the browser once, then again only after an event of the tab's top frame", async () => {
    const id = b.addTab({ url: `${A}/one.html` });
    gets = 0;
    expect(await tab(id)).toEqual({ tabId: id, url: `${A}/one.html` });
    expect(await tab(id)).toEqual({ tabId: id, url: `${A}/one.html` });
    expect(gets).toBe(1);
    // A subframe's event changes nothing of the top document.
    b.fireNav("onCommitted", { tabId: id, frameId: 3, url: `${A}/frame.html` });
    await tab(id);
    expect(gets).toBe(1);
    for (const [ev, url] of [["onBeforeNavigate", `${A}/two.html`], ["onCommitted", `${A}/two.html`], ["onCompleted", `${A}/two.html`], ["onHistoryStateUpdated", `${A}/two.html?x`], ["onReferenceFragmentUpdated", `${A}/two.html?x#y`], ["onErrorOccurred", `${A}/two.html?x#y`]] as const) {
      b.tabs.get(id)!.url = url;
      b.fireNav(ev, { tabId: id, url });
      const before = gets;
      expect(await tab(id), ev).toEqual({ tabId: id, url });
      expect(gets, ev).toBe(before + 1);
    }
  });

  it("a tab that went is asked again (and is gone)", async () => {
    const id = b.addTab({ url: `${A}/one.html` });
    await tab(id);
    b.closeTab(id);
    await expect(tab(id)).rejects.toMatchObject({ code: "no_tab" });
  });

  it("a landing check's reading serves the next gate; a blank top document's is not kept", async () => {
    const id = b.addTab({ url: `${A}/one.html` });
    b.fireNav("onCompleted", { tabId: id, url: `${A}/one.html` });
    gets = 0;
    expect(await O.judgeLanding(id)).toMatchObject({ url: `${A}/one.html` });
    expect(await tab(id)).toEqual({ tabId: id, url: `${A}/one.html` });
    expect(gets).toBe(1);
    b.tabs.get(id)!.url = "about:blank";
    b.fireNav("onCommitted", { tabId: id, url: "about:blank" });
    await O.judgeLanding(id).catch(() => undefined);
    const before = gets;
    await tab(id).catch(() => undefined);
    expect(gets).toBeGreaterThan(before);
  });

  it("a URL change the browser reports only on the tab (a prerendered page activated, a tab replaced) is read again", async () => {
    const id = b.addTab({ url: `${A}/one.html` });
    await tab(id);
    b.tabs.get(id)!.url = "http://127.0.0.1:2/off-list.html";
    b.on.tabs.onUpdated.fire(id, { url: "http://127.0.0.1:2/off-list.html" }, b.tabs.get(id) as never);
    const before = gets;
    expect(await tab(id)).toEqual({ tabId: id, url: "http://127.0.0.1:2/off-list.html" });
    expect(gets).toBe(before + 1);
    await tab(id);
    b.on.tabs.onReplaced.fire(id, 999);
    await tab(id);
    expect(gets).toBe(before + 2);
  });
});
