// The tool registry: every tool, in catalogue order. tools/list, docs/tools.md and the daemon's
// pinned catalogue are all derived from this list; callTool is the single entry for execution
// (validate → gate → handler with deadline and cancellation → MCP result → audit).

import { framePageData, MAX_TOOL_TIMEOUT_MS, toCallResult, type AnyTool, type ToolContext, type ToolGroup } from "./define.js";
import { asToolError, errorResult, forRead, toolError, ToolError, type CallToolResult } from "./errors.js";
import { gate, policyNow, type GateContext } from "./gate.js";
import { withholdInResult } from "../outbound/foreign.js";
import { beginAgentCall, endAgentCall } from "./ownership/attribution.js";
import { afterCall } from "./ownership/check.js";
import { sessionFromMeta } from "./ownership/state.js";
import { evaluate, fetchInPage } from "./evaluate.js";
import { handoff } from "./handoff.js";
import { SchemaError, validate, wireSchema } from "./schema.js";
import { closeTab, tabs } from "./tabs.js";
import { history, navigate, reload } from "./nav.js";
import { find, getState, readTextTool, snapshot } from "./query.js";
import { click, fill, hover, mouseClick, pressKey, selectOption, type } from "./input.js";
import { reveal, scroll } from "./scroll.js";
import { settle, waitFor } from "./wait.js";
import { screenshot } from "./screenshot.js";
import { handleDialog } from "./dialog.js";
import { upload } from "./upload.js";
import { downloadGuard } from "./downloads.js";
import { fillForm } from "./form.js";
import { proxyProfiles, proxySwitch } from "./proxy.js";
import { setUserAgent } from "./useragent.js";
import { maskResult, outbound, secrets, secretsAudit } from "./secrets.js";
import { drag } from "./drag.js";
import { invoke } from "./invoke.js";
import { printToPdf } from "./pdf.js";
import { saveToFile } from "./savefile.js";
import { captureExport, captureList, captureStart, captureStop } from "./capture/tools.js";
import { frames } from "./frames.js";
import { cookies, storage } from "./storage.js";
import { setViewport } from "./viewport.js";
import { consoleTail, networkTail } from "./observe/tools.js";

export const TOOLS: readonly AnyTool[] = [
  // perception
  tabs,
  snapshot,
  find,
  readTextTool,
  getState,
  screenshot,
  waitFor,
  settle,
  // action
  navigate,
  history,
  reload,
  closeTab,
  click,
  mouseClick,
  hover,
  drag,
  fill,
  type,
  pressKey,
  selectOption,
  fillForm,
  upload,
  scroll,
  reveal,
  handleDialog,
  // code execution and the person
  evaluate,
  fetchInPage,
  invoke,
  handoff,
  // identity: the browser's proxy profile, one tab's user agent
  proxyProfiles,
  proxySwitch,
  setUserAgent,
  // the person's secrets (names only)
  secrets,
  // files in the session's download sandbox (SECURITY I-66)
  printToPdf,
  saveToFile,
  // network capture
  captureStart,
  captureStop,
  captureList,
  captureExport,
  // frames, the browser's stores for an origin (own switches), device emulation
  frames,
  cookies,
  storage,
  setViewport,
  // what the page does (the person's "Console & network" switch)
  consoleTail,
  networkTail,
];

const byName = new Map(TOOLS.map((t) => [t.name, t]));

export function getTool(name: string): AnyTool | undefined {
  return byName.get(name);
}

/**
 * The longest a call may take here, the person's approval included: under the 60 s request timeout
 * of the common MCP clients (the official SDKs, the Inspector), so the agent hears Torii's own typed
 * error, not its client's bare timeout. A caller's deadline (the daemon's, SECURITY I-80) only ever
 * shortens it.
 */
export const MAX_CALL_MS = 55_000;
/** Kept of the call's deadline for the answer to travel back, so it arrives before the caller gives up. */
export const ANSWER_MARGIN_MS = 1_000;

