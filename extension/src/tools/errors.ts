// The stable error codes of the browser tools, each with a one-line recovery hint. The daemon keeps
// the same list in Go (internal/toolerr); keep names stable. `busy` means nothing was sent to the
// page; `timeout` means the action may have run.

export const ERROR_HINTS = {
  no_tab: "The tab does not exist (closed?); call tabs to list open tabs.",
  stale_ref: "The ref is from another tab or an earlier document, or its element is gone; take a new snapshot.",
  not_found: "Nothing matched; take a snapshot or use find to see what the page offers.",
  not_visible: "The element is not visible; scroll to it, reveal it or wait for it.",
  covered: "Another element covers it; act on the covering element first (e.g. close the overlay).",
  not_editable: "The element does not accept text; pick a textbox, textarea or contenteditable.",
  disabled: "The element is disabled; wait for it to become enabled or complete the form first.",
  timeout: "No answer in time; the action may have run. Check the page before retrying.",
  navigation_failed: "The page navigated or failed to load; take a new snapshot or navigate again.",
  busy: "Another call holds this tab; nothing was sent. Retry shortly.",
  extension_not_connected: "The Torii extension is not connected; open Chrome and check the Torii popup.",
  daemon_restarted: "The torii daemon stopped or restarted; the message says whether anything was sent. torii mcp reconnects by itself: if the call may have run, check the page, then call again (`torii status` shows the daemon).",
  invalid_argument: "Check the arguments against the tool's input schema.",
  tool_not_found: "Call tools/list for the available tools.",
  screenshot_too_large: "Capture a region, an element (ref) or set maxWidth, or use JPEG.",
  dialog_blocking: "A JavaScript dialog is open on this tab; call handle_dialog first.",
  no_dialog: "No dialog is open on this tab.",
  unsupported_page: "This page cannot be scripted (browser or store page); navigate to a web page.",
  debugger_conflict: "Another debugger (DevTools?) is attached to this tab; close it and retry.",
  paused: "The person paused Torii; ask them to resume it in the Torii popup.",
  cancelled: "The call was cancelled.",
  internal: "Unexpected failure in the extension; retry once, then report it.",
  tab_not_owned: "Not one of this session's tabs; call tabs for yours, or navigate to open one.",
  origin_changed: "The granted tab moved to another origin; the grant does not follow it. Ask the person for a new grant.",
  stale_document: "The granted tab's document was reloaded or replaced; ask the person to grant it again.",
  origin_not_allowed: "This page's origin is not on the person's allowlist; only the person can add it in the Torii popup or options. Nothing was read.",
  act_mode_off: "Act mode is off: only the person can turn it on (Torii popup). Ask them; do not retry.",
  eval_not_allowed: "Code execution is off for this origin; only the person can enable it in the Torii options.",
  password_field: "The target or focused field is a password field; pass allowPassword only if the person allowed passwords for this origin.",
  approval_denied: "The person denied this action; do not retry it without asking them.",
  approval_timeout: "The person did not answer the approval request in time; nothing was done. Ask them before retrying.",
  approval_unanswerable: "No one can answer an approval in this browser (started headless by torii launch, no Torii popup open); nothing was done. The launch policy decides it: ask the person to start the browser with --approve KIND=allow or deny (or \"approvals\" in --policy FILE), or with a window.",
  handoff_active: "The person is handling this tab (handoff); wait for the handoff call to return.",
  handoff_cancelled: "The person cancelled the handoff; ask them how to continue.",
  too_large: "The answer was over the link's 8 MiB frame cap and was dropped; it may have run. Ask for less (a region, a smaller snapshot or range) and retry.",
  proxy_switch_off: "The person has not allowed agents to switch the proxy; only they can, in the Torii options (Proxy profiles). Ask them; do not retry.",
  profile_invalid: "The person's stored proxy profile is invalid; ask them to fix it in the Torii options (Proxy profiles).",
  proxy_controlled_elsewhere: "Another extension or the browser's policy controls the proxy; only the person can change that.",
  tool_disabled: "The tool's group is off; only the person can turn it on (broker.toolGroups in the daemon's config.json). Ask them; do not retry.",
  secret_not_found: "No secret has that name; call secrets for the names the person keeps, or ask them to add it in the Torii options.",
  secret_origin_mismatch: "The secret is not bound to the origin of the field's document, or of where its form would send it; nothing was filled or sent. Only the person can add that origin to the secret (Torii options).",
  secret_store_locked: "The secret store is locked or cannot be read; nothing was filled. Only the person can unlock it in the Torii options.",
  page_error: "The page's own function threw; read its message, then fix the arguments or call something else.",
  sensitive_not_allowed: "Sensitive capture is off for this origin; only the person can turn it on in the Torii options. Capture metadata instead, or ask them.",
  storage_not_allowed: "Reading cookies or storage is off for this origin; only the person can turn that switch on, in the Torii options. Nothing was read.",
  observe_off: "Console and network capture is off for this origin; only the person can turn on its \"Console & network\" switch in the Torii options. Ask them; do not retry.",
  secret_unmaskable: "This tab received one of the person's secrets, and what was asked (pixels, a PDF, binary bytes) cannot be checked for it; nothing was returned. Read the page as text (snapshot, read_text), or work in a tab that never held a secret; the person can close this tab to clear it.",
  wrong_daemon:
    "This client reached a Torii daemon that has no browser, while another daemon serves the person's browser (named in the message); nothing was sent. Start the client with the command the message gives (or `torii launch` prints), then stop this daemon with `torii stop`.",
} as const;

