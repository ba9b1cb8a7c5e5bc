// Tab ownership: which agent session may see and act on which
// tab. The daemon mints every session and names it in each tools/call `_meta.torii`
// ({session: label, sessionId, kind, tabCap}); the extension enforces ownership itself, whatever
// the daemon asks (the extension is the last line of defence; SECURITY I-24):
//
// - a session owns the tabs it opened (navigate without tabId) and the popups its own calls set off
//   (SECURITY I-45: a page in its tab opened them while its effect-causing call ran there, or just
//   after); any other new tab is the person's, whoever's tab it was opened from; it may use the
//   person's own tabs only through a grant the person made in the popup (scopes read / write /
//   evaluate, expiring, revocable);
// - a side-panel agent may also use the tabs currently in its room's window, within the browser
//   access the person set for it in that panel (a window grant, recorded by background/panel.ts
//   when the panel creates or resumes the session; SECURITY I-29), and its navigate without tabId
//   opens the tab in that window;
// - `tabs` lists only those; naming any other tab (another session's, the person's, or none at
//   all) is `tab_not_owned`, the same words either way;
// - each session's tabs live in a window of their own that never takes the person's focus;
//   leaving or closing them raises no beforeunload prompt unless the person has looked at them
//   (SECURITY I-46: only an activation or focus nothing else explains counts as the person's);
// - at most `tabCap` agent tabs: an ended session's tabs go first, then the caller's own least
//   recently used; never a tab the person looked at, never another live session's.
//
// State lives in chrome.storage.session (cleared when the browser exits, so a tab id recycled by a
// new browser run has no owner; a removed tab's record is dropped at once: SECURITY I-26).
// Nothing here is reachable from the link or a page: grants come only from the extension's own
// pages (SECURITY I-27). Importing this file touches no chrome.* API.

import { attach, cdp } from "../cdp/debugger.js";
import { sleep, withDeadline } from "../cdp/deadline.js";
import type { Traits } from "./define.js";
import type { CallToolResult } from "./errors.js";
import { toolError } from "./errors.js";
import { ATTENTION_SETTLE_MS, Provenance, type CallMark, type CallShape } from "./provenance.js";

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

interface OwnerRec {
  session: string;
  at: number;
  used: number;
  looked?: boolean;
}

