// The worker side of the side panel: a chrome.runtime port named `torii.panel` per open panel,
// bridged to the link's ACP calls (docs/gateway.md "The side panel"). The daemon's session/update,
// torii/agent_status and session/request_permission reach the panel of the window that owns the
// session; permission requests are answered with the panel's decision, or `cancelled` on Stop.
// Events for a window whose panel is closed are buffered (bounded) and delivered when it reopens.
//
// Every listener is registered synchronously (MV3 wake-up rule): at import, and the ports' by
// installPanel, which the worker's entry calls at top level with its link.

import { PANEL_PORT, panelMayCall, type PanelToWorker, type PermissionOutcome, type RpcErrorShape, type WorkerToPanel } from "../room/port.js";
import { dropWindowGrant, setWindowGrant } from "../tools/ownership/grants.js";
import type { LinkState } from "../shared/messages.js";
import { RpcError, registerHandler } from "./rpc.js";

/** A turn may run long (an agent working through a page); the daemon reports hangs itself. */
const PROMPT_TIMEOUT_MS = 6 * 60 * 60 * 1000;
const CALL_TIMEOUT_MS = 60_000;
/** Events kept per window while its panel is closed. */
const BUFFER_CAP = 3000;
/** A permission nobody answers is cancelled after this long. */
const PERMISSION_TIMEOUT_MS = 30 * 60 * 1000;
const STORE_KEY = "torii.panel.sessions";
const LINK_DOWN = -32000;

/** What the panel uses of the link to the daemon (background/link.ts). */
export interface PanelLink {
  state(): LinkState;
  notify(method: string, params?: unknown): void;
  request(method: string, params?: unknown, timeoutMs?: number): Promise<unknown>;
}

interface PanelPort {
  port: chrome.runtime.Port;
  windowId: number | null;
}

interface PendingPermission {
  sessionId: string;
  windowId: number;
  params: unknown;
  resolve: (outcome: { outcome: PermissionOutcome }) => void;
  timer: ReturnType<typeof setTimeout>;
}

const ports = new Set<PanelPort>();
const sessionWindow = new Map<string, number>();
const buffered = new Map<number, WorkerToPanel[]>();
const pending = new Map<string, PendingPermission>();
/** Sessions with a session/prompt in flight. */
const busy = new Set<string>();

// The session → window map outlives a worker restart (session storage, cleared with the browser).
const loaded: Promise<void> = (async () => {
  try {
    const v = (await chrome.storage.session.get(STORE_KEY))[STORE_KEY];
    if (v && typeof v === "object") {
      for (const [s, w] of Object.entries(v as Record<string, unknown>)) if (typeof w === "number") sessionWindow.set(s, w);
    }
  } catch {
    // no session storage: the panels re-announce their sessions in hello
  }
})();

function save(): void {
  void chrome.storage.session.set({ [STORE_KEY]: Object.fromEntries(sessionWindow) }).catch(() => undefined);
}

function own(sessionId: string, windowId: number): void {
  if (sessionWindow.get(sessionId) === windowId) return;
  sessionWindow.set(sessionId, windowId);
  save();
}

function post(p: PanelPort, msg: WorkerToPanel): void {
  try {
    p.port.postMessage(msg);
  } catch {
    ports.delete(p); // disconnected under us
  }
}

/** Delivers to every panel of the window, or buffers until one opens. */
function toWindow(windowId: number, msg: WorkerToPanel): void {
  let sent = false;
  for (const p of ports) {
    if (p.windowId === windowId) {
      post(p, msg);
      sent = true;
    }
  }
  if (sent) return;
  const q = buffered.get(windowId) ?? [];
  q.push(msg);
  if (q.length > BUFFER_CAP) q.splice(0, q.length - BUFFER_CAP);
  buffered.set(windowId, q);
}

async function toSession(sessionId: string, msg: WorkerToPanel): Promise<boolean> {
  await loaded;
  const w = sessionWindow.get(sessionId);
  if (w === undefined) return false;
  toWindow(w, msg);
  return true;
}

function sessionOf(params: unknown): string {
  const s = (params as { sessionId?: unknown } | null)?.sessionId;
  return typeof s === "string" ? s : "";
}