/** The call's one deadline (epoch ms): the caller's, capped by MAX_CALL_MS from its arrival. */
export function callDeadline(arrived: number, given?: number): number {
  const cap = arrived + MAX_CALL_MS;
  return given === undefined ? cap : Math.min(cap, given);
}

/**
 * When the handler must have answered (epoch ms): the tool's own cap (at most MAX_TOOL_TIMEOUT_MS)
 * from its start, and never past the call's deadline less the margin for the answer. SECURITY I-80.
 */
export function handlerEnd(deadline: number, started: number, toolMs?: number): number {
  return Math.min(deadline - ANSWER_MARGIN_MS, started + Math.min(toolMs ?? MAX_TOOL_TIMEOUT_MS, MAX_TOOL_TIMEOUT_MS));
}

/** The _meta key naming a tool's group for the daemon (internal/broker/groups.go), which strips it. */
const GROUP_META_KEY = "torii/group";

export interface McpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** Absent: MCP's defaults (not read-only, destructive, not idempotent). */
  annotations?: { readOnlyHint: boolean; destructiveHint?: boolean; idempotentHint?: boolean };
  _meta?: { [GROUP_META_KEY]: ToolGroup };
}

/**
 * The tools/list entries, derived from the registry: the compact wire form of each schema
 * (wireSchema; calls are validated against the full one), the hints from the traits
 * (readOnly, destructive: traits.ts DESTRUCTIVE_EFFECTS). A destructive write tool is what MCP
 * assumes of a tool without annotations, so it has none (every turn pays for tools/list); the
 * others carry the fields the daemon's Go SDK always writes (idempotentHint, readOnlyHint), so
 * agents get this catalogue byte for byte in size, plus the daemon's own tools (docs/tools.md
 * states the total).
 */
export function listTools(): McpTool[] {
  return TOOLS.map((t) => {
    const idempotent = t.idempotent ?? t.readOnly;
    const annotations = t.readOnly
      ? { readOnlyHint: true, idempotentHint: idempotent }
      : t.destructive && !idempotent
        ? undefined
        : { readOnlyHint: false, destructiveHint: t.destructive, idempotentHint: idempotent };
    return {
      name: t.name,
      description: t.description,
      inputSchema: wireSchema(t.inputSchema) as Record<string, unknown>,
      ...(annotations ? { annotations } : {}),
      ...(t.group ? { _meta: { [GROUP_META_KEY]: t.group } } : {}),
    };
  });
}

/** Metadata the audit keeps for each call (SECURITY I-21); set by the service worker. */
export type AuditSink = (e: { ts: number; tool: string; session?: string; origin: string; outcome: "ok" | "error"; code?: string; ms: number; approval?: string; detail?: string; secrets?: string }) => void;
let auditSink: AuditSink = () => undefined;
const active = new Set<AbortController>();

/** SECURITY I-20: stops every call in flight with this error (pause). */
export function abortAll(reason: ToolError): void {
  for (const c of active) c.abort(reason);
}
export function setAuditSink(f: AuditSink): void {
  auditSink = f;
}

/** `meta.torii` of a call, as the daemon sends it (background/toolcalls.ts parses it). */
export interface CallMeta {
  session?: string;
  sessionId?: string;
  kind?: string;
  tabCap?: number;
  /** An agent session's gateway (chat) session: the key of a window grant (SECURITY I-29). */
  gatewaySessionId?: string;
  /** The session's folder in the download sandbox (SECURITY I-66). */
  filesFolder?: string;
}

/**
 * Runs one call by `deadline` (epoch ms; absent: MAX_CALL_MS from now, and never later). Failures come
 * back as isError results, never as thrown errors.
 */
