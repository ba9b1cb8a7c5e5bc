package broker

import "github.com/modelcontextprotocol/go-sdk/mcp"

// MetaText (result _meta, true) says the extension left the text block
// out of structuredContent: a page crosses the link once, and the broker
// puts it back as structuredContent.text, so an agent whose client reads
// only one of the two parts still sees the whole result
// (extension/src/tools/define.ts toCallResult). The string is shared, not
// copied.
const MetaText = "torii/text"

// addText reads and strips MetaText and copies the first text block into
// structuredContent.
func addText(res *mcp.CallToolResult) {
	if res == nil || res.Meta == nil {
		return
	}
	v, ok := res.Meta[MetaText]
	if !ok {
		return
	}
	delete(res.Meta, MetaText)
	if len(res.Meta) == 0 {
		res.Meta = nil
	}
	sc, ok := res.StructuredContent.(map[string]any)
	if v != true || !ok {
		return
	}
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			sc["text"] = t.Text
			return
		}
	}
}
