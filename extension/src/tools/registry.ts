// The tool registry: every tool, in catalogue order. tools/list, docs/tools.md and the daemon's
// pinned catalogue are all derived from this list; callTool is the single entry for execution
// (validate → gate → handler with deadline and cancellation → MCP result).

import type { AnyTool, ToolContext } from "./define.js";
import { toCallResult } from "./define.js";
import { asToolError, errorResult, toolError, ToolError, type CallToolResult } from "./errors.js";
import { gate } from "./gate.js";
import { SchemaError, validate } from "./schema.js";
import { closeTab, tabs } from "./tabs.js";
import { history, navigate, reload } from "./nav.js";
import { find, getState, readTextTool, snapshot } from "./query.js";
import { click, fill, hover, mouseClick, pressKey, selectOption, type } from "./input.js";
import { reveal, scroll } from "./scroll.js";
import { settle, waitFor } from "./wait.js";
import { screenshot } from "./screenshot.js";
import { handleDialog } from "./dialog.js";
import { WAIT_FOR_SCHEMA } from "./common.js";

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
  fill,
  type,
  pressKey,
  selectOption,
  scroll,
  reveal,
  handleDialog,
];

const byName = new Map(TOOLS.map((t) => [t.name, t]));

export function getTool(name: string): AnyTool | undefined {
  return byName.get(name);
}

export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;

export interface McpTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint?: boolean };
}

/** The tools/list entries, derived from the registry. */
export function listTools(): McpTool[] {
  return TOOLS.map((t) => ({
    name: t.name,
    description: t.description,
    inputSchema: t.inputSchema as unknown as Record<string, unknown>,
    annotations: t.readOnly ? { readOnlyHint: true } : { readOnlyHint: false, destructiveHint: t.destructive === true },
  }));
}

/** Runs one tools/call. Failures come back as isError results, never as thrown errors. */
export async function callTool(name: unknown, args: unknown, signal?: AbortSignal): Promise<CallToolResult> {
  try {
    if (typeof name !== "string") throw toolError("invalid_argument", "name: expected a tool name");
    const tool = byName.get(name);
    if (!tool) throw toolError("unknown_tool", `no tool named ${JSON.stringify(name)}`);
    const a = args === undefined || args === null ? {} : args;
    try {
      validate(tool.inputSchema, a);
      const w = (a as { waitFor?: unknown }).waitFor;
      if (w !== undefined && tool.inputSchema.properties?.waitFor) validate(WAIT_FOR_SCHEMA, w, "waitFor");
    } catch (e) {
      if (e instanceof SchemaError) throw toolError("invalid_argument", e.message, undefined, { field: e.field });
      throw e;
    }
    await gate({ tool, args: a as Record<string, unknown> });
    const ms = tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS;
    const ctl = new AbortController();
    const onAbort = () => ctl.abort(signal?.reason);
    if (signal?.aborted) throw toolError("cancelled", `${name}: cancelled`);
    signal?.addEventListener("abort", onAbort, { once: true });
    const timer = setTimeout(() => ctl.abort(toolError("timeout", `${name}: no result within ${ms} ms; it may have run`)), ms);
    const ctx: ToolContext = { signal: ctl.signal, deadline: Date.now() + ms };
    try {
      const out = await Promise.race([
        tool.handler(a, ctx),
        new Promise<never>((_, reject) => {
          const fail = () => reject(ctl.signal.reason instanceof ToolError ? ctl.signal.reason : toolError("cancelled", `${name}: cancelled`));
          if (ctl.signal.aborted) fail();
          ctl.signal.addEventListener("abort", fail, { once: true });
        }),
      ]);
      return toCallResult(out);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    }
  } catch (e) {
    return errorResult(asToolError(e));
  }
}
