package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/broker"
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

func nonNil(t []*mcp.Tool) []*mcp.Tool {
	if t == nil {
		return []*mcp.Tool{}
	}
	return t
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

func pinRefusal(server, tool string) *mcp.CallToolResult {
	e := &toolerr.Error{Code: CodeToolNotPinned, Message: "tool " + tool + " of MCP server " + server + " is not pinned by the operator",
		Hint: "Only the tools pinned in config.json mcpServers.pins may be called; call tools/list for them."}
	return e.Result()
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