/** The panel's `_meta.torii` of a call (room, browserAccess), or {}. */
function toriiMeta(params: unknown): { room?: unknown; browserAccess?: unknown } {
  const m = (params as { _meta?: { torii?: unknown } } | null)?._meta?.torii;
  return m && typeof m === "object" ? (m as { room?: unknown; browserAccess?: unknown }) : {};
}

/**
 * SECURITY I-29: the person's window grant follows what the person's own panel (an extension page,
 * checked at connect) did for the session in its window: created or resumed it with a browser
 * access, changed that access, closed or forgot it. The daemon only answers with the session id;
 * nothing the link or a page sends reaches this.
 */
async function windowGrantAfter(method: string, windowId: number | null, sessionId: string, params: unknown): Promise<void> {
  if (windowId === null || !sessionId) return;
  const meta = toriiMeta(params);
  switch (method) {
    case "session/new":
      if (meta.room === `window-${windowId}`) await setWindowGrant(sessionId, windowId, meta.browserAccess);
      return;
    case "session/resume":
    case "session/load":
      if (meta.browserAccess !== undefined) await setWindowGrant(sessionId, windowId, meta.browserAccess);
      return;
    case "torii/session/set_access":
      await setWindowGrant(sessionId, windowId, (params as { browserAccess?: unknown } | null)?.browserAccess);
      return;
    case "torii/session/close":
      await dropWindowGrant(sessionId);
      return;
  }
}

function errShape(link: PanelLink, e: unknown): RpcErrorShape {
  if (e instanceof RpcError) return { code: e.code, message: e.message };
  const st = link.state();
  if (st.status !== "connected") return { code: LINK_DOWN, message: `the link to the daemon is ${st.status}${st.reason ? `: ${st.reason}` : ""}` };
  return { code: LINK_DOWN, message: e instanceof Error ? e.message : String(e) };
}

registerHandler("session/update", (params) => {
  void toSession(sessionOf(params), { t: "update", params });
});

registerHandler("torii/agent_status", (params) => {
  const sessionId = sessionOf(params);
  void toSession(sessionId, { t: "status", params }).then(() => {
    // An agent that ended will never read an answer: its open requests are withdrawn, not left to decide.
    const st = (params as { status?: unknown; agent?: unknown } | null)?.status;
    if (st !== "crashed" && st !== "exited") return;
    const agent = (params as { agent?: unknown }).agent;
    const who = typeof agent === "string" && agent ? agent : "the agent";
    for (const [id, p] of pending) if (p.sessionId === sessionId) settle(id, { outcome: "cancelled" }, `withdrawn: ${who} ${st}`);
  });
});

registerHandler("session/request_permission", async (params) => {
  const sessionId = sessionOf(params);
  await loaded;
  const windowId = sessionWindow.get(sessionId);
  // Not a chat session of ours (or forgotten): nobody can decide, so nothing is granted.
  if (windowId === undefined) return { outcome: { outcome: "cancelled" } };
  const requestId = crypto.randomUUID();
  return new Promise((resolve) => {
    const timer = setTimeout(() => settle(requestId, { outcome: "cancelled" }), PERMISSION_TIMEOUT_MS);
    pending.set(requestId, { sessionId, windowId, params, resolve, timer });
    toWindow(windowId, { t: "permission", requestId, params });
  });
});

function settle(requestId: string, outcome: PermissionOutcome, why?: string): void {
  const p = pending.get(requestId);
  if (!p) return;
  pending.delete(requestId);
  clearTimeout(p.timer);
  p.resolve({ outcome });
  toWindow(p.windowId, why ? { t: "permission_done", requestId, why } : { t: "permission_done", requestId });
}

function cancelSession(link: PanelLink, sessionId: string): void {
  link.notify("session/cancel", { sessionId });
  for (const [id, p] of pending) if (p.sessionId === sessionId) settle(id, { outcome: "cancelled" });
}

