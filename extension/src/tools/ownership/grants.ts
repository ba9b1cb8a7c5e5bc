// The person's grants: a tab of their own lent to a session from the popup (SECURITY I-27, I-28),
// and a side-panel room's window lent to its agent (SECURITY I-29). Created and revoked only from
// the extension's own pages; check.ts consults them on every call.

import { withDeadline } from "../../cdp/deadline.js";
import { syncGrantGroups } from "./groups.js";
import { load, ownerOf, save, st, type Grant, type Scope, type SessionRef, type WindowGrant } from "./state.js";

/** The session's unexpired grant of tabId; expired grants are dropped on the way. */
export function grantFor(tabId: number, sessionId: string): Grant | undefined {
  const now = Date.now();
  const before = st.grants.length;
  st.grants = st.grants.filter((g) => g.expiresAt > now);
  if (st.grants.length !== before) save();
  return st.grants.find((g) => g.tabId === tabId && g.sessionId === sessionId);
}

export function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.origin === "null" ? url : u.origin;
  } catch {
    return "";
  }
}

export async function docIdOf(tabId: number): Promise<string | undefined> {
  const f = await withDeadline(chrome.webNavigation.getFrame({ tabId, frameId: 0 }), 3_000, "getFrame").catch(() => null);
  return (f as { documentId?: string } | null)?.documentId;
}

/** SECURITY I-27: only the person, from an extension page, creates a grant. */
export async function createGrant(p: { tabId: number; sessionId: string; scopes: Scope[]; minutes: number }): Promise<Grant> {
  await load();
  const s = st.sessions[p.sessionId];
  if (!s) throw new Error("no such session");
  if (ownerOf(p.tabId)) throw new Error("that tab is an agent tab");
  const scopes = [...new Set(p.scopes.filter((x): x is Scope => x === "read" || x === "write" || x === "evaluate"))];
  if (scopes.length === 0) throw new Error("pick at least one scope");
  const minutes = Math.min(Math.max(1, Math.floor(p.minutes)), 24 * 60);
  const t = await chrome.tabs.get(p.tabId);
  const origin = originOf(t.url ?? "");
  if (!/^https?:/.test(origin)) throw new Error("only http(s) pages can be granted");
  const docId = await docIdOf(p.tabId);
  const g: Grant = {
    id: crypto.randomUUID(),
    tabId: p.tabId,
    sessionId: s.id,
    label: s.label,
    scopes,
    origin,
    ...(docId ? { docId } : {}),
    createdAt: Date.now(),
    expiresAt: Date.now() + minutes * 60_000,
  };
  st.grants = st.grants.filter((x) => !(x.tabId === g.tabId && x.sessionId === g.sessionId)).concat(g);
  save();
  // The tab joins the session's group look while the grant lasts (SECURITY I-83).
  void syncGrantGroups();
  return g;
}

export async function revokeGrant(id: string): Promise<void> {
  await load();
  st.grants = st.grants.filter((g) => g.id !== id);
  save();
  void syncGrantGroups();
}

// ---------- window grants (SECURITY I-29) ----------

/** The window grant of an agent session, by the gateway session the daemon named; else undefined. */
export function windowGrantOf(s: SessionRef): WindowGrant | undefined {
  if (s.kind !== "agent" || !s.gateway) return undefined;
  return st.windows[s.gateway];
}

/** An http(s) tab of the granted window that is not another session's agent tab. */
export function inGrantedWindow(w: WindowGrant, s: SessionRef, t: { id?: number; windowId?: number; url?: string; pendingUrl?: string }): boolean {
  if (t.id === undefined || t.windowId !== w.windowId) return false;
  const o = ownerOf(t.id);
  if (o && o.session !== s.id) return false;
  // Never the extension's own pages (the panel as a tab, the approval window), chrome: or file:.
  return /^https?:/.test(t.url || t.pendingUrl || "");
}

/** The session's window grant when tabId is a tab now in that window; else undefined. */
export async function windowGrantCovering(s: SessionRef, tabId: number): Promise<WindowGrant | undefined> {
  const w = windowGrantOf(s);
  if (!w) return undefined;
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  return t && inGrantedWindow(w, s, t) ? w : undefined;
}

/** The scopes a side-panel browser access gives on the room window's tabs (evaluate never). */
function windowScopes(access: unknown): Scope[] {
  return access === "act" ? ["read", "write"] : access === "read" ? ["read"] : [];
}

/**
 * SECURITY I-29: records the person's window grant. Called only by background/panel.ts, for a
 * session the person's own panel (an extension page) created, resumed or changed the access of in
 * that window; never from a tool, the link or a page. `none` (or any other value) removes it.
 */
export async function setWindowGrant(sessionId: string, windowId: number, access: unknown): Promise<WindowGrant | undefined> {
  await load();
  if (!sessionId) return undefined;
  const scopes = windowScopes(access);
  const win = Number.isInteger(windowId) ? await chrome.windows.get(windowId).catch(() => undefined) : undefined;
  if (scopes.length === 0 || !win) {
    dropWindowGrantNow(sessionId);
    return undefined;
  }
  const g: WindowGrant = { sessionId, windowId, scopes, createdAt: Date.now() };
  st.windows[sessionId] = g;
  save();
  return g;
}

/** SECURITY I-29: the room closed (or forgot) the session: its window grant goes. */
export async function dropWindowGrant(sessionId: string): Promise<void> {
  await load();
  dropWindowGrantNow(sessionId);
}

function dropWindowGrantNow(sessionId: string): void {
  if (!(sessionId in st.windows)) return;
  delete st.windows[sessionId];
  save();
}
