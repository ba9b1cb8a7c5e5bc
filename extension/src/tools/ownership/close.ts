// Closing agent tabs. Ownership of a tab ends only when Chrome reports it gone: a close a
// beforeunload prompt holds (a tab the person looked at keeps its prompts, SECURITY I-46), or one
// Chrome has not finished, leaves the tab owned and is reported as such, never as closed.

import { CLOSE_MS, removeAndWatch, type CloseOutcome } from "../tabclose.js";
import { selfOp } from "./attribution.js";
import { dropQuiet, quiet } from "./quiet.js";
import { load, ownerOf, save, st } from "./state.js";

/**
 * Closes an agent tab without a beforeunload prompt (unless the person looked at it) and watches
 * it go (removeAndWatch). Rejects only when Chrome refuses the removal.
 */
export async function closeAgentTab(tabId: number, signal?: AbortSignal): Promise<CloseOutcome> {
  await load();
  await quiet(tabId);
  // Chrome activates a neighbour as the tab goes: that is not the person looking at it.
  const out = await selfOp(() => removeAndWatch(tabId, signal));
  if ("removed" in out) forget(tabId);
  return out;
}

/** A tab a close left open, and why (in words for the person or the agent). */
export interface Stayed {
  tabId: number;
  why: string;
  /** A beforeunload prompt holds it. */
  prompt?: true;
}

/** What closing several tabs did (the popup's close-all answer): the tabs that went, those that stayed. */
export interface CloseReport {
  closed: number[];
  stayed: Stayed[];
}

/** Closes agent tabs one after another; never throws: each tab is closed, or said to have stayed. */
export async function closeAgentTabs(tabIds: number[]): Promise<CloseReport> {
  const closed: number[] = [];
  const stayed: Stayed[] = [];
  for (const tabId of tabIds) {
    let out: CloseOutcome;
    try {
      out = await closeAgentTab(tabId);
    } catch (e) {
      if (!(await chrome.tabs.get(tabId).then(() => true, () => false))) {
        // Already gone (Chrome said no such tab): its record goes with it.
        forget(tabId);
        closed.push(tabId);
      } else {
        stayed.push({ tabId, why: `Chrome refused to close it (${e instanceof Error ? e.message : String(e)})` });
      }
      continue;
    }
    if ("removed" in out) closed.push(tabId);
    else if ("dialog" in out) stayed.push({ tabId, prompt: true, why: "its page asks before it is left (a leave-page prompt is open on it)" });
    else stayed.push({ tabId, why: `it had not closed after ${CLOSE_MS / 1000}s` });
  }
  return { closed, stayed };
}

export async function closeSessionTabs(sessionId: string): Promise<CloseReport> {
  await load();
  const mine = Object.entries(st.owners).filter(([, r]) => r.session === sessionId).map(([k]) => Number(k));
  return closeAgentTabs(mine);
}

/** SECURITY I-26: a removed tab's records go at once (a later call on it says no_tab). */
export function forget(tabId: number): void {
  const r = ownerOf(tabId);
  if (r) {
    const c = (st.closed[r.session] ??= []);
    c.push(tabId);
    if (c.length > 64) c.splice(0, c.length - 64);
    delete st.owners[String(tabId)];
  }
  dropQuiet(tabId);
  st.grants = st.grants.filter((g) => g.tabId !== tabId);
  save();
}
