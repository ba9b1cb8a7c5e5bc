package broker

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The extension sends a page once; the agent gets it in both parts.
func TestAddTextPutsTheTextBlockIntoStructuredContent(t *testing.T) {
	t.Parallel()
	res := &mcp.CallToolResult{
		Content:           []mcp.Content{&mcp.TextContent{Text: "tab 1 · T · u\nbutton \"Go\" [b1]"}},
		StructuredContent: map[string]any{"tabId": 1.0},
		Meta:              mcp.Meta{MetaText: true, MetaKey: map[string]any{}},
	}
	addText(res)
	sc := res.StructuredContent.(map[string]any)
	if sc["text"] != "tab 1 · T · u\nbutton \"Go\" [b1]" || sc["tabId"] != 1.0 {
		t.Fatalf("structuredContent %v", sc)
	}
	if _, left := res.Meta[MetaText]; left || res.Meta == nil {
		t.Fatalf("meta %v: the marker goes, the rest stays", res.Meta)
	}

	// Without the marker (a whole result, an error), nothing is added.
	whole := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "1 match"}}, StructuredContent: map[string]any{"total": 1.0}}
	addText(whole)
	if _, added := whole.StructuredContent.(map[string]any)["text"]; added {
		t.Fatal("text added to a result that did not ask for it")
	}
	// A marker on a result without structured data only goes away.
	bare := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "x"}}, Meta: mcp.Meta{MetaText: true}}
	addText(bare)
	if bare.Meta != nil || bare.StructuredContent != nil {
		t.Fatalf("bare result became %+v", bare)
	}
}
