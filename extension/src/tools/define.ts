// defineTool: one registry entry per tool — name, description, input schema, read/write class and
// handler in one place. tools/list (the compact wire form, schema.ts wireSchema), validation (the
// full schema) and docs/tools.md are derived from these entries.
// Importing this file (or any tool file) touches no chrome.* API, so node can load the registry.

import type { CallToolResult } from "./errors.js";
import type { JsonSchema } from "./schema.js";
import type { GateContext } from "./gate.js";

export interface ToolContext {
  /** Aborted by mcp/cancel, by the call's deadline, or when the connection goes. */
  signal: AbortSignal;
  /** Epoch ms by which the whole call must have answered. */
  deadline: number;
  /** What the gate decided for this call (origin, password permission); absent in unit tests. */
  gate?: GateContext;
}

/** What a handler returns; the registry turns it into an MCP CallToolResult. */
export interface ToolOutput {
  /** Text for the agent (first content block). */
  text: string;
  /** Machine-readable result (structuredContent). */
  data?: Record<string, unknown>;
  images?: { data: string; mimeType: string }[];
}

export interface ToolDef<A = Record<string, unknown>> {
  name: string;
  /**
   * One short sentence: tools/list is paid for on every agent turn. Conventions shared by every
   * tool (tabId, refs, waitFor, observe) are in the server instructions, not here.
   */
  description: string;
  inputSchema: JsonSchema & { type: "object" };
  /** Read tools never change the page; write tools do (policy and act mode key on this). */
  readOnly: boolean;
  /** Irreversible effect (e.g. closing a tab). */
  destructive?: boolean;
  /** Repeating the call with the same arguments has no further effect; default: readOnly. */
  idempotent?: boolean;
  /** Whole-call deadline; default 60 s. */
  timeoutMs?: number;
  handler(args: A, ctx: ToolContext): Promise<ToolOutput>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDef<any>;

export function defineTool<A>(def: ToolDef<A>): ToolDef<A> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(def.name)) throw new Error(`bad tool name ${def.name}`);
  if (def.inputSchema.additionalProperties === undefined) def.inputSchema.additionalProperties = false;
  return def;
}

export function toCallResult(out: ToolOutput): CallToolResult {
  const r: CallToolResult = { content: [{ type: "text", text: out.text }] };
  for (const img of out.images ?? []) r.content.push({ type: "image", data: img.data, mimeType: img.mimeType });
  if (out.data) r.structuredContent = out.data;
  return r;
}
