package broker

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Mirror keeps a go-sdk server's tools equal to the extension's catalogue:
// each tool is added with the raw handler (no typed In/Out, no validation:
// arguments pass through untouched and the extension validates them).
// The daemon's shared agent-facing server uses it (its sessions: /mcp and
// the `torii mcp` relays), and so does each gateway chat session's own
// server, whose catalogue is that chat's: the browser's tools plus the chat
// client's MCP servers' tools as <server>.<tool>.
type Mirror struct {
	srv     *mcp.Server
	handler mcp.ToolHandler

	mu   sync.Mutex
	have map[string]string // name -> JSON of the tool as added
}

// NewMirror mirrors into srv; every tool call goes to h.
func NewMirror(srv *mcp.Server, h mcp.ToolHandler) *Mirror {
	return &Mirror{srv: srv, handler: h, have: map[string]string{}}
}

// Set makes the server's tools exactly tools (the SDK tells connected
// clients with notifications/tools/list_changed).
func (m *Mirror) Set(tools []*mcp.Tool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	want := map[string]*mcp.Tool{}
	for _, t := range tools {
		if t != nil && t.Name != "" && objectSchema(t.InputSchema) {
			want[t.Name] = t
		}
	}
	var gone []string
	for name := range m.have {
		if want[name] == nil {
			gone = append(gone, name)
			delete(m.have, name)
		}
	}
	if len(gone) > 0 {
		m.srv.RemoveTools(gone...)
	}
	for name, t := range want {
		proxied := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description,
			InputSchema: t.InputSchema, Annotations: t.Annotations}
		b, _ := json.Marshal(proxied)
		if m.have[name] == string(b) {
			continue
		}
		m.have[name] = string(b)
		m.srv.AddTool(proxied, m.handler)
	}
}

// Has reports whether name is mirrored.
func (m *Mirror) Has(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.have[name]
	return ok
}

// UnknownTools is receiving middleware that sends tools/call for a name
// that is not mirrored to h instead of the SDK's bare "unknown tool"
// protocol error, so the agent gets a typed isError result
// (tool_not_found, or extension_not_connected before any catalogue).
func (m *Mirror) UnknownTools(h mcp.ToolHandler) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "tools/call" {
				if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil && !m.Has(r.Params.Name) {
					return h(ctx, r)
				}
			}
			return next(ctx, method, req)
		}
	}
}

func objectSchema(s any) bool {
	switch v := s.(type) {
	case map[string]any:
		return v["type"] == "object"
	case json.RawMessage:
		var m map[string]any
		return json.Unmarshal(v, &m) == nil && m["type"] == "object"
	}
	return false
}