async function call(link: PanelLink, p: PanelPort, id: number, method: string, params: unknown, timeoutMs?: number): Promise<void> {
  if (!panelMayCall(method)) {
    post(p, { t: "error", id, error: { code: -32601, message: `the panel may not call ${method}` } });
    return;
  }
  const windowId = p.windowId;
  const sessionId = sessionOf(params);
  if (windowId !== null && sessionId && method !== "torii/session/close") own(sessionId, windowId);
  // SECURITY I-29: a revocation applies at once, whatever the daemon answers.
  const revoking = method === "torii/session/close" || (method === "torii/session/set_access" && (params as { browserAccess?: unknown } | null)?.browserAccess === "none");
  if (revoking && sessionId) await dropWindowGrant(sessionId).catch(() => undefined);
  const isPrompt = method === "session/prompt";
  if (isPrompt) busy.add(sessionId);
  try {
    const result = await link.request(method, params, isPrompt ? PROMPT_TIMEOUT_MS : (timeoutMs ?? CALL_TIMEOUT_MS));
    if (method === "session/new" && windowId !== null) {
      const sid = sessionOf(result);
      if (sid) own(sid, windowId);
    }
    await windowGrantAfter(method, windowId, method === "session/new" ? sessionOf(result) : sessionId, params).catch(() => undefined);
    if (method === "torii/session/close" && sessionId) {
      sessionWindow.delete(sessionId);
      save();
    }
    if (isPrompt) {
      const stopReason = (result as { stopReason?: unknown } | null)?.stopReason;
      busy.delete(sessionId);
      await toSession(sessionId, { t: "turn_end", sessionId, stopReason: typeof stopReason === "string" ? stopReason : "end_turn" });
    }
    post(p, { t: "result", id, result });
  } catch (e) {
    const error = errShape(link, e);
    if (isPrompt) {
      busy.delete(sessionId);
      await toSession(sessionId, { t: "turn_end", sessionId, stopReason: "error", error });
    }
    post(p, { t: "error", id, error });
  }
}

function onMessage(link: PanelLink, p: PanelPort, raw: unknown): void {
  const m = raw as PanelToWorker;
  if (!m || typeof m !== "object" || typeof m.t !== "string") return;
  switch (m.t) {
    case "hello": {
      if (typeof m.windowId !== "number") return;
      p.windowId = m.windowId;
      void loaded.then(() => {
        for (const s of Array.isArray(m.sessions) ? m.sessions : []) if (typeof s === "string") own(s, m.windowId);
        const mine = [...busy].filter((s) => sessionWindow.get(s) === m.windowId);
        post(p, { t: "ready", busy: mine });
        const q = buffered.get(m.windowId);
        buffered.delete(m.windowId);
        // Buffered permission requests may have been settled since; re-offer only live ones below.
        for (const msg of q ?? []) if (msg.t !== "permission" && msg.t !== "permission_done") post(p, msg);
        for (const [requestId, pp] of pending) if (pp.windowId === m.windowId) post(p, { t: "permission", requestId, params: pp.params });
      });
      return;
    }
    case "call":
      if (typeof m.id === "number" && typeof m.method === "string") void call(link, p, m.id, m.method, m.params, m.timeoutMs);
      return;
    case "cancel":
      if (typeof m.sessionId === "string") cancelSession(link, m.sessionId);
      return;
    case "permission":
      if (typeof m.requestId === "string" && m.outcome) {
        const pp = pending.get(m.requestId);
        // Only the window that owns the session may answer for it.
        if (pp && pp.windowId === p.windowId) settle(m.requestId, m.outcome);
      }
      return;
    case "forget":
      if (typeof m.sessionId === "string" && sessionWindow.get(m.sessionId) === p.windowId) {
        sessionWindow.delete(m.sessionId);
        save();
        void dropWindowGrant(m.sessionId); // SECURITY I-29
      }
      return;
  }
}

/** Bridges each side panel's port to `link`. */
export function installPanel(link: PanelLink): void {
  chrome.runtime.onConnect.addListener((port) => {
    if (port.name !== PANEL_PORT) return;
    // Only our own extension pages may speak for a room; content scripts and other extensions may not.
    const url = port.sender?.url ?? "";
    if (port.sender?.id !== chrome.runtime.id || !url.startsWith(self.location.origin + "/")) {
      port.disconnect();
      return;
    }
    const p: PanelPort = { port, windowId: null };
    ports.add(p);
    port.onMessage.addListener((m: unknown) => onMessage(link, p, m));
    port.onDisconnect.addListener(() => ports.delete(p));
  });
}

// The toolbar button keeps the popup; the side panel opens from its keyboard command.
void chrome.sidePanel?.setPanelBehavior({ openPanelOnActionClick: false }).catch(() => undefined);
chrome.commands?.onCommand.addListener((command, tab) => {
  if (command !== "open-side-panel") return;
  const windowId = tab?.windowId;
  if (windowId !== undefined) void chrome.sidePanel.open({ windowId }).catch(() => undefined);
});
