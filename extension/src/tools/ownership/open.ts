// Opening agent tabs: in the session's own unfocused window (created on first use, sized to the
// launch's viewport: background/viewport.ts), or, for a side-panel agent the person lets act, in
// the background of its room's window (SECURITY I-29).
// The tab is owned from the moment it exists and leaves quietly (quiet.ts).

import { fitAgentWindow } from "../../background/viewport.js";
import { withDeadline } from "../../cdp/deadline.js";
import { toolError } from "../errors.js";
import { selfOp } from "./attribution.js";
import { makeRoom } from "./evict.js";
import { windowGrantOf } from "./grants.js";
import { quiet } from "./quiet.js";
import { ANONYMOUS, DEFAULT_TAB_CAP, load, own, touch, type SessionRef, type SessRec } from "./state.js";

/**
 * Opens an about:blank tab for the session in its own unfocused window (creating the window
 * first), after making room under the tab cap; the caller navigates it.
 */
export async function openAgentTab(owner: SessionRef | undefined, signal?: AbortSignal): Promise<number> {
  await load();
  const s = owner ?? ANONYMOUS;
  const rec = touch(s);
  await makeRoom(s, s.tabCap ?? DEFAULT_TAB_CAP);
  const tab = await selfOp(() => createAgentTab(s, rec, signal));
  if (tab?.id === undefined) throw toolError("internal", "the new tab has no id");
  own(tab.id, s.id, { last: true });
  await quiet(tab.id);
  return tab.id;
}

async function createAgentTab(s: SessionRef, rec: SessRec, signal: AbortSignal | undefined): Promise<chrome.tabs.Tab | undefined> {
  let tab: chrome.tabs.Tab | undefined;
  // SECURITY I-29: an agent the person lets act in its room's window opens its tabs there, in the
  // background (the person's view stays); the window is not made the session's agent window.
  const wg = windowGrantOf(s);
  if (wg?.scopes.includes("write") && (await chrome.windows.get(wg.windowId).catch(() => undefined))) {
    tab = await withDeadline(chrome.tabs.create({ windowId: wg.windowId, url: "about:blank", active: false }), 10_000, "tabs.create", signal);
  }
  if (!tab && rec.window !== undefined) {
    // The window may be closing (its last tab just closed): then a new one is opened below.
    const w = await chrome.windows.get(rec.window).catch(() => undefined);
    if (w) {
      tab = await withDeadline(chrome.tabs.create({ windowId: rec.window, url: "about:blank", active: true }), 10_000, "tabs.create", signal).catch(
        (e: unknown) => {
          if (signal?.aborted) throw e;
          return undefined;
        },
      );
    }
  }
  if (!tab) {
    const w = await withDeadline(chrome.windows.create({ url: "about:blank", focused: false, type: "normal" }), 10_000, "windows.create", signal);
    rec.window = w?.id;
    tab = w?.tabs?.[0];
    // The launch's viewport (`torii launch --window-size`, 1280×720 headless) is the page area's.
    await withDeadline(fitAgentWindow(w?.id), 5_000, "fitting the window", signal).catch(() => undefined);
  }
  return tab;
}
