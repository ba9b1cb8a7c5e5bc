// Agent tabs leave quietly: a page in a tab the person never looked at cannot hold a navigation or
// a close with a beforeunload prompt put in front of the person (SECURITY I-46 decides "looked").
// A capture-phase beforeunload listener registered before the page's own, in the page's world,
// stops every later listener (including onbeforeunload), so leaving the page asks nothing. The
// person's own tabs, and agent tabs the person looked at, never get it.

import { attach, cdp } from "../../cdp/debugger.js";
import { ownerOf } from "./state.js";

const QUIET_FLAG = "__toriiQuietUnload";
const QUIET_SRC = `(()=>{const k=${JSON.stringify(QUIET_FLAG)};if(globalThis[k]!==undefined)return;globalThis[k]=true;addEventListener("beforeunload",(e)=>{if(globalThis[k]===true)e.stopImmediatePropagation();},true);})()`;
const quietScripts = new Map<number, string>();

/** Quiets an agent tab's beforeunload, now and on every document it loads; not one the person looked at. */
export async function quiet(tabId: number): Promise<void> {
  const r = ownerOf(tabId);
  if (!r || r.looked) return;
  try {
    await attach(tabId, 3_000);
    if (!quietScripts.has(tabId)) {
      const x = await cdp<{ identifier: string }>(tabId, "Page.addScriptToEvaluateOnNewDocument", { source: QUIET_SRC }, 3_000);
      quietScripts.set(tabId, x.identifier);
    }
    await cdp(tabId, "Runtime.evaluate", { expression: QUIET_SRC }, 3_000);
  } catch {
    // best effort: a page that cannot be scripted has no beforeunload to fear either
  }
}

/** The person looked at the tab: its page's prompts are its own again. */
export async function unquiet(tabId: number): Promise<void> {
  const id = quietScripts.get(tabId);
  quietScripts.delete(tabId);
  try {
    if (id) await cdp(tabId, "Page.removeScriptToEvaluateOnNewDocument", { identifier: id }, 3_000);
    await cdp(tabId, "Runtime.evaluate", { expression: `globalThis[${JSON.stringify(QUIET_FLAG)}]=false` }, 3_000);
  } catch {
    // detached: nothing registered any more
  }
}

/** The tab is gone: its script went with it. */
export function dropQuiet(tabId: number): void {
  quietScripts.delete(tabId);
}