export type ErrorCode = keyof typeof ERROR_HINTS;

/**
 * The hints that replace a code's own when the tool that failed only reads (no effects): the
 * standard ones say the action may have run, which a read never did. Kept in step with
 * internal/toolerr read.go.
 */
export const READ_HINTS: Partial<Record<ErrorCode, string>> = {
  timeout: "No answer in time; this tool only reads, so nothing on the page changed. Retry it, or ask for less (a region, a smaller range).",
  too_large: "The answer was over the link's 8 MiB frame cap and was dropped; this tool only reads, so nothing changed. Ask for less (a region, a smaller snapshot or range) and retry.",
};

/** A read-only tool's failure: a timeout or a dropped answer never says it "may have run". */
export function forRead(e: ToolError): ToolError {
  const hint = READ_HINTS[e.code];
  const message = e.message.replace(/; it may have (partly )?run/g, "; it only reads, so nothing changed");
  if (message === e.message && (!hint || e.hint !== ERROR_HINTS[e.code])) return e;
  return new ToolError(e.code, message, hint && e.hint === ERROR_HINTS[e.code] ? hint : e.hint, e.data);
}

export const ERROR_CODES = Object.keys(ERROR_HINTS) as ErrorCode[];

export function isErrorCode(s: unknown): s is ErrorCode {
  return typeof s === "string" && Object.prototype.hasOwnProperty.call(ERROR_HINTS, s);
}

/** A tool failure the agent can act on; becomes an `isError` MCP result, never a JSON-RPC error. */
export class ToolError extends Error {
  override name = "ToolError";
  readonly hint: string;
  constructor(
    readonly code: ErrorCode,
    message: string,
    hint?: string,
    /** Extra structured fields (e.g. the covering element's ref). */
    readonly data?: Record<string, unknown>,
  ) {
    super(message);
    this.hint = hint ?? ERROR_HINTS[code];
  }
}

export function toolError(code: ErrorCode, message: string, hint?: string, data?: Record<string, unknown>): ToolError {
  return new ToolError(code, message, hint, data);
}

export interface CallToolResult {
  content: ({ type: "text"; text: string } | { type: "image"; data: string; mimeType: string } | { type: "resource_link"; uri: string; name: string; mimeType: string; size: number })[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** The MCP result of a failure: `<code>: <message>\nhint: <hint>` plus the same in structuredContent. */
export function errorResult(e: ToolError): CallToolResult {
  const error: Record<string, unknown> = { code: e.code, message: e.message, hint: e.hint, ...(e.data ?? {}) };
  return {
    content: [{ type: "text", text: `${e.code}: ${e.message}\nhint: ${e.hint}` }],
    structuredContent: { error },
    isError: true,
  };
}

/** Maps anything thrown (Chrome API errors included) onto a ToolError. */
export function asToolError(e: unknown): ToolError {
  if (e instanceof ToolError) return e;
  const msg = e instanceof Error ? e.message : String(e);
  return classifyChromeError(msg);
}

/** A URL in a browser message (http:, blob:, about:blank, data: …). */
const URL_RUN = /\b(?:https?|wss?|ftp|file|blob|data|about|javascript|filesystem|view-source|chrome-error):[^\s"'<>]*[^\s"'<>.,;:)]/gi;

/** A browser message without the URLs it quotes: they may name a page off the allowlist (SECURITY I-43). */
function withoutUrls(msg: string): string {
  return msg.replace(URL_RUN, "(a URL)");
}

/** Chrome's extension-API and CDP error strings → typed codes, without the URLs they quote. */
export function classifyChromeError(raw: string): ToolError {
  const m = raw.toLowerCase();
  const msg = withoutUrls(raw);
  if (/no tab with (given )?id|tab .*(closed|not found)|no target with given id|cannot find tab/.test(m)) {
    return toolError("no_tab", msg);
  }
  if (/another debugger is already attached/.test(m)) return toolError("debugger_conflict", msg);
  if (/detached while handling command|debugger is not attached|target closed|inspected target navigated or closed/.test(m)) {
    return toolError("navigation_failed", msg);
  }
  if (/cannot access (a |contents of)|cannot be scripted|chrome:\/\/|chrome-extension:\/\/|showing error page|extensions gallery|missing host permission|cannot attach to this target/.test(m)) {
    return toolError("unsupported_page", msg);
  }
  if (/frame with id \d+ (was removed|is not)|no frame with id|frame was removed|the frame was removed|document was unloaded|execution context was destroyed|no document with id/.test(m)) {
    return toolError("navigation_failed", msg);
  }
  return toolError("internal", msg);
}
