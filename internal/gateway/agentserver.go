package gateway

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/toolerr"
)

// newServer builds the MCP server the session's agent reaches on /mcp with
// its session token. Its catalogue is this chat's: the browser's tools and
// the chat client's servers' as <server>.<tool>.
func (s *Session) newServer() {
	g := s.g
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if g.opts.Files != nil {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "torii", Title: "Torii browser", Version: g.opts.Version},
		&mcp.ServerOptions{Logger: g.log, Capabilities: caps,
			Instructions: broker.Instructions + " Tools named <server>.<tool> belong to MCP servers of the chat client."})
	s.mir = broker.NewMirror(s.srv, s.callTool)
	s.srv.AddReceivingMiddleware(s.mir.UnknownTools(s.callTool))
	if g.opts.Files != nil {
		// Every session of this server is this chat's agent.
		s.srv.AddReceivingMiddleware(g.opts.Files(func(*mcp.ServerSession) *broker.Session { return s.bs }))
	}
}

// refreshTools sets the session's MCP tools: the browser tools, plus each
// registered server's pinned tools under their exposed names
// (config.ExposedName: <server>.<tool>, a prefix never doubled). The catalogue is
// fetched ∩ pinned, so a client cannot widen it past policy (SECURITY I-35).
func (s *Session) refreshTools() {
	var tools []*mcp.Tool
	if b := s.g.opts.Broker; b != nil {
		tools = b.Tools()
	}
	s.mu.Lock()
	bridges := make(map[string]*mcpbridge.Bridge, len(s.bridges))
	for k, v := range s.bridges {
		bridges[k] = v
	}
	s.mu.Unlock()
	for name, br := range bridges {
		exposed, byName, _ := exposedTools(name, br.Tools())
		for _, n := range exposed {
			t := byName[n]
			if !s.g.pinned(name, t.Name) {
				continue
			}
			c := *t
			c.Name = n
			tools = append(tools, &c)
		}
	}
	s.mir.Set(tools)
}

// BrowserToolsChanged re-mirrors every session's tools (the broker's
// catalogue changed).
func (g *Gateway) BrowserToolsChanged([]*mcp.Tool) {
	g.mu.Lock()
	list := make([]*Session, 0, len(g.sessions))
	for _, s := range g.sessions {
		list = append(list, s)
	}
	g.mu.Unlock()
	for _, s := range list {
		s.refreshTools()
	}
}

// callTool routes one tools/call from the session's agent: <server>.<tool>
// to that client-declared server, anything else to the browser through the
// broker, within the session's browser access.
func (s *Session) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil {
		return nil, errors.New("tools/call without params")
	}
	name := req.Params.Name
	if server, _, ok := strings.Cut(name, "."); ok && (s.g.allowed(server) || s.hasBridge(server)) {
		// Not through the broker, so recorded here, through the same audit Observer.
		start := time.Now()
		res := s.callDeclared(ctx, server, name, req.Params.Arguments)
		s.g.opts.Broker.ObserveExternal(s.label, name, start, res)
		return res, nil
	}
	s.mu.Lock()
	access := s.access
	s.mu.Unlock()
	b := s.g.opts.Broker
	if b == nil {
		return toolerr.Result(toolerr.ExtensionNotConnected, "no browser is connected"), nil
	}
	// The broker's gate refuses what the access does not cover, so the
	// refusal is audited like any other.
	call := broker.Call{Name: name, Arguments: req.Params.Arguments, Session: s.label, Owner: s.bs, Access: brokerAccess(access)}
	return b.CallTool(ctx, call), nil
}

func brokerAccess(access string) broker.Access {
	switch access {
	case AccessAct:
		return broker.AccessFull
	case AccessRead:
		return broker.AccessRead
	}
	return broker.AccessNone // fail closed on anything else
}
