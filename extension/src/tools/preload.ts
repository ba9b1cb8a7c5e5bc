// The page engine put into an agent tab's documents as they commit, while they load. The first
// page request of a call on a new document otherwise pays, on its path, for the extension's isolated
// world in that document and for compiling the engine (about 30 ms measured on a small page, more
// than the request itself). Only documents an agent may read get it: its own tabs, on origins the
// person allows; the engine does nothing until a call names the document's origin (SECURITY I-40).

import { judgeUrl, type Policy } from "../policy/policy.js";
import { ENGINE_FILE } from "./browser.js";
import { isAgentTab } from "./ownership/check.js";

let installed = false;

export function installPreload(policy: () => Promise<Policy>): void {
  if (installed) return;
  installed = true;
  chrome.webNavigation.onCommitted.addListener((d) => {
    // A blank or srcdoc document inherits its origin: it gets the engine when a call reads it.
    if (!isAgentTab(d.tabId) || !/^https?:/i.test(d.url)) return;
    void policy()
      .then((p) => {
        if (!judgeUrl(p, d.url).allowed) return;
        return chrome.scripting.executeScript({ target: { tabId: d.tabId, frameIds: [d.frameId] }, world: "ISOLATED", files: [ENGINE_FILE], injectImmediately: true });
      })
      // The document may already be gone; a call injects the engine itself when it is missing.
      .catch(() => undefined);
  });
}
