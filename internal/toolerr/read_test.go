package toolerr

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A read-only tool's timeout, dropped answer or lost link never says it
// "may have run"; other failures and other tools are left as they are.
func TestForReadSaysNothingChanged(t *testing.T) {
	r := Result(Timeout, "screenshot got no answer within its deadline (at most 50s); it may have run")
	ForRead(r)
	e := FromResult(r)
	text := r.Content[0].(*mcp.TextContent).Text
	if e.Message != "screenshot got no answer within its deadline (at most 50s); it only reads, so nothing changed" || e.Hint != ReadHint(Timeout) {
		t.Fatalf("rewritten: %+v", e)
	}
	if strings.Contains(text, "may have") || !strings.Contains(text, "hint: "+ReadHint(Timeout)) {
		t.Fatalf("text: %s", text)
	}
	r = Result(ExtensionNotConnected, "the daemon shut down during snapshot; it may have partly run")
	if e := FromResult(ForRead(r)); strings.Contains(e.Message, "may have") || e.Hint != ExtensionNotConnected.Hint() {
		t.Fatalf("lost link: %+v", e)
	}
	// A page-data frame on the text stays.
	r = Result(TooLarge, "dropped")
	r.Content[0].(*mcp.TextContent).Text = "[page data]\n" + r.Content[0].(*mcp.TextContent).Text
	r.StructuredContent.(map[string]any)["untrusted"] = "page"
	ForRead(r)
	if !strings.HasPrefix(r.Content[0].(*mcp.TextContent).Text, "[page data]\ntoo_large: dropped\nhint: "+ReadHint(TooLarge)) || r.StructuredContent.(map[string]any)["untrusted"] != "page" {
		t.Fatalf("framed: %+v", r)
	}
	// Not an error, or an error with nothing to say: untouched.
	ok := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "fine; it may have run"}}}
	if ForRead(ok).Content[0].(*mcp.TextContent).Text != "fine; it may have run" {
		t.Fatal("a success was rewritten")
	}
	nf := Result(NotFound, "nothing matched")
	if e := FromResult(ForRead(nf)); e.Hint != NotFound.Hint() || e.Message != "nothing matched" {
		t.Fatalf("not_found: %+v", e)
	}
}

// READ_HINTS in errors.ts and readHints here say the same.
func TestReadHintsMatchExtension(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "extension", "src", "tools", "errors.ts"))
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(`(?s)export const READ_HINTS[^=]*= \{(.*?)\n\}`).FindSubmatch(src)
	if block == nil {
		t.Fatal("errors.ts: READ_HINTS = { … } not found; update this parser with the file")
	}
	line := regexp.MustCompile(`(?m)^\s*([a-z_]+)\s*:\s*("(?:[^"\\]|\\.)*")\s*,?\s*$`)
	got := map[Code]string{}
	for _, m := range line.FindAllSubmatch(block[1], -1) {
		h, err := strconv.Unquote(string(m[2]))
		if err != nil {
			t.Fatal(err)
		}
		got[Code(m[1])] = h
	}
	if len(got) != len(readHints) {
		t.Fatalf("errors.ts has %d read hints, Go %d", len(got), len(readHints))
	}
	for c, h := range readHints {
		if got[c] != h {
			t.Errorf("read hint of %s:\n go: %s\n ts: %s", c, h, got[c])
		}
	}
}
