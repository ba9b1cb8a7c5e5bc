// defineTool: one registry entry per tool — name, description, input schema, traits (what it reads,
// what it can cause, which switches apply, how dialogs and handoff affect it) and handler in one
// place. tools/list (the compact wire form, schema.ts wireSchema), validation (the
// full schema) and docs/tools.md are derived from these entries.
// Importing this file (or any tool file) touches no chrome.* API, so node can load the registry.

import { errorResult, ToolError, type CallToolResult } from "./errors.js";
import type { JsonSchema } from "./schema.js";
import type { GateContext } from "./gate.js";
import { DESTRUCTIVE_EFFECTS, type Traits } from "./traits.js";

/**
 * The most any tool's handler runs, and the default: with the person's answer, the daemon's queue
 * and the link, a call still ends before the common MCP clients' 60 s request timeout, so the agent
 * hears Torii's typed error, not its client's bare timeout (SECURITY I-80).
 */
export const MAX_TOOL_TIMEOUT_MS = 50_000;
/**
 * The most an agent's own `timeoutMs` argument may ask for (a page load, a handoff's wait): the
 * tool's work around it (the navigation's start, the look after it) fits in MAX_TOOL_TIMEOUT_MS.
 */
export const MAX_ARG_TIMEOUT_MS = 45_000;

export interface ToolContext {
  /** Aborted by mcp/cancel, by the call's deadline, or when the connection goes. */
  signal: AbortSignal;
  /** Epoch ms by which the whole call must have answered. */
  deadline: number;
  /** What the gate decided for this call (origin, password permission); absent in unit tests. */
  gate?: GateContext;
}

/** An MCP resource_link content block, as the daemon answers a saved file (files.ts putFile). */
export interface ResourceLink {
  type: "resource_link";
  /** torii://files/<session folder>/<name>: readable through resources/read by this session only. */
  uri: string;
  /** The file's final name in the sandbox (a taken name gets " (2)"…). */
  name: string;
  mimeType: string;
  /** Bytes on disk. */
  size: number;
}

/**
 * What a handler returns; the registry turns it into an MCP CallToolResult. Some clients hand the
 * model the text block, others structuredContent alone: each must hold the whole result, once.
 */
export interface ToolOutput {
  /** The whole result as the model reads it (first content block). */
  text: string;
  /**
   * The same result as fields (structuredContent). Unless `whole`, the text goes with it under
   * `text` (the outline, the page's text, what the action did): fields beside it are metadata.
   */
  data?: Record<string, unknown>;
  /** `data` alone already says everything `text` says (e.g. find's matches carry their lines). */
  whole?: boolean;
  images?: { data: string; mimeType: string }[];
  /** Files saved in the session's download sandbox (files.ts putFile): resource_link blocks after the text. */
  resources?: ResourceLink[];
}

/**
 * The groups a tool beyond the core ones belongs to. Every agent turn pays for the whole catalogue,
 * so the daemon offers a group's tools only when the person turned the group on (config
 * broker.toolGroups); its calls are refused (tool_disabled) while it is off.
 */
export type ToolGroup = "devtools" | "storage" | "emulation" | "pdf" | "proxy" | "invoke";

