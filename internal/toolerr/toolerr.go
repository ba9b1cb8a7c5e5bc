// Package toolerr is the one Go list of browser-tool error codes, each with
// its one-line recovery hint, so an agent always learns its next step. The extension keeps the same
// list in extension/src/tools/errors.ts; a test parses that file and fails
// when the two drift. Tool failures travel as MCP results with isError:true,
// never as protocol errors, so the agent can read the code and act on it.
package toolerr

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Code is a stable snake_case error code.
type Code string

// The codes, in the order of ERROR_HINTS in errors.ts. `busy` means nothing
// was sent to the page; `timeout` means the action may have run.
const (
	NoTab                 Code = "no_tab"
	StaleRef              Code = "stale_ref"
	NotFound              Code = "not_found"
	NotVisible            Code = "not_visible"
	Covered               Code = "covered"
	NotEditable           Code = "not_editable"
	Disabled              Code = "disabled"
	Timeout               Code = "timeout"
	NavigationFailed      Code = "navigation_failed"
	Busy                  Code = "busy"
	ExtensionNotConnected Code = "extension_not_connected"
	DaemonRestarted       Code = "daemon_restarted"
	InvalidArgument       Code = "invalid_argument"
	ToolNotFound          Code = "tool_not_found"
	ScreenshotTooLarge    Code = "screenshot_too_large"
	DialogBlocking        Code = "dialog_blocking"
	NoDialog              Code = "no_dialog"
	UnsupportedPage       Code = "unsupported_page"
	DebuggerConflict      Code = "debugger_conflict"
	Paused                Code = "paused"
	Cancelled             Code = "cancelled"
	Internal              Code = "internal"
	TabNotOwned           Code = "tab_not_owned"
	OriginChanged         Code = "origin_changed"
	StaleDocument         Code = "stale_document"
	OriginNotAllowed      Code = "origin_not_allowed"
	ActModeOff            Code = "act_mode_off"
	EvalNotAllowed        Code = "eval_not_allowed"
	PasswordField         Code = "password_field"
	ApprovalDenied        Code = "approval_denied"
	ApprovalTimeout       Code = "approval_timeout"
	ApprovalUnanswerable  Code = "approval_unanswerable"
	HandoffActive         Code = "handoff_active"
	HandoffCancelled      Code = "handoff_cancelled"
	TooLarge              Code = "too_large"
	ProxySwitchOff        Code = "proxy_switch_off"
	ProfileInvalid        Code = "profile_invalid"
	ProxyControlled       Code = "proxy_controlled_elsewhere"
	ToolDisabled          Code = "tool_disabled"
	SecretNotFound        Code = "secret_not_found"
	SecretOriginMismatch  Code = "secret_origin_mismatch"
	SecretStoreLocked     Code = "secret_store_locked"
	PageError             Code = "page_error"
	SensitiveNotAllowed   Code = "sensitive_not_allowed"
	StorageNotAllowed     Code = "storage_not_allowed"
	ObserveOff            Code = "observe_off"
	SecretUnmaskable      Code = "secret_unmaskable"
	WrongDaemon           Code = "wrong_daemon"
)

type entry struct {
	code Code
	hint string
}

