// The ownership decision on every call (SECURITY I-24): which tab a call may name, which tabs
// `tabs` lists and the result reports. Reads the state and the grants; changes neither, beyond
// recording the session's last used tab.

import type { Traits } from "../traits.js";
import type { CallToolResult } from "../errors.js";
import { toolError } from "../errors.js";
import { selfOp } from "./attribution.js";
import { docIdOf, grantFor, inGrantedWindow, originOf, windowGrantCovering, windowGrantOf } from "./grants.js";
import { ANONYMOUS, load, ownerOf, ownershipOn, save, st, touch, type OwnerRec, type Scope, type SessionRef } from "./state.js";

interface OwnershipCall {
  tool: { name: string; readOnly: boolean; traits: Pick<Traits, "target" | "reads" | "switch" | "anyEffect"> };
  args: Record<string, unknown>;
}

/**
 * SECURITY I-24: the ownership check of the gate. Fills in args.tabId with the session's own
 * default tab when the call names none (never the person's active tab), and refuses any tab that
 * is not the session's own or granted to it. Without installOwnership (unit tests) it does nothing.
 */
export async function checkOwnership(call: OwnershipCall, owner: SessionRef | undefined): Promise<{ current?: true }> {
  if (!ownershipOn()) return {};
  await load();
  const s = owner ?? ANONYMOUS;
  touch(s);
  const tr = call.tool.traits;
  if (tr.target === "none") return {};
  if (tr.target === "tab-or-new" && call.args.tabId === undefined) {
    // SECURITY I-87: a call that may open a tab moves the session's current tab instead, only ever
    // one the session owns; without one (or asked for newTab) it opens a new tab.
    const cur = call.args.newTab === true ? undefined : await currentTab(s);
    if (cur === undefined) return {};
    call.args.tabId = cur;
    (ownerOf(cur) as OwnerRec).used = Date.now();
    st.last[s.id] = cur;
    save();
    return { current: true };
  }
  let tabId = call.args.tabId as number | undefined;
  if (tabId === undefined) {
    tabId = st.last[s.id];
    if (tabId === undefined || !(await usable(s, tabId))) {
      throw toolError("no_tab", "this session has no tab yet", "Call navigate with a url to open one, or tabs to list yours.");
    }
    call.args.tabId = tabId;
  }
  const rec = ownerOf(tabId);
  if (rec?.session === s.id) {
    rec.used = Date.now();
    st.last[s.id] = tabId;
    save();
    if (tr.reads === "pixels") await showInOwnWindow(tabId);
    return {};
  }
  // Code execution (a page function's call included, SECURITY I-71) needs the evaluate scope, any
  // other effect write, a read read.
  const need: Scope = tr.switch === "evaluate" || tr.switch === "fetch" || tr.anyEffect ? "evaluate" : call.tool.readOnly ? "read" : "write";
  // SECURITY I-29: a tab now in the agent's room window, within the access the person set there.
  const w = await windowGrantCovering(s, tabId);
  if (w?.scopes.includes(need)) {
    st.last[s.id] = tabId;
    save();
    return {};
  }
  const g = grantFor(tabId, s.id);
  if (!g && w) {
    throw toolError("tab_not_owned", `the person gave this agent ${w.scopes.join("+")} access to its window's tabs, not ${need}`, "Ask the person to widen this agent's browser access in the Torii side panel; nothing was sent.");
  }
  if (!g) {
    if (st.closed[s.id]?.includes(tabId)) throw toolError("no_tab", `tab ${tabId} was closed`);
    throw notOwned(tabId);
  }
  if (!g.scopes.includes(need)) throw toolError("tab_not_owned", `the person granted this session ${g.scopes.join("+")} on tab ${tabId}, not ${need}`, "Ask the person to widen the grant in the Torii popup; nothing was sent.");
  // SECURITY I-28: a grant is bound to its origin and document; neither silently retargets.
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (!t) throw notOwned(tabId);
  if (originOf(t.url ?? t.pendingUrl ?? "") !== g.origin) {
    throw toolError("origin_changed", `granted tab ${tabId} is no longer on the origin it was granted for; nothing was sent or read`);
  }
  const doc = await docIdOf(tabId);
  if (g.docId && doc && doc !== g.docId) {
    throw toolError("stale_document", `granted tab ${tabId} shows another document than the one granted (reloaded?); nothing was sent or read`);
  }
  st.last[s.id] = tabId;
  save();
  return {};
}

