// Wire types of the in-page engine (page.js). Every call takes and returns plain JSON, because the
// service worker reaches the engine through chrome.scripting.executeScript({func, args}).
// The worker imports these types; nothing here touches the DOM.

/**
 * The engine's wire protocol; the worker runs only an engine of this one (an older one left in a
 * document is replaced). 2: every call names the origin the worker allowed, every reply carries
 * the document's own. 3: refs are the document's tag and a number (SECURITY I-63).
 */
export const PROTOCOL = 3;

/** Stable error codes the engine returns; the worker maps them onto MCP tool errors. */
export type PageErrorCode =
  | "password_field"
  | "stale_ref"
  | "not_found"
  | "not_visible"
  | "covered"
  | "not_editable"
  | "disabled"
  | "invalid_argument"
  | "unknown_method"
  | "origin_not_allowed"
  | "secret_not_found"
  | "secret_origin_mismatch";

export interface PageError {
  code: PageErrorCode;
  message: string;
  /** One line telling the agent how to recover. */
  hint: string;
}

/**
 * Envelope of every __torii.call(...). `refTag` is the document's ref tag once it issued a ref;
 * `origin` and `url` are the answering document's own (self.origin, location.href in the isolated
 * world), which the worker judges before it uses the answer.
 */
export type Reply<T = unknown> =
  | { ok: true; docId: string; refTag?: string; origin: string; url: string; value: T }
  | { ok: false; docId: string; refTag?: string; origin: string; url: string; error: PageError };

/** Fields every call accepts. */
interface CallBase {
  /** A fresh tag the worker offers, taken only by a document that has issued no ref yet. */
  refTag?: string;
  /** When set, a ref-taking call fails with stale_ref unless the engine's docId matches. */
  docId?: string;
}

/** An element is named by a ref ("b12") or a CSS selector (searched through open shadow roots too). */
export interface Target {
  ref?: string;
  selector?: string;
}

export interface SnapshotArgs extends CallBase {
  /** Subtree only: a ref or a CSS selector. */
  root?: string;
  /** Only lines with refs, plus the headings that give them context. */
  interactive?: boolean;
  maxChars?: number;
  cursor?: string;
  /** Only what changed since this document's previous snapshot with the same root/interactive. */
  diff?: boolean;
}

/** A cross-origin iframe the worker must snapshot separately and stitch in at `line`. */
export interface FramePlaceholder {
  /** Ordinal of the placeholder in this snapshot, as printed in `[frame=N]`. */
  frame: number;
  /** chrome.runtime.getFrameId(iframe) when the engine runs as an extension script; else absent. */
  frameId?: number;
  /** Index of the iframe's window in its parent's window.frames (when the parent is this document). */
  windowIndex?: number;
  src: string;
  origin: string;
  title: string;
  /** 0-based line index of the placeholder in the full (unpaginated, non-diff) outline. */
  line: number;
  /** Indentation depth of the placeholder line; the child's outline goes at depth + 1. */
  depth: number;
}

export interface SnapshotResult {
  docId: string;
  url: string;
  title: string;
  text: string;
  /** The document's ref tag once it issued a ref. */
  refTag?: string;
  nextCursor?: string;
  /** Set for diff results and when diff was asked without a previous snapshot. */
  note?: string;
  diff?: { added: number; removed: number };
  frames: FramePlaceholder[];
  stats: { nodes: number; lines: number; chars: number; ms: number };
}

export interface FindArgs extends CallBase {
  role?: string;
  name?: string;
  text?: string;
  limit?: number;
  root?: string;
}

export interface FindResult {
  docId: string;
  /** Matches in snapshot line format, exact matches first. */
  matches: { line: string; ref?: string; exact: boolean }[];
  total: number;
}

/** Why reveal stopped: the target is rendered, every place was searched, a bound, or nothing scrolls. */
export type RevealStop = "found" | "end" | "maxScrolls" | "time" | "static";

export interface RevealResult extends FindResult {
  found: boolean;
  stop: RevealStop;
  /** Scroll steps taken, jumps included. */
  scrolls: number;
  /** Jumps to where a numbered row should be, from the pitch of the rows in view. */
  jumps: number;
  scrollY: number;
  /** The list's full height, so a stop short of its end says how far it got. */
  scrollHeight: number;
  clientHeight: number;
  /** Stopped at a bound (maxScrolls or the time budget) before every place was searched. */
  capped: boolean;
  /** The ranges of the list's content (px from its top) that were rendered and searched. */
  searched: { from: number; to: number }[];
  ms: number;
  /** "page" or the ref of the scroller. */
  container: string;
}

export interface ReadTextArgs extends CallBase {
  offset?: number;
  maxChars?: number;
  root?: string;
}

export interface ReadTextResult {
  text: string;
  /** Offsets and totals are in Unicode code points. */
  offset: number;
  nextOffset?: number;
  total: number;
}

export interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface ElementState {
  exists: boolean;
  visible: boolean;
  enabled: boolean;
  checked?: boolean | "mixed";
  box: Box;
  inViewport: boolean;
  focused: boolean;
  role: string;
  name: string;
  tag: string;
  editable: boolean;
  isPassword: boolean;
  ref?: string;
  href?: string;
}

export interface PointResult {
  /** Viewport coordinates of this engine's top document (same-origin iframes included). */
  x: number;
  y: number;
  box: Box;
  scrolled: boolean;
  covered?: { ref?: string; role: string; name: string; tag: string };
}

export interface FillArgs extends CallBase {
  ref?: string;
  selector?: string;
  value: string;
  mode?: "set" | "insertText";
  /** The values of the `{{secret:NAME}}` references in `value` (SECURITY I-69). */
  secrets?: import("../secrets/template").SecretBundle;
  /** SECURITY I-18: the call may touch no password field: a password target is refused, nothing set. */
  noPassword?: boolean;
}

export interface SelectArgs extends CallBase {
  ref?: string;
  selector?: string;
  values?: string[];
  labels?: string[];
  indexes?: number[];
}

export interface ScrollArgs extends CallBase {
  ref?: string;
  to?: "top" | "bottom";
  dx?: number;
  dy?: number;
}

export interface ScrollResult {
  scrollY: number;
  scrollX: number;
  atBottom: boolean;
  atTop: boolean;
  /** "page" or the ref of the scrolled container. */
  container: string;
}

export interface RevealArgs extends FindArgs {
  /** Optional ref or CSS selector of the scroll container; default: the largest scrollable element. */
  container?: string;
  /** The target as a CSS selector, instead of role/name/text. */
  selector?: string;
  maxScrolls?: number;
  /** Time bound of the whole search (the worker passes what its deadline leaves). */
  budgetMs?: number;
}

export interface WaitForArgs extends CallBase {
  selector?: string;
  ref?: string;
  text?: string;
  state?: "appear" | "disappear";
  timeoutMs?: number;
}

export interface SettleArgs extends CallBase {
  quietMs?: number;
  timeoutMs?: number;
}
