package gateway

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/toolerr"
)

// CodeToolNotPinned is the pin refusal: the tool exists on an allowed
// client-declared server, but the operator did not pin it. It is the
// gateway's own code (not a browser-tool code of internal/toolerr).
const CodeToolNotPinned = "tool_not_pinned"

func (g *Gateway) allowed(server string) bool {
	return slices.Contains(g.conf().Policy.Allow, server)
}

// pinned: deny-all unless a pin of its own server names the tool
// (SECURITY I-35, I-64: config.PinMatches).
func (g *Gateway) pinned(server, tool string) bool {
	return g.conf().Policy.PinFor(server, tool) != ""
}

// connectServer opens the MCP-over-ACP connection to one declared server
// and registers it under (session, server name). A server that is not
// allowed is never connected; one that fails initialize is never
// registered.
func (s *Session) connectServer(c *link.Conn, gen int, srv acp.MCPServer) {
	g := s.g
	if srv.Name == "torii" && c.Info().Kind == link.KindDevice {
		return // the extension's own browser-tool server reaches agents through the broker
	}
	if !g.allowed(srv.Name) {
		g.noteDeclared(srv.Name, false, nil)
		g.log.Info("gateway: declared MCP server not in mcpServers.allow; not connected", "session", s.ID, "server", srv.Name)
		return
	}
	br, err := mcpbridge.Connect(c.Context(), c, srv, mcpbridge.Options{ClientName: "torii", ClientVersion: g.opts.Version,
		Logger: g.log, ConnectTimeout: g.opts.BridgeTimeout})
	if err != nil {
		g.log.Warn("gateway: declared MCP server not registered", "session", s.ID, "server", srv.Name, "err", err)
		return
	}
	s.mu.Lock()
	if s.closed || s.attachGen != gen || s.conn != c {
		s.mu.Unlock()
		br.Close() // this attach was replaced meanwhile
		return
	}
	old := s.bridges[srv.Name]
	s.bridges[srv.Name] = br
	s.mu.Unlock()
	if old != nil && old != br {
		go old.Close() // same name re-declared: last attach wins
	}
	context.AfterFunc(br.Context(), func() {
		s.mu.Lock()
		gone := s.bridges[srv.Name] == br
		if gone {
			delete(s.bridges, srv.Name)
		}
		s.mu.Unlock()
		if gone {
			s.refreshTools()
		}
	})
	g.noteDeclared(srv.Name, true, nonNil(br.Tools()))
	s.refreshTools()
}

func nonNil(t []*mcp.Tool) []*mcp.Tool {
	if t == nil {
		return []*mcp.Tool{}
	}
	return t
}

func pinRefusal(server, tool string) *mcp.CallToolResult {
	e := &toolerr.Error{Code: CodeToolNotPinned, Message: "tool " + tool + " of MCP server " + server + " is not pinned by the operator",
		Hint: "Only the tools pinned in config.json mcpServers.pins may be called; call tools/list for them."}
	return e.Result()
}

// callDeclared calls the tool exposed as name on the client-declared
// server, within the pins; the server gets the tool's own (fetched) name.
// A name the connected server does not offer is tool_not_found before the
// pin check: "not pinned" would send the agent to ask for a pin that cannot
// exist. Nothing is sent either way.
func (s *Session) callDeclared(ctx context.Context, server, name string, args json.RawMessage) *mcp.CallToolResult {
	s.mu.Lock()
	br := s.bridges[server]
	s.mu.Unlock()
	var t *mcp.Tool
	if br != nil {
		_, byName, _ := exposedTools(server, br.Tools())
		if t = byName[name]; t == nil {
			return toolerr.Result(toolerr.ToolNotFound, "MCP server %s has no tool %s", server, name)
		}
	}
	if !s.g.pinned(server, name) {
		return pinRefusal(server, name)
	}
	if br == nil {
		return toolerr.Result(toolerr.ToolNotFound, "MCP server %s is not connected to this session", server)
	}
	return br.CallTool(ctx, t.Name, args, 0)
}

func (s *Session) hasBridge(server string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bridges[server] != nil
}
