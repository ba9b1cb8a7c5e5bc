package broker

import "github.com/modelcontextprotocol/go-sdk/mcp"

// MetaText (result _meta, true) says the extension left the text block
// out of structuredContent: a page crosses the link once, and the broker
// puts it back as structuredContent.text, so an agent whose client reads
// only one of the two parts still sees the whole result
// (extension/src/tools/define.ts toCallResult). The string is shared, not
// copied.
const MetaText = "torii/text"

// takeMeta reads and strips one key of a result's _meta, the extension's
// bookkeeping for the daemon (MetaKey, MetaAudit, MetaText): the agent gets
// the result without it.
func takeMeta(res *mcp.CallToolResult, key string) (any, bool) {
	if res == nil || res.Meta == nil {
		return nil, false
	}
	v, ok := res.Meta[key]
	if !ok {
		return nil, false
	}
	delete(res.Meta, key)
	if len(res.Meta) == 0 {
		res.Meta = nil
	}
	return v, true
}

// addText reads and strips MetaText and copies the first text block into
// structuredContent.
func addText(res *mcp.CallToolResult) {
	v, ok := takeMeta(res, MetaText)
	if !ok {
		return
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
