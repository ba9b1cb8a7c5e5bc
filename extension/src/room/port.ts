// The side panel ⇄ service worker wire, over a chrome.runtime port named `torii.panel`
// (docs/gateway.md "The side panel"). Types only, shared by background/panel.ts and the panel.

export const PANEL_PORT = "torii.panel";

/** ACP methods the panel may send through the link; anything else is refused by the worker. */
const PANEL_METHODS: readonly string[] = [
  "torii/agents",
  "session/new",
  "session/resume",
  "session/load",
  "session/prompt",
  "torii/session/restart",
  "torii/session/close",
  "torii/session/set_access",
];

/** `<anything>/ping` is allowed too: the liveness probe of docs/gateway.md. */
export function panelMayCall(method: string): boolean {
  return PANEL_METHODS.includes(method) || /^[\w.-]{1,64}\/ping$/.test(method);
}

export interface RpcErrorShape {
  code: number;
  message: string;
}

/** ACP permission answer. */
export type PermissionOutcome = { outcome: "selected"; optionId: string } | { outcome: "cancelled" };

export type PanelToWorker =
  /** First message: which window's room this panel is, and the sessions it owns. */
  | { t: "hello"; windowId: number; sessions: string[] }
  | { t: "call"; id: number; method: string; params: unknown; timeoutMs?: number }
  | { t: "cancel"; sessionId: string }
  | { t: "permission"; requestId: string; outcome: PermissionOutcome }
  /** The panel forgot a session (agent disconnected). */
  | { t: "forget"; sessionId: string };

export type WorkerToPanel =
  | { t: "ready"; busy: string[] }
  | { t: "result"; id: number; result: unknown }
  | { t: "error"; id: number; error: RpcErrorShape }
  | { t: "update"; params: unknown }
  | { t: "status"; params: unknown }
  | { t: "permission"; requestId: string; params: unknown }
  /** The request was settled elsewhere; `why` says why when nobody decided it (the agent ended). */
  | { t: "permission_done"; requestId: string; why?: string }
  /** A session/prompt ended (also delivered when the panel that sent it has gone). */
  | { t: "turn_end"; sessionId: string; stopReason: string; error?: RpcErrorShape };