/**
 * SECURITY I-87: the tab `navigate` without tabId moves: the session's last used tab when it is one
 * of its own, else the own tab it used most recently. Only a tab the session owns (never a tab the
 * person granted, one of a room's window or another session's), still open, not looked at by the
 * person (I-46: they took it back) and still in the window the session's tabs open in (the person
 * did not move it into a window of theirs). None: a new tab opens.
 */
export async function currentTab(s: SessionRef): Promise<number | undefined> {
  const last = st.last[s.id];
  const mine = Object.entries(st.owners)
    .filter(([, r]) => r.session === s.id && !r.looked)
    .map(([k, r]) => ({ tabId: Number(k), used: Number(k) === last ? Infinity : r.used }))
    .sort((a, b) => b.used - a.used);
  const home = [st.sessions[s.id]?.window, windowGrantOf(s)?.windowId];
  for (const { tabId } of mine) {
    const t = await chrome.tabs.get(tabId).catch(() => undefined);
    if (t && home.includes(t.windowId)) return tabId;
  }
  return undefined;
}

function notOwned(tabId: number) {
  // The same words for another session's tab, the person's tab and a tab that does not exist.
  return toolError("tab_not_owned", `tab ${tabId} is not one of this session's tabs`);
}

async function usable(s: SessionRef, tabId: number): Promise<boolean> {
  if (ownerOf(tabId)?.session !== s.id && !grantFor(tabId, s.id) && !(await windowGrantCovering(s, tabId))) return false;
  return (await chrome.tabs.get(tabId).catch(() => undefined)) !== undefined;
}

/** Makes an agent tab the active one of its own (unfocused) window, so CDP captures render it. */
async function showInOwnWindow(tabId: number): Promise<void> {
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (t && !t.active) await selfOp(() => chrome.tabs.update(tabId, { active: true })).catch(() => undefined);
}

/**
 * The session's tabs now: owned and granted, for the result's `_meta.torii.tabs`. Tabs reached
 * through a window grant are left out: they stay the person's, shared by the room's agents, and
 * the daemon would otherwise refuse them to the room's other agents as held (I-24).
 */
function visibleTabs(owner: SessionRef | undefined): Set<number> {
  const s = owner ?? ANONYMOUS;
  const out = new Set<number>();
  for (const [k, r] of Object.entries(st.owners)) if (r.session === s.id) out.add(Number(k));
  const now = Date.now();
  for (const g of st.grants) if (g.sessionId === s.id && g.expiresAt > now) out.add(g.tabId);
  return out;
}

/** `tabs` lists only the session's own, granted and window-granted tabs (every tab in unit tests). */
export function ownedOnly<T extends { id?: number; windowId?: number; url?: string; pendingUrl?: string }>(all: T[], owner: SessionRef | undefined): T[] {
  if (!ownershipOn()) return all;
  const mine = visibleTabs(owner);
  const s = owner ?? ANONYMOUS;
  const w = windowGrantOf(s);
  return all.filter((t) => t.id !== undefined && (mine.has(t.id) || (w !== undefined && inGrantedWindow(w, s, t))));
}

/** True when the tab is an agent tab (it closes without a beforeunload prompt: closeAgentTab). */
export function isAgentTab(tabId: number): boolean {
  return ownershipOn() && ownerOf(tabId) !== undefined;
}

/**
 * After a call: a granted tab the agent moved within the same origin keeps its grant on the new
 * document (the agent did it); and the result carries the session's tabs for the daemon's status.
 */
export async function afterCall(r: CallToolResult, owner: SessionRef | undefined, tabId: number | undefined): Promise<CallToolResult> {
  if (!ownershipOn()) return r;
  const s = owner ?? ANONYMOUS;
  if (!r.isError && tabId !== undefined && ownerOf(tabId)?.session !== s.id) {
    const g = grantFor(tabId, s.id);
    const t = g ? await chrome.tabs.get(tabId).catch(() => undefined) : undefined;
    if (g && t && originOf(t.url ?? "") === g.origin) {
      const d = await docIdOf(tabId);
      if (d) g.docId = d;
      save();
    }
  }
  return { ...r, _meta: { ...r._meta, torii: { tabs: [...visibleTabs(owner)].sort((a, b) => a - b) } } };
}