export async function callTool(name: unknown, args: unknown, signal?: AbortSignal, meta?: CallMeta, deadline?: number): Promise<CallToolResult> {
  const t0 = Date.now();
  const end = callDeadline(t0, deadline);
  // The call's one abort controller: the caller's cancellation, a pause (abortAll) and the tool's
  // deadline all abort it; the gate and the handler share its signal.
  const ctl = new AbortController();
  const onOuter = () => ctl.abort(signal?.reason);
  if (signal?.aborted) ctl.abort(signal.reason);
  signal?.addEventListener("abort", onOuter, { once: true });
  active.add(ctl);
  const owner = sessionFromMeta(meta);
  const gctx: GateContext = { signal: ctl.signal, ...(meta?.session ? { session: meta.session } : {}), ...(owner ? { owner } : {}), ...(meta?.filesFolder ? { filesFolder: meta.filesFolder } : {}) };
  let r: CallToolResult;
  try {
    // SECURITY I-19: downloads this call starts wait for the person's `download` choice.
    const tool = typeof name === "string" ? byName.get(name) : undefined;
    const dl = tool ? downloadGuard()?.begin(tool, gctx) : undefined;
    // SECURITY I-45/I-46: what the browser does meanwhile in the call's tab is the agent's doing.
    const mark = tool ? beginAgentCall(owner, tool, gctx) : undefined;
    // SECURITY I-77: the mask is current before the handler runs (maskCut uses it as it formats).
    r = await outbound.masker().then(
      () => runTool(name, args, gctx, ctl, end),
      () => errorResult(toolError("secret_store_locked", "the secret store cannot be read, so no result could be checked for secrets; nothing was done")),
    );
    endAgentCall(mark);
    r = (await downloadGuard()?.end(dl, r)) ?? r;
    r = await afterCall(r, owner, gctx.tabId);
    // SECURITY I-69/I-77: no result carries a secret's value, whatever the page did with it; a
    // result that cannot be checked is not returned.
    r = await maskResult(r).catch(() => errorResult(toolError("secret_store_locked", "the secret store cannot be read, so the result cannot be checked for secrets; nothing was returned")));
    // SECURITY I-79: no URL of an origin off the list in what a tool read from the browser; a tool
    // that reads nothing (the person's own settings: secrets' origins, proxy profiles) is not page text.
    if (tool?.traits.reads !== "none") r = withholdInResult(r, await policyNow()?.catch(() => undefined));
  } finally {
    active.delete(ctl);
    signal?.removeEventListener("abort", onOuter);
  }
  // Metadata only: never arguments, typed text, page content or results.
  const err = r.isError ? (r.structuredContent?.error as { code?: unknown } | undefined) : undefined;
  const code = err && typeof err.code === "string" ? err.code : undefined;
  const a = auditOf(gctx, code, secretsAudit(gctx));
  auditSink({
    ts: t0,
    tool: typeof name === "string" ? name.slice(0, 64) : "?",
    ...(gctx.session ? { session: gctx.session } : {}),
    origin: a.origin,
    outcome: r.isError ? "error" : "ok",
    ...(code ? { code } : {}),
    ms: Date.now() - t0,
    ...(gctx.approval ? { approval: gctx.approval } : {}),
    ...(gctx.auditNote ? { detail: gctx.auditNote } : {}),
    ...(a.secrets ? { secrets: a.secrets } : {}),
  });
  // SECURITY I-78: framed last, so the mask above never touches the frame.
  return withAuditMeta(framePageData(r), a);
}

/** `_meta` key of what the daemon's audit records from the extension (internal/broker/audit.go MetaAudit). */
export const META_AUDIT = "torii/audit";

/** What the daemon's audit may know of a call: never arguments, content or results. */
export interface AuditMeta {
  /** The origin the call acted on; "blocked" for a page off the allowlist (never its host, SECURITY I-14/I-15); "" for none. */
  origin: string;
  /** The person's decision when an approval was asked. */
  approval?: "approved" | "denied" | "timeout";
  /** The secrets the call used, "NAME on ORIGIN" (SECURITY I-69): names, never values. */
  secrets?: string;
}

