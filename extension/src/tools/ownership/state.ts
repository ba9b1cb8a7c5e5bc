// Tab ownership: which agent session may see and act on which tab. The daemon mints every session
// and names it in each tools/call `_meta.torii` ({session: label, sessionId, kind, tabCap}); the
// extension enforces ownership itself, whatever the daemon asks (the extension is the last line of
// defence; SECURITY I-24):
//
// - a session owns the tabs it opened (navigate without tabId, open.ts) and the popups its own
//   calls set off (attribution.ts, SECURITY I-45); any other new tab is the person's, whoever's tab
//   it was opened from; it may use the person's own tabs only through a grant the person made in
//   the popup (grants.ts: scopes read / write / evaluate, expiring, revocable);
// - a side-panel agent may also use the tabs currently in its room's window, within the browser
//   access the person set for it in that panel (a window grant, SECURITY I-29);
// - `tabs` lists only those; naming any other tab is `tab_not_owned`, the same words either way
//   (check.ts);
// - each session's tabs live in a window of their own that never takes the person's focus;
//   leaving or closing them raises no beforeunload prompt unless the person has looked at them
//   (quiet.ts; SECURITY I-46: only an activation or focus nothing else explains counts);
// - at most `tabCap` agent tabs (evict.ts).
//
// This file is the state those share and its persistence. It lives in chrome.storage.session
// (cleared when the browser exits, so a tab id recycled by a new browser run has no owner; a
// removed tab's record is dropped at once: SECURITY I-26). Nothing in ownership/ is reachable from
// the link or a page: grants come only from the extension's own pages (SECURITY I-27). Importing
// these files touches no chrome.* API.

export interface SessionRef {
  id: string;
  label: string;
  kind?: string;
  tabCap?: number;
  /** An agent session's gateway (chat) session, named by the daemon: the window grant key. */
  gateway?: string;
}

export type Scope = "read" | "write" | "evaluate";

export interface Grant {
  id: string;
  tabId: number;
  sessionId: string;
  label: string;
  scopes: Scope[];
  origin: string;
  docId?: string;
  createdAt: number;
  expiresAt: number;
}

/**
 * SECURITY I-29: the person opened a room in a window's side panel and set this agent's browser
 * access there; the agent (keyed by its gateway session id) may use that window's tabs.
 */
export interface WindowGrant {
  sessionId: string;
  windowId: number;
  scopes: Scope[];
  createdAt: number;
}

export interface OwnerRec {
  session: string;
  at: number;
  used: number;
  looked?: boolean;
}

export interface SessRec {
  id: string;
  label: string;
  kind: string;
  window?: number;
  /** The gateway session the daemon named for it (agent sessions). */
  gateway?: string;
  seen: number;
  ended?: number;
}

interface State {
  owners: Record<string, OwnerRec>;
  sessions: Record<string, SessRec>;
  grants: Grant[];
  /** Tabs a session had that were closed since (so a call on one says no_tab, not tab_not_owned). */
  closed: Record<string, number[]>;
  /** The session's last used tab: the default when a call names none. */
  last: Record<string, number>;
  /** Window grants by gateway session id (SECURITY I-29). */
  windows: Record<string, WindowGrant>;
}

const KEY = "torii_sessions";
export const DEFAULT_TAB_CAP = 20;
/** Calls the daemon sent without a session (an older daemon): one anonymous session, same rules. */
export const ANONYMOUS: SessionRef = { id: "anonymous", label: "anonymous" };

/** The one state object: its fields are replaced, never the object, so every importer sees the same. */
export const st: State = { owners: {}, sessions: {}, grants: [], closed: {}, last: {}, windows: {} };
let installed = false;
let loaded: Promise<void> | undefined;

/** The checks are on (the service worker installed them). */
export function ownershipOn(): boolean {
  return installed;
}

/** Called once by installOwnership; until then (unit tests of other tools) the checks do nothing. */
export function turnOwnershipOn(): void {
  installed = true;
}

export function load(): Promise<void> {
  loaded ??= chrome.storage.session.get(KEY).then(async (r) => {
    const v = r[KEY] as Partial<State> | undefined;
    if (v) Object.assign(st, { owners: v.owners ?? {}, sessions: v.sessions ?? {}, grants: v.grants ?? [], closed: v.closed ?? {}, last: v.last ?? {}, windows: v.windows ?? {} });
    // SECURITY I-26: a record for a tab that no longer exists is dropped before anything uses it.
    const live = new Set((await chrome.tabs.query({})).map((t) => t.id));
    for (const k of Object.keys(st.owners)) if (!live.has(Number(k))) delete st.owners[k];
    st.grants = st.grants.filter((g) => live.has(g.tabId));
    // SECURITY I-29: a window grant ends with its window.
    const wins = new Set((await chrome.windows.getAll()).map((w) => w.id));
    for (const [k, w] of Object.entries(st.windows)) if (!wins.has(w.windowId)) delete st.windows[k];
  });
  return loaded;
}

// Written a moment after the last change, not on every call: serialising the whole state on a
// call's path cost it about a millisecond. The worker lives for seconds after any call, so a
// pending write is not lost to its shutdown.
const SAVE_AFTER_MS = 50;
let saveTimer: ReturnType<typeof setTimeout> | undefined;
export function save(): void {
  saveTimer ??= setTimeout(() => {
    saveTimer = undefined;
    chrome.storage.session.set({ [KEY]: st }).catch(() => undefined);
  }, SAVE_AFTER_MS);
}

/** The session `_meta.torii` names (see provider.ts), or undefined. */
export function sessionFromMeta(
  m: { sessionId?: string; session?: string; kind?: string; tabCap?: number; gatewaySessionId?: string } | undefined,
): SessionRef | undefined {
  if (!m?.sessionId) return undefined;
  // Only an agent session serves a gateway (chat) session; the daemon names it (SECURITY I-29).
  const gateway = m.kind === "agent" && m.gatewaySessionId ? { gateway: m.gatewaySessionId.slice(0, 80) } : {};
  return { id: m.sessionId.slice(0, 80), label: (m.session ?? "").slice(0, 120), ...(m.kind ? { kind: m.kind } : {}), ...(m.tabCap ? { tabCap: m.tabCap } : {}), ...gateway };
}

export function touch(s: SessionRef): SessRec {
  const r = (st.sessions[s.id] ??= { id: s.id, label: s.label, kind: s.kind ?? "", seen: Date.now() });
  r.seen = Date.now();
  if (s.gateway) r.gateway = s.gateway;
  delete r.ended; // a call proves the session is alive (revives one marked ended on reconnect)
  return r;
}

export function ownerOf(tabId: number): OwnerRec | undefined {
  return st.owners[String(tabId)];
}

let ownHook: ((tabId: number, sessionId: string) => void) | undefined;

/** Told of every tab made a session's own (groups.ts shows it in the session's tab group). */
export function onOwn(f: (tabId: number, sessionId: string) => void): void {
  ownHook = f;
}

/** Makes a tab the session's own (and its default for calls that name none). */
export function own(tabId: number, sessionId: string, opts: { last?: boolean } = {}): void {
  st.owners[String(tabId)] = { session: sessionId, at: Date.now(), used: Date.now() };
  if (opts.last) st.last[sessionId] = tabId;
  save();
  ownHook?.(tabId, sessionId);
}