export interface ToolDef<A = Record<string, unknown>> {
  name: string;
  /** Absent for a core tool, always offered. */
  group?: ToolGroup;
  /**
   * One short sentence: tools/list is paid for on every agent turn. Conventions shared by every
   * tool (tabId, refs, waitFor, observe) are in the server instructions, not here.
   */
  description: string;
  inputSchema: JsonSchema & { type: "object" };
  traits: Traits;
  /** Repeating the call with the same arguments has no further effect; default: readOnly. */
  idempotent?: boolean;
  /** The handler's deadline; default and most: MAX_TOOL_TIMEOUT_MS (registry.ts handlerEnd). */
  timeoutMs?: number;
  handler(args: A, ctx: ToolContext): Promise<ToolOutput>;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = Tool<any>;

/** A registered tool: its definition plus what is derived from the traits. */
export type Tool<A = Record<string, unknown>> = ToolDef<A> & {
  /** No effects: never changes the page (tools/list's readOnlyHint, ownership's read scope). */
  readonly readOnly: boolean;
  /** One of its effects is destructive (DESTRUCTIVE_EFFECTS; tools/list's destructiveHint). */
  readonly destructive: boolean;
};

const TARGETS = new Set(["none", "tab", "tab-or-new"]);
const READS = new Set(["none", "page", "pixels", "tabs"]);
const EFFECTS = new Set<string>(Object.keys(DESTRUCTIVE_EFFECTS));
const SWITCHES = new Set(["act", "evaluate", "fetch", "invoke", "proxy", "cookies", "storage", "observe", "none"]);
const DIALOG = new Set(["blocked", "answers", "ignores"]);
const HANDOFF = new Set(["refused", "allowed"]);

/**
 * Checks a definition's traits and freezes them. A tool with a missing or unknown trait is a
 * programming error caught when the registry loads, not a call that slips past a gate.
 */
export function defineTool<A>(def: ToolDef<A>): Tool<A> {
  if (!/^[a-z][a-z0-9_]{0,63}$/.test(def.name)) throw new Error(`bad tool name ${def.name}`);
  const t = def.traits as Partial<Traits> | undefined;
  const bad = (what: string) => new Error(`tool ${def.name}: traits.${what} is missing or unknown`);
  if (!t) throw bad("*");
  if (!TARGETS.has(String(t.target))) throw bad("target");
  if (!READS.has(String(t.reads))) throw bad("reads");
  if (!Array.isArray(t.effects) || !t.effects.every((e) => EFFECTS.has(e))) throw bad("effects");
  if (!SWITCHES.has(String(t.switch))) throw bad("switch");
  if (!DIALOG.has(String(t.dialog))) throw bad("dialog");
  if (!HANDOFF.has(String(t.handoff))) throw bad("handoff");
  // A tool that changes the page needs a switch the person sets; one that opens a URL says which.
  if (t.effects.length > 0 && t.switch === "none") throw bad("switch");
  if ((t.target === "tab-or-new" || t.effects.includes("navigation")) && t.switch !== "act") throw bad("switch");
  // Effects nobody can know are those of code: declared on a code tool only.
  if (t.anyEffect !== undefined && (t.anyEffect !== true || !t.effects.includes("code"))) throw bad("anyEffect");
  if (def.inputSchema.additionalProperties === undefined) def.inputSchema.additionalProperties = false;
  // SECURITY I-80: no entry can ask for a wait past the cap, however it is written.
  if (def.timeoutMs !== undefined && !(def.timeoutMs > 0 && def.timeoutMs <= MAX_TOOL_TIMEOUT_MS)) {
    throw new Error(`tool ${def.name}: timeoutMs must be from 1 to ${MAX_TOOL_TIMEOUT_MS}`);
  }
  const argMax = def.inputSchema.properties?.timeoutMs?.maximum;
  if (def.inputSchema.properties?.timeoutMs && !(argMax !== undefined && argMax <= MAX_ARG_TIMEOUT_MS)) {
    throw new Error(`tool ${def.name}: the timeoutMs argument needs a maximum of at most ${MAX_ARG_TIMEOUT_MS}`);
  }
  Object.freeze(t.effects);
  Object.freeze(t);
  return Object.assign(def, { readOnly: t.effects.length === 0, destructive: def.traits.effects.some((e) => DESTRUCTIVE_EFFECTS[e]) });
}

/**
 * `_meta` key of a result whose structuredContent is to carry the text block as `text`: the daemon
 * copies it in (internal/broker/text.go), so a page crosses the link once, not twice.
 */
export const META_TEXT = "torii/text";

/**
 * SECURITY I-78: what a page wrote is data, never instructions to the agent. Every result of a tool
 * whose traits say it reads the page (its content, pixels or the tab list: titles and URLs), and
 * every failure of one whose arguments passed the schema, starts its first text block with this
 * line, and its structuredContent (when it has one) carries PAGE_DATA_FIELD. A header, not a
 * fence: nothing the page writes below it can close it, so there is no closing line to fake. The
 * server instructions say what it means (mcp/provider.ts INSTRUCTIONS).
 */
export const PAGE_DATA_MARK = "[page data]";
/**
 * `_meta` key by which toCallResult says a result is page data; framePageData, the last step of
 * callTool, reads and strips it and frames the result, after the secrets' mask, which would
 * otherwise mask a secret as short as "a" or "page" inside the frame too.
 */
export const META_PAGE = "torii/page";
/** The structuredContent field of a page-data result, for a client that hands the model only that part. */
export const PAGE_DATA_FIELD = "untrusted";
export const PAGE_DATA_SOURCE = "page";

/** The tool's results may carry what a page wrote (SECURITY I-78): derived from `reads` alone. */
export function readsPage(t: { traits: Traits }): boolean {
  return t.traits.reads !== "none";
}

/**
 * The MCP result of an output, or of a failure (errors.ts errorResult). structuredContent is the
 * whole result or absent: with `whole` the data, else the data plus the text (added by the
 * daemon, META_TEXT); absent without data, and absent beside an image, which only the content
 * blocks can carry (a client reading structuredContent falls back to them). A tool that reads the
 * page gets META_PAGE: its result leaves callTool framed as page data (SECURITY I-78).
 */
export function toCallResult(out: ToolOutput | ToolError, tool?: { traits: Traits }): CallToolResult {
  const r = out instanceof ToolError ? errorResult(out) : outputResult(out);
  if (tool && readsPage(tool)) r._meta = { ...r._meta, [META_PAGE]: true };
  return r;
}

function outputResult(out: ToolOutput): CallToolResult {
  const r: CallToolResult = { content: [{ type: "text", text: out.text }] };
  const images = out.images ?? [];
  for (const img of images) r.content.push({ type: "image", data: img.data, mimeType: img.mimeType });
  for (const l of out.resources ?? []) r.content.push({ ...l });
  if (out.data && images.length === 0) {
    r.structuredContent = out.data;
    if (!out.whole) r._meta = { [META_TEXT]: true };
  }
  return r;
}

/**
 * SECURITY I-78: a result toCallResult marked META_PAGE, framed: the marker line before its first
 * text block (which the daemon copies into structuredContent.text), and the field set after the
 * handler's fields, so that none of them (a page's answer spread into the data) can replace it.
 * Its place among the keys is not kept: the daemon re-encodes structuredContent with its keys
 * sorted. Any other result is returned as it is; a result that replaced a marked one (a refused
 * download, an unreadable secret store) is Torii's own words and has no META_PAGE.
 */
export function framePageData(r: CallToolResult): CallToolResult {
  if (r._meta?.[META_PAGE] !== true) return r;
  const { [META_PAGE]: _page, ...meta } = r._meta;
  void _page;
  const i = r.content.findIndex((c) => c.type === "text");
  const content = r.content.map((c, j) => (j === i && c.type === "text" ? { ...c, text: `${PAGE_DATA_MARK}\n${c.text}` } : c));
  if (i < 0) content.unshift({ type: "text", text: PAGE_DATA_MARK });
  const out: CallToolResult = { ...r, content };
  if (Object.keys(meta).length > 0) out._meta = meta;
  else delete out._meta;
  if (r.structuredContent) out.structuredContent = { ...r.structuredContent, [PAGE_DATA_FIELD]: PAGE_DATA_SOURCE };
  return out;
}
