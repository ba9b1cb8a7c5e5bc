// The browser-tool leg of the link (docs/protocol.md "Browser tools"): the daemon calls a tool with
// one request, `torii/tools/call {callId, tool, arguments, meta, deadline}`, and the worker runs it
// with the runtime's callTool under that one absolute deadline. `torii/tools/cancel {callId}` aborts
// it; `torii/tools/list` is the catalogue; `torii/tools/session_ended` ends a session's tabs and
// captures. This table is the extension's one table of calls in flight from the daemon.
// No chrome.* here: the tools and the session hooks are injected, so tests drive it with a fake peer.

import { INVALID_PARAMS, RpcError, type HandlerContext, type RpcPeer } from "./rpc.js";
import type { CallToolResult } from "../tools/errors.js";
import { toolError } from "../tools/errors.js";
import type { CallMeta, McpTool } from "../tools/registry.js";

const METHOD_LIST = "torii/tools/list";
export const METHOD_CALL = "torii/tools/call";
const METHOD_CANCEL = "torii/tools/cancel";
const METHOD_SESSION_ENDED = "torii/tools/session_ended";

/** A callId is the daemon's short token; anything longer is not one. */
const MAX_CALL_ID = 64;

export interface ToolCallDeps {
  listTools(): McpTool[];
  callTool(name: unknown, args: unknown, signal: AbortSignal, meta: CallMeta | undefined, deadline: number): Promise<CallToolResult>;
  /** The daemon ended a session. */
  sessionEnded(sessionId: string, closeTabs: boolean, closeManagedTabs: boolean): void;
  /** The daemon opened the tool server (it lists the catalogue first): sessions known before are over until they call again. */
  connected(): void;
}

function obj(p: unknown, method: string): Record<string, unknown> {
  if (typeof p !== "object" || p === null || Array.isArray(p)) throw new RpcError(INVALID_PARAMS, `${method}: params must be an object`);
  return p as Record<string, unknown>;
}

export class ToolCalls {
  /** In-flight calls by callId, each with the socket it came on. */
  private readonly inflight = new Map<string, { peer: RpcPeer; ctl: AbortController }>();

  constructor(private readonly deps: ToolCallDeps) {}

  install(register: (method: string, fn: (params: unknown, ctx: HandlerContext) => unknown) => void): void {
    register(METHOD_LIST, () => this.list());
    register(METHOD_CALL, (p, ctx) => this.call(p, ctx));
    register(METHOD_CANCEL, (p, ctx) => this.cancel(p, ctx));
    register(METHOD_SESSION_ENDED, (p) => this.ended(p));
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  list(): { tools: McpTool[] } {
    this.deps.connected();
    return { tools: this.deps.listTools() };
  }

  async call(params: unknown, ctx: HandlerContext): Promise<CallToolResult> {
    const p = obj(params, METHOD_CALL);
    const { callId, tool, deadline } = p;
    if (typeof callId !== "string" || callId === "" || callId.length > MAX_CALL_ID) {
      throw new RpcError(INVALID_PARAMS, `${METHOD_CALL}: callId must be a string of 1-${MAX_CALL_ID} characters`);
    }
    if (typeof tool !== "string" || tool === "") throw new RpcError(INVALID_PARAMS, `${METHOD_CALL}: tool is required`);
    // SECURITY I-80: one absolute deadline (unix ms) governs the call; the runtime caps it by its own maximum.
    if (typeof deadline !== "number" || !Number.isFinite(deadline) || deadline <= 0) {
      throw new RpcError(INVALID_PARAMS, `${METHOD_CALL}: deadline must be a time in unix milliseconds`);
    }
    if (this.inflight.has(callId)) throw new RpcError(INVALID_PARAMS, `${METHOD_CALL}: call ${JSON.stringify(callId)} is already running`);
    const ctl = new AbortController();
    this.inflight.set(callId, { peer: ctx.peer, ctl });
    try {
      return await this.deps.callTool(tool, p.arguments, ctl.signal, callMeta(p.meta), deadline);
    } finally {
      if (this.inflight.get(callId)?.ctl === ctl) this.inflight.delete(callId);
    }
  }

  /** Aborts the named call; a call of another socket, or one already answered, is left alone. */
  cancel(params: unknown, ctx: HandlerContext): Record<string, never> {
    const p = obj(params, METHOD_CANCEL);
    const c = typeof p.callId === "string" ? this.inflight.get(p.callId) : undefined;
    if (c && c.peer === ctx.peer) c.ctl.abort(toolError("cancelled", "cancelled by the daemon"));
    return {};
  }

  ended(params: unknown): Record<string, never> {
    const p = obj(params, METHOD_SESSION_ENDED);
    if (typeof p.sessionId === "string" && p.sessionId !== "") this.deps.sessionEnded(p.sessionId, p.closeTabs === true, p.closeManagedTabs === true);
    return {};
  }
}

/**
 * The calling session from `meta.torii` (or an MCP request's `_meta.torii`): its label (for the
 * person's audit view) and the daemon-minted sessionId tab ownership keys on (tools/ownership/state.ts).
 */
export function callMeta(meta: unknown): CallMeta | undefined {
  const t = meta && typeof meta === "object" ? (meta as { torii?: unknown }).torii : undefined;
  if (!t || typeof t !== "object") return undefined;
  const o = t as Record<string, unknown>;
  const s = [o.session, o.sessionLabel, o.label].find((x) => typeof x === "string" && x !== "");
  const out: CallMeta = typeof s === "string" ? { session: s.slice(0, 120) } : {};
  if (typeof o.sessionId === "string" && o.sessionId !== "") out.sessionId = o.sessionId.slice(0, 80);
  if (typeof o.kind === "string") out.kind = o.kind.slice(0, 16);
  if (typeof o.tabCap === "number" && Number.isInteger(o.tabCap) && o.tabCap > 0) out.tabCap = Math.min(o.tabCap, 500);
  // An agent session's chat session: the key of the person's window grant (SECURITY I-29).
  if (typeof o.gatewaySessionId === "string" && o.gatewaySessionId !== "") out.gatewaySessionId = o.gatewaySessionId.slice(0, 80);
  // The session's download-sandbox folder: a plain name the daemon minted (SECURITY I-66).
  if (typeof o.filesFolder === "string" && /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,119}$/.test(o.filesFolder)) out.filesFolder = o.filesFolder;
  return out.session !== undefined || out.sessionId !== undefined ? out : undefined;
}
