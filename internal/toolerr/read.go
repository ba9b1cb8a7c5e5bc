package toolerr

import (
	"regexp"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// readHints replace a code's hint when the tool that failed only reads
// (readOnlyHint): the standard hint says the action may have run, which a
// read never did, so it may be retried at once. Keep in step with
// READ_HINTS in extension/src/tools/errors.ts.
var readHints = map[Code]string{
	Timeout:  "No answer in time; this tool only reads, so nothing on the page changed. Retry it, or ask for less (a region, a smaller range).",
	TooLarge: "The answer was over the link's 8 MiB frame cap and was dropped; this tool only reads, so nothing changed. Ask for less (a region, a smaller snapshot or range) and retry.",
}

// ReadHint is code's hint for a read-only tool ("" when it has none of its own).
func ReadHint(code Code) string { return readHints[code] }

var mayHaveRun = regexp.MustCompile(`; it may have (partly )?run`)

// readOnlyRun is what a read-only tool's failure says instead of "it may have run".
const readOnlyRun = "; it only reads, so nothing changed"

// ForRead rewrites r, the failure of a tool that only reads, so that no
// timeout, dropped answer or lost link says the call "may have run". It
// edits in place (a page-data frame on the text stays) and returns r.
func ForRead(r *mcp.CallToolResult) *mcp.CallToolResult {
	e := FromResult(r)
	if e == nil {
		return r
	}
	msg := mayHaveRun.ReplaceAllString(e.Message, readOnlyRun)
	hint := e.Hint
	if h := readHints[e.Code]; h != "" && hint == e.Code.Hint() {
		hint = h
	}
	if msg == e.Message && hint == e.Hint {
		return r
	}
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			t.Text = strings.Replace(strings.Replace(t.Text, e.Message, msg, 1), "hint: "+e.Hint, "hint: "+hint, 1)
		}
	}
	if sc, ok := r.StructuredContent.(map[string]any); ok {
		sc["error"] = map[string]any{"code": string(e.Code), "message": msg, "hint": hint}
	} else {
		r.StructuredContent = map[string]any{"error": map[string]any{"code": string(e.Code), "message": msg, "hint": hint}}
	}
	return r
}