interface SessRec {
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

let st: State = { owners: {}, sessions: {}, grants: [], closed: {}, last: {}, windows: {} };
let installed = false;
let loaded: Promise<void> | undefined;

function load(): Promise<void> {
  loaded ??= chrome.storage.session.get(KEY).then(async (r) => {
    const v = r[KEY] as Partial<State> | undefined;
    if (v) st = { owners: v.owners ?? {}, sessions: v.sessions ?? {}, grants: v.grants ?? [], closed: v.closed ?? {}, last: v.last ?? {}, windows: v.windows ?? {} };
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
function save(): void {
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

function touch(s: SessionRef): SessRec {
  const r = (st.sessions[s.id] ??= { id: s.id, label: s.label, kind: s.kind ?? "", seen: Date.now() });
  r.seen = Date.now();
  if (s.gateway) r.gateway = s.gateway;
  delete r.ended; // a call proves the session is alive (revives one marked ended on reconnect)
  return r;
}

function ownerOf(tabId: number): OwnerRec | undefined {
  return st.owners[String(tabId)];
}

function isLive(sessionId: string): boolean {
  const s = st.sessions[sessionId];
  return !!s && s.ended === undefined;
}

export interface OwnershipCall {
  tool: { name: string; readOnly: boolean; traits: Pick<Traits, "target" | "reads" | "switch"> };
  args: Record<string, unknown>;
}

/**
 * SECURITY I-24: the ownership check of the gate. Fills in args.tabId with the session's own
 * default tab when the call names none (never the person's active tab), and refuses any tab that
 * is not the session's own or granted to it. Without installOwnership (unit tests) it does nothing.
 */
export async function checkOwnership(call: OwnershipCall, owner: SessionRef | undefined): Promise<void> {
  if (!installed) return;
  await load();
  const s = owner ?? ANONYMOUS;
  touch(s);
  const tr = call.tool.traits;
  if (tr.target === "none" || (tr.target === "tab-or-new" && call.args.tabId === undefined)) return;
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
    return;
  }
  // Code execution needs the evaluate scope, any other effect write, a read read.
  const need: Scope = tr.switch === "evaluate" || tr.switch === "fetch" ? "evaluate" : call.tool.readOnly ? "read" : "write";
  // SECURITY I-29: a tab now in the agent's room window, within the access the person set there.
  const w = await windowGrantCovering(s, tabId);
  if (w?.scopes.includes(need)) {
    st.last[s.id] = tabId;
    save();
    return;
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
}

function notOwned(tabId: number) {
  // The same words for another session's tab, the person's tab and a tab that does not exist.
  return toolError("tab_not_owned", `tab ${tabId} is not one of this session's tabs`);
}

async function usable(s: SessionRef, tabId: number): Promise<boolean> {
  if (ownerOf(tabId)?.session !== s.id && !grantFor(tabId, s.id) && !(await windowGrantCovering(s, tabId))) return false;
  return (await chrome.tabs.get(tabId).catch(() => undefined)) !== undefined;
}

function grantFor(tabId: number, sessionId: string): Grant | undefined {
  const now = Date.now();
  const before = st.grants.length;
  st.grants = st.grants.filter((g) => g.expiresAt > now);
  if (st.grants.length !== before) save();
  return st.grants.find((g) => g.tabId === tabId && g.sessionId === sessionId);
}

// ---------- window grants (SECURITY I-29) ----------

/** The window grant of an agent session, by the gateway session the daemon named; else undefined. */
function windowGrantOf(s: SessionRef): WindowGrant | undefined {
  if (s.kind !== "agent" || !s.gateway) return undefined;
  return st.windows[s.gateway];
}

/** An http(s) tab of the granted window that is not another session's agent tab. */
function inGrantedWindow(w: WindowGrant, s: SessionRef, t: { id?: number; windowId?: number; url?: string; pendingUrl?: string }): boolean {
  if (t.id === undefined || t.windowId !== w.windowId) return false;
  const o = ownerOf(t.id);
  if (o && o.session !== s.id) return false;
  // Never the extension's own pages (the panel as a tab, the approval window), chrome: or file:.
  return /^https?:/.test(t.url || t.pendingUrl || "");
}

/** The session's window grant when tabId is a tab now in that window; else undefined. */
async function windowGrantCovering(s: SessionRef, tabId: number): Promise<WindowGrant | undefined> {
  const w = windowGrantOf(s);
  if (!w) return undefined;
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  return t && inGrantedWindow(w, s, t) ? w : undefined;
}

/** The scopes a side-panel browser access gives on the room window's tabs (evaluate never). */
export function windowScopes(access: unknown): Scope[] {
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

export function originOf(url: string): string {
  try {
    const u = new URL(url);
    return u.origin === "null" ? url : u.origin;
  } catch {
    return "";
  }
}

async function docIdOf(tabId: number): Promise<string | undefined> {
  const f = await withDeadline(chrome.webNavigation.getFrame({ tabId, frameId: 0 }), 3_000, "getFrame").catch(() => null);
  return (f as { documentId?: string } | null)?.documentId;
}

/**
 * The session's tabs now: owned and granted, for the result's `_meta.torii.tabs`. Tabs reached
 * through a window grant are left out: they stay the person's, shared by the room's agents, and
 * the daemon would otherwise refuse them to the room's other agents as held (I-24).
 */
export function visibleTabs(owner: SessionRef | undefined): Set<number> {
  const s = owner ?? ANONYMOUS;
  const out = new Set<number>();
  for (const [k, r] of Object.entries(st.owners)) if (r.session === s.id) out.add(Number(k));
  const now = Date.now();
  for (const g of st.grants) if (g.sessionId === s.id && g.expiresAt > now) out.add(g.tabId);
  return out;
}

/** The checks are on (the service worker installed them). */
export function ownershipOn(): boolean {
  return installed;
}

/** `tabs` lists only the session's own, granted and window-granted tabs (every tab in unit tests). */
export function ownedOnly<T extends { id?: number; windowId?: number; url?: string; pendingUrl?: string }>(all: T[], owner: SessionRef | undefined): T[] {
  if (!installed) return all;
  const mine = visibleTabs(owner);
  const s = owner ?? ANONYMOUS;
  const w = windowGrantOf(s);
  return all.filter((t) => t.id !== undefined && (mine.has(t.id) || (w !== undefined && inGrantedWindow(w, s, t))));
}

/** True when the tab is an agent tab (it closes without a beforeunload prompt: quietAgentTab, closeAgentTab). */
export function isAgentTab(tabId: number): boolean {
  return installed && ownerOf(tabId) !== undefined;
}

/**
 * After a call: a granted tab the agent moved within the same origin keeps its grant on the new
 * document (the agent did it); and the result carries the session's tabs for the daemon's status.
 */
export async function afterCall(r: CallToolResult, owner: SessionRef | undefined, tabId: number | undefined): Promise<CallToolResult> {
  if (!installed) return r;
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

// ---------- what the agent's own calls cause (SECURITY I-45, I-46) ----------

const prov = new Provenance();

/**
 * The registry marks each call while it runs (until endAgentCall): a popup a page opens in the
 * call's tab meanwhile (or just after) is the session's, and a focus or activation in that tab's
 * window meanwhile is not the person's attention. `gctx.tabId` is read when needed: the gate sets it.
 */
export function beginAgentCall(owner: SessionRef | undefined, tool: CallShape, gctx: { tabId?: number }): CallMark | undefined {
  if (!installed) return undefined;
  return prov.begin((owner ?? ANONYMOUS).id, tool, () => gctx.tabId, Date.now());
}

/** The call returned (or was cancelled: what its handler still does after that is not its own). */
export function endAgentCall(m: CallMark | undefined): void {
  prov.end(m, Date.now());
  // Its window, while its tab still exists: a focus judged later may come after the tab closed.
  if (m?.focuses) void windowOfCall(m);
}

/** The window of a call's tab (looked up once); undefined when it has no tab or the tab is gone. */
async function windowOfCall(m: CallMark): Promise<number | undefined> {
  if (m.window !== undefined) return m.window;
  const t = m.tab();
  const w = t === undefined ? undefined : (await chrome.tabs.get(t).catch(() => undefined))?.windowId;
  if (w !== undefined) m.window = w;
  return w;
}

/**
 * Runs one of the extension's own tab or window operations (here and in the handoff): what it
 * activates or focuses is not the person's attention (SECURITY I-46).
 */
export async function selfOp<T>(op: () => Promise<T>): Promise<T> {
  prov.selfBegin();
  try {
    return await op();
  } finally {
    prov.selfEnd(Date.now());
  }
}

// ---------- opening agent tabs: own window, no focus, tab cap ----------

let personWindow: number | undefined;

/**
 * Opens an about:blank tab for the session in its own unfocused window (creating the window
 * first), after making room under the tab cap; the caller navigates it. The tab is owned from the
 * moment it exists.
 */
export async function openAgentTab(owner: SessionRef | undefined, signal?: AbortSignal): Promise<number> {
  await load();
  const s = owner ?? ANONYMOUS;
  const rec = touch(s);
  await makeRoom(s, s.tabCap ?? DEFAULT_TAB_CAP);
  const tab = await selfOp(() => createAgentTab(s, rec, signal));
  if (tab?.id === undefined) throw toolError("internal", "the new tab has no id");
  st.owners[String(tab.id)] = { session: s.id, at: Date.now(), used: Date.now() };
  st.last[s.id] = tab.id;
  save();
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
  }
  return tab;
}

/** Closes tabs until a new one fits under the cap; busy when none may go. */
async function makeRoom(s: SessionRef, cap: number): Promise<void> {
  for (;;) {
    const all = Object.entries(st.owners).map(([k, r]) => ({ tabId: Number(k), r }));
    if (all.length < cap) return;
    const free = (x: { r: OwnerRec }) => !x.r.looked;
    const ended = all.filter((x) => free(x) && !isLive(x.r.session) && x.r.session !== s.id).sort((a, b) => a.r.used - b.r.used);
    const own = all.filter((x) => free(x) && x.r.session === s.id).sort((a, b) => a.r.used - b.r.used);
    const victim = ended[0] ?? own[0];
    if (!victim) {
      throw toolError("busy", `the cap of ${cap} open agent tabs is reached and none may be closed for this session; nothing was opened`, "Close one of your tabs with close_tab, or ask the person to close agent tabs in the Torii popup.");
    }
    await closeAgentTab(victim.tabId);
  }
}

/** Closes an agent tab without a beforeunload prompt (unless the person looked at it). */
export async function closeAgentTab(tabId: number): Promise<void> {
  await quiet(tabId);
  forget(tabId);
  // Chrome activates a neighbour as the tab goes: that is not the person looking at it.
  await selfOp(() => withDeadline(chrome.tabs.remove(tabId), 5_000, "tabs.remove")).catch(() => undefined);
}

/** Before close_tab removes an agent tab: no beforeunload prompt unless the person looked at it. */
export async function quietAgentTab(tabId: number): Promise<void> {
  await load();
  await quiet(tabId);
}

// A capture-phase beforeunload listener registered before the page's own, in the page's world:
// it stops every later listener (including onbeforeunload), so leaving the page asks nothing.
// The person's own tabs, and agent tabs the person looked at, never get it.
const QUIET_FLAG = "__toriiQuietUnload";
const QUIET_SRC = `(()=>{const k=${JSON.stringify(QUIET_FLAG)};if(globalThis[k]!==undefined)return;globalThis[k]=true;addEventListener("beforeunload",(e)=>{if(globalThis[k]===true)e.stopImmediatePropagation();},true);})()`;
const quietScripts = new Map<number, string>();

async function quiet(tabId: number): Promise<void> {
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

async function unquiet(tabId: number): Promise<void> {
  const id = quietScripts.get(tabId);
  quietScripts.delete(tabId);
  try {
    if (id) await cdp(tabId, "Page.removeScriptToEvaluateOnNewDocument", { identifier: id }, 3_000);
    await cdp(tabId, "Runtime.evaluate", { expression: `globalThis[${JSON.stringify(QUIET_FLAG)}]=false` }, 3_000);
  } catch {
    // detached: nothing registered any more
  }
}

/** Makes an agent tab the active one of its own (unfocused) window, so CDP captures render it. */
async function showInOwnWindow(tabId: number): Promise<void> {
  const t = await chrome.tabs.get(tabId).catch(() => undefined);
  if (t && !t.active) await selfOp(() => chrome.tabs.update(tabId, { active: true })).catch(() => undefined);
}

function forget(tabId: number): void {
  const r = ownerOf(tabId);
  if (r) {
    const c = (st.closed[r.session] ??= []);
    c.push(tabId);
    if (c.length > 64) c.splice(0, c.length - 64);
    delete st.owners[String(tabId)];
  }
  quietScripts.delete(tabId);
  st.grants = st.grants.filter((g) => g.tabId !== tabId);
  save();
}

/**
 * SECURITY I-45: a tab a page opened (Chrome's onCreatedNavigationTarget: popups, target=_blank,
 * window.open, and also the person's Ctrl+click or middle click on a link) becomes the opener
 * tab's owner's only when that owner's own effect-causing call was running on the opener tab
 * when Chrome created it, or had just ended (POPUP_GRACE_MS). tabs.onCreated's openerTabId is
 * not used: Chrome sets it for the person's new tab (Ctrl+T, a new page) too, to the window's
 * active tab (measured), not to the page that opened it. Not told apart: the person's own
 * Ctrl+click on an agent tab during the agent's call there (or within the grace) is the agent's.
 */
function adopt(child: number, opener: number, createdAt: number): void {
  if (ownerOf(child)) return;
  const r = ownerOf(opener);
  if (!r || !prov.openedByCall(r.session, opener, createdAt)) return;
  st.owners[String(child)] = { session: r.session, at: Date.now(), used: Date.now() };
  save();
  void quiet(child);
}

/** The daemon ended a session: its tabs become first to go, or close now when asked to. */
export async function sessionEnded(sessionId: string, closeTabs: boolean): Promise<void> {
  await load();
  const s = st.sessions[sessionId];
  if (s) s.ended = Date.now();
  // SECURITY I-29: the agent session closes with its chat session; so does its window grant.
  if (s?.gateway) delete st.windows[s.gateway];
  save();
  if (closeTabs) await closeSessionTabs(sessionId);
}

/** A (re)connected daemon: every session the extension knew is over until it calls again. */
export async function daemonConnected(): Promise<void> {
  await load();
  const now = Date.now();
  for (const s of Object.values(st.sessions)) s.ended ??= now;
  save();
}

export async function closeSessionTabs(sessionId: string): Promise<number> {
  await load();
  const mine = Object.entries(st.owners).filter(([, r]) => r.session === sessionId).map(([k]) => Number(k));
  for (const t of mine) await closeAgentTab(t);
  return mine.length;
}

/** Registers the chrome.* listeners (at service-worker start) and turns the checks on. */
export function installOwnership(): void {
  if (installed) return;
  installed = true;
  void load();
  chrome.tabs.onCreated.addListener((t) => {
    if (t.id !== undefined) prov.tabCreated(t.id, t.windowId, Date.now());
  });
  // d.timeStamp is when Chrome was about to create the tab: judged against the calls then, not
  // when the event reached the worker.
  chrome.webNavigation.onCreatedNavigationTarget.addListener((d) => void load().then(() => adopt(d.tabId, d.sourceTabId, d.timeStamp)));
  chrome.tabs.onRemoved.addListener((tabId, info) => {
    prov.tabGone(tabId, info?.windowId, Date.now());
    void load().then(() => forget(tabId));
  });
  chrome.tabs.onAttached?.addListener((_t, info) => prov.tabChanged(info.newWindowId, Date.now()));
  chrome.tabs.onDetached?.addListener((_t, info) => prov.tabChanged(info.oldWindowId, Date.now()));
  chrome.windows.onRemoved.addListener((w) => {
    void load().then(() => {
      // SECURITY I-29: closing the window ends every window grant on it.
      for (const [k, g] of Object.entries(st.windows)) if (g.windowId === w) delete st.windows[k];
      save();
    });
    for (const s of Object.values(st.sessions)) if (s.window === w) delete s.window;
    if (personWindow === w) personWindow = undefined;
  });
  // Focus: an agent window never keeps the person's focus when Chrome brings it forward on the
  // extension's account (its own window or tab operations); a window the person brings forward
  // themselves stays, and the tab they look at is marked looked (it keeps its beforeunload prompts
  // and is never evicted). SECURITY I-46: Chrome's events do not say who moved focus, so an event
  // counts as the person's only when nothing else explains it (personsAttention).
  chrome.windows.onFocusChanged.addListener((w) => {
    if (w === chrome.windows.WINDOW_ID_NONE) return;
    const at = Date.now();
    const agent = Object.values(st.sessions).some((s) => s.window === w);
    if (!agent) {
      personWindow = w;
      return;
    }
    if (prov.selfActive(at) && personWindow !== undefined) {
      const back = personWindow;
      void selfOp(() => chrome.windows.update(back, { focused: true })).catch(() => undefined);
      return;
    }
    void personsAttention(undefined, w, at).then(async (yes) => {
      if (!yes) return;
      const [t] = await chrome.tabs.query({ active: true, windowId: w });
      if (t?.id !== undefined) markLooked(t.id);
    }).catch(() => undefined);
  });
  chrome.tabs.onActivated.addListener((a) => {
    const at = Date.now();
    void personsAttention(a.tabId, a.windowId, at).then(async (yes) => {
      if (!yes) return;
      const w = await chrome.windows.getLastFocused();
      if (w.focused && w.id === a.windowId) markLooked(a.tabId);
    }).catch(() => undefined);
  });
}

/**
 * SECURITY I-46: whether an activation of tabId (undefined: the window's focus) in windowId at
 * `at` was the person's. Chrome reports activation and focus without saying who caused them, and
 * an agent's call causes both: a CDP mouse press focuses the tab's window (measured in headless
 * Chromium), page code can close a tab so Chrome activates its neighbour or open one that Chrome
 * activates, and the extension activates tabs itself (screenshots, new tabs, closing). So it is the
 * person's only when, within ATTENTION_QUIET_MS before it, no agent call that puts input or code
 * into a page ran on a tab of that window, and neither an operation of the extension's own (while
 * it runs and CHROME_PICK_MS after) nor a tab of the window opening or closing (CHROME_PICK_MS
 * either side) explains it. Judged ATTENTION_SETTLE_MS later, so a tab removal Chrome reports just
 * after the activation is seen. Not told apart: the person switching to an agent tab while
 * such a call runs in its window, or just after; that switch is not counted (the next one is).
 */
async function personsAttention(tabId: number | undefined, windowId: number, at: number): Promise<boolean> {
  await sleep(ATTENTION_SETTLE_MS);
  await load();
  if (tabId !== undefined && !ownerOf(tabId)) return false;
  if (prov.explainedActivation(tabId, windowId, at)) return false;
  for (const m of prov.focusingCallsAround(at)) {
    const w = await windowOfCall(m);
    // A call with no tab yet, or on a tab gone before its window was known, may have been in any window.
    if (w === undefined || w === windowId) return false;
  }
  return true;
}

function markLooked(tabId: number): void {
  const r = ownerOf(tabId);
  if (!r || r.looked) return;
  r.looked = true;
  save();
  void unquiet(tabId);
}

// ---------- the popup's view and the person's grants (extension pages only) ----------

export interface SessionsView {
  sessions: { id: string; label: string; kind: string; ended?: number; tabs: { tabId: number; title: string; url: string; looked: boolean }[] }[];
  grants: Grant[];
  personTabs: { tabId: number; title: string; url: string }[];
}

export async function sessionsView(): Promise<SessionsView> {
  await load();
  const tabs = await chrome.tabs.query({});
  const byId = new Map(tabs.map((t) => [t.id, t]));
  const sessions = Object.values(st.sessions).map((s) => ({
    id: s.id,
    label: s.label,
    kind: s.kind,
    ...(s.ended !== undefined ? { ended: s.ended } : {}),
    tabs: Object.entries(st.owners)
      .filter(([, r]) => r.session === s.id)
      .map(([k, r]) => {
        const t = byId.get(Number(k));
        return { tabId: Number(k), title: t?.title ?? "", url: t?.url ?? "", looked: r.looked === true };
      }),
  }));
  const personTabs = tabs
    .filter((t) => t.id !== undefined && !ownerOf(t.id) && /^https?:/.test(t.url ?? ""))
    .map((t) => ({ tabId: t.id as number, title: t.title ?? "", url: t.url ?? "" }));
  const now = Date.now();
  return { sessions, grants: st.grants.filter((g) => g.expiresAt > now), personTabs };
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
  return g;
}

export async function revokeGrant(id: string): Promise<void> {
  await load();
  st.grants = st.grants.filter((g) => g.id !== id);
  save();
}

/** Handles the popup's messages; anything not from the extension's own pages is ignored. */
export function installSessionMessages(): void {
  chrome.runtime.onMessage.addListener((msg: unknown, sender, reply) => {
    const m = msg as { type?: unknown } | null;
    if (!m || typeof m.type !== "string" || !m.type.startsWith("torii.sessions.")) return false;
    // SECURITY I-27: extension pages only (popup); never a content script or another extension.
    if (sender.id !== chrome.runtime.id || !String(sender.url ?? "").startsWith(`chrome-extension://${chrome.runtime.id}/`)) {
      reply({ error: "refused" });
      return false;
    }
    const p = msg as Record<string, unknown>;
    const run = async (): Promise<unknown> => {
      switch (m.type) {
        case "torii.sessions.view":
          return sessionsView();
        case "torii.sessions.closeAll":
          return { closed: await closeSessionTabs(String(p.sessionId)) };
        case "torii.sessions.grant":
          return createGrant({ tabId: Number(p.tabId), sessionId: String(p.sessionId), scopes: (p.scopes as Scope[]) ?? [], minutes: Number(p.minutes) });
        case "torii.sessions.revoke":
          await revokeGrant(String(p.id));
          return {};
      }
      throw new Error("unknown message");
    };
    run().then(
      (v) => reply(v),
      (e: unknown) => reply({ error: e instanceof Error ? e.message : String(e) }),
    );
    return true;
  });
}