/** The call's audit metadata, from what the gate learnt and how the call ended. */
export function auditOf(gctx: Pick<GateContext, "origin" | "approval">, code: string | undefined, secrets?: string): AuditMeta {
  // A refusal for a page, destination or landing off the allowlist names no host, here either.
  const origin = code === "origin_not_allowed" ? "blocked" : (gctx.origin ?? "");
  const ap = gctx.approval;
  return { origin, ...(ap === "approved" || ap === "denied" || ap === "timeout" ? { approval: ap } : {}), ...(secrets ? { secrets } : {}) };
}

/** The result with `_meta["torii/audit"]` for the daemon (which strips it before the agent sees the result). */
function withAuditMeta(r: CallToolResult, a: AuditMeta): CallToolResult {
  const m: Record<string, string> = {};
  if (a.origin) m.origin = a.origin;
  if (a.approval) m.approval = a.approval;
  if (a.secrets) m.secrets = a.secrets;
  if (Object.keys(m).length === 0) return r;
  return { ...r, _meta: { ...r._meta, [META_AUDIT]: m } };
}

async function runTool(name: unknown, args: unknown, gctx: GateContext, ctl: AbortController, deadline: number): Promise<CallToolResult> {
  const signal = ctl.signal;
  let timer: ReturnType<typeof setTimeout> | undefined;
  // The tool once its arguments passed the schema: from the gate on, a failure may quote the page
  // (a dialog's text, a page function's message), so its traits decide the framing of failures too.
  let ran: AnyTool | undefined;
  try {
    if (typeof name !== "string") throw toolError("invalid_argument", "name: expected a tool name");
    const tool = byName.get(name);
    if (!tool) throw toolError("tool_not_found", `no tool named ${JSON.stringify(name)}`);
    const a = args === undefined || args === null ? {} : args;
    try {
      // The full schema (waitFor's fields, additionalProperties:false), not tools/list's wire form.
      validate(tool.inputSchema, a);
    } catch (e) {
      if (e instanceof SchemaError) throw toolError("invalid_argument", e.message, undefined, { field: e.field });
      throw e;
    }
    ran = tool;
    const cancelled = () => (signal.reason instanceof ToolError ? signal.reason : toolError("cancelled", `${name}: cancelled`));
    // A call cancelled before it got here asks the page and the person nothing.
    if (signal.aborted) throw cancelled();
    // SECURITY I-80: one deadline governs the call, the person's answer included; its expiry says
    // whether the tool ran. The tool's own cap, from the handler's start, only brings it closer.
    const expire = (after: number, msg: string) => {
      clearTimeout(timer);
      timer = setTimeout(() => ctl.abort(toolError("timeout", `${name}: ${msg}`)), Math.max(0, after - Date.now()));
    };
    expire(deadline - ANSWER_MARGIN_MS, "its deadline passed before it ran (waiting for the person's answer); nothing was done");
    await gate({ tool, args: a as Record<string, unknown> }, gctx);
    if (signal.aborted) throw cancelled();
    const started = Date.now();
    const until = handlerEnd(deadline, started, tool.timeoutMs);
    expire(until, `no result by its deadline (${Math.max(0, until - started)} ms after it started); it may have run`);
    const ctx: ToolContext = { signal, deadline: until, gate: gctx };
    // A handler that does not stop at once when aborted is not waited for.
    let onAbort: () => void = () => undefined;
    const stopped = new Promise<never>((_, reject) => {
      onAbort = () => reject(cancelled());
      signal.addEventListener("abort", onAbort, { once: true });
    });
    try {
      return toCallResult(await Promise.race([tool.handler(a, ctx), stopped]), tool);
    } finally {
      signal.removeEventListener("abort", onAbort);
    }
  } catch (e) {
    // SECURITY I-78: a failure may quote the page (a dialog's text, a page function's message).
    const err = asToolError(e);
    return toCallResult(ran?.readOnly ? forRead(err) : err, ran);
  } finally {
    clearTimeout(timer);
  }
}