// list is the single source on the Go side; keep it in errors.ts order.
var list = []entry{
	{NoTab, "The tab does not exist (closed?); call tabs to list open tabs."},
	{StaleRef, "The ref is from another tab or an earlier document, or its element is gone; take a new snapshot."},
	{NotFound, "Nothing matched; take a snapshot or use find to see what the page offers."},
	{NotVisible, "The element is not visible; scroll to it, reveal it or wait for it."},
	{Covered, "Another element covers it; act on the covering element first (e.g. close the overlay)."},
	{NotEditable, "The element does not accept text; pick a textbox, textarea or contenteditable."},
	{Disabled, "The element is disabled; wait for it to become enabled or complete the form first."},
	{Timeout, "No answer in time; the action may have run. Check the page before retrying."},
	{NavigationFailed, "The page navigated or failed to load; take a new snapshot or navigate again."},
	{Busy, "Another call holds this tab; nothing was sent. Retry shortly."},
	{ExtensionNotConnected, "The Torii extension is not connected; open Chrome and check the Torii popup."},
	{DaemonRestarted, "The torii daemon stopped or restarted; the message says whether anything was sent. torii mcp reconnects by itself: if the call may have run, check the page, then call again (`torii status` shows the daemon)."},
	{InvalidArgument, "Check the arguments against the tool's input schema."},
	{ToolNotFound, "Call tools/list for the available tools."},
	{ScreenshotTooLarge, "Capture a region, an element (ref) or set maxWidth, or use JPEG."},
	{DialogBlocking, "A JavaScript dialog is open on this tab; call handle_dialog first."},
	{NoDialog, "No dialog is open on this tab."},
	{UnsupportedPage, "This page cannot be scripted (browser or store page); navigate to a web page."},
	{DebuggerConflict, "Another debugger (DevTools?) is attached to this tab; close it and retry."},
	{Paused, "The person paused Torii; ask them to resume it in the Torii popup."},
	{Cancelled, "The call was cancelled."},
	{Internal, "Unexpected failure in the extension; retry once, then report it."},
	{TabNotOwned, "Not one of this session's tabs; call tabs for yours, or navigate to open one."},
	{OriginChanged, "The granted tab moved to another origin; the grant does not follow it. Ask the person for a new grant."},
	{StaleDocument, "The granted tab's document was reloaded or replaced; ask the person to grant it again."},
	{OriginNotAllowed, "This page's origin is not on the person's allowlist; only the person can add it in the Torii popup or options. Nothing was read."},
	{ActModeOff, "Act mode is off: only the person can turn it on (Torii popup). Ask them; do not retry."},
	{EvalNotAllowed, "Code execution is off for this origin; only the person can enable it in the Torii options."},
	{PasswordField, "The target or focused field is a password field; pass allowPassword only if the person allowed passwords for this origin."},
	{ApprovalDenied, "The person denied this action; do not retry it without asking them."},
	{ApprovalTimeout, "The person did not answer the approval request in time; nothing was done. Ask them before retrying."},
	{ApprovalUnanswerable, "No one can answer an approval in this browser (started headless by torii launch, no Torii popup open); nothing was done. The launch policy decides it: ask the person to start the browser with --approve KIND=allow or deny (or \"approvals\" in --policy FILE), or with a window."},
	{HandoffActive, "The person is handling this tab (handoff); wait for the handoff call to return."},
	{HandoffCancelled, "The person cancelled the handoff; ask them how to continue."},
	{TooLarge, "The answer was over the link's 8 MiB frame cap and was dropped; it may have run. Ask for less (a region, a smaller snapshot or range) and retry."},
	{ProxySwitchOff, "The person has not allowed agents to switch the proxy; only they can, in the Torii options (Proxy profiles). Ask them; do not retry."},
	{ProfileInvalid, "The person's stored proxy profile is invalid; ask them to fix it in the Torii options (Proxy profiles)."},
	{ProxyControlled, "Another extension or the browser's policy controls the proxy; only the person can change that."},
	{ToolDisabled, "The tool's group is off; only the person can turn it on (broker.toolGroups in the daemon's config.json). Ask them; do not retry."},
	{SecretNotFound, "No secret has that name; call secrets for the names the person keeps, or ask them to add it in the Torii options."},
	{SecretOriginMismatch, "The secret is not bound to the origin of the field's document, or of where its form would send it; nothing was filled or sent. Only the person can add that origin to the secret (Torii options)."},
	{SecretStoreLocked, "The secret store is locked or cannot be read; nothing was filled. Only the person can unlock it in the Torii options."},
	{PageError, "The page's own function threw; read its message, then fix the arguments or call something else."},
	{SensitiveNotAllowed, "Sensitive capture is off for this origin; only the person can turn it on in the Torii options. Capture metadata instead, or ask them."},
	{StorageNotAllowed, "Reading cookies or storage is off for this origin; only the person can turn that switch on, in the Torii options. Nothing was read."},
	{ObserveOff, "Console and network capture is off for this origin; only the person can turn on its \"Console & network\" switch in the Torii options. Ask them; do not retry."},
	{SecretUnmaskable, "This tab received one of the person's secrets, and what was asked (pixels, a PDF, binary bytes) cannot be checked for it; nothing was returned. Read the page as text (snapshot, read_text), or work in a tab that never held a secret; the person can close this tab to clear it."},
	{WrongDaemon, "This client reached a Torii daemon that has no browser, while another daemon serves the person's browser (named in the message); nothing was sent. Start the client with the command the message gives (or `torii launch` prints), then stop this daemon with `torii stop`."},
}

var hints = func() map[Code]string {
	m := make(map[Code]string, len(list))
	for _, e := range list {
		m[e.code] = e.hint
	}
	return m
}()

// Codes lists every code in order.
func Codes() []Code {
	out := make([]Code, len(list))
	for i, e := range list {
		out[i] = e.code
	}
	return out
}

// Valid reports whether s is a known code.
func Valid(s string) bool { _, ok := hints[Code(s)]; return ok }

// Hint is the code's one-line recovery hint ("" for an unknown code).
func (c Code) Hint() string { return hints[c] }

// Error is a tool failure: a code, what happened, and what to do next.
type Error struct {
	Code    Code   `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// New builds an Error with the code's standard hint.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...), Hint: code.Hint()}
}

// Result is the MCP result of a failure, the same shape the extension's
// errorResult produces: text `<code>: <message>\nhint: <hint>` plus
// structuredContent {error:{code, message, hint}}, isError true.
func (e *Error) Result() *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: string(e.Code) + ": " + e.Message + "\nhint: " + e.Hint}},
		StructuredContent: map[string]any{"error": map[string]any{"code": string(e.Code), "message": e.Message, "hint": e.Hint}},
		IsError:           true,
	}
}

// Result is shorthand for New(code, …).Result().
func Result(code Code, format string, args ...any) *mcp.CallToolResult {
	return New(code, format, args...).Result()
}

// FromResult extracts the typed error of an isError result (nil when the
// result is not an error or carries no structured code).
func FromResult(r *mcp.CallToolResult) *Error {
	if r == nil || !r.IsError || r.StructuredContent == nil {
		return nil
	}
	var w struct {
		Error *Error `json:"error"`
	}
	b, err := json.Marshal(r.StructuredContent)
	if err != nil || json.Unmarshal(b, &w) != nil || w.Error == nil || w.Error.Code == "" {
		return nil
	}
	return w.Error
}
