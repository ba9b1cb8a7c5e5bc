// Package mcpserver is the daemon's one go-sdk MCP server: every agent
// connection, `torii mcp` on the MCP socket (relay.go) or /mcp (http.go),
// is a session of it, and every tools/call goes to the broker.
package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
)

// Options are what the server takes from the daemon that composes it.
type Options struct {
	Version string
	Log     *slog.Logger
	Broker  *broker.Broker
	// Result, if set, rewrites each tool result before the agent sees it.
	Result func(*mcp.CallToolResult) *mcp.CallToolResult
	// MaxRelays bounds the live MCP socket connections (SECURITY I-49).
	MaxRelays int
	// HTTP configures /mcp (http.go).
	HTTP HTTPOptions
}

// Server is the one MCP server and the broker sessions of its MCP sessions.
type Server struct {
	opts   Options
	log    *slog.Logger
	broker *broker.Broker
	srv    *mcp.Server
	relays relays

	sessMu        sync.Mutex
	agentSessions map[*mcp.ServerSession]*broker.Session
}

// MCP is the go-sdk server, for middleware the daemon adds.
func (s *Server) MCP() *mcp.Server { return s.srv }

// New builds the one MCP server every agent connection is a
// session of: `torii mcp` relays on the MCP socket (relay.go) and /mcp
// (http.go). Its tools mirror the broker's catalogue — the one built
// into the binary until an extension attaches — and the SDK tells each
// session when it changes (notifications/tools/list_changed). The tools
// capability is declared explicitly: the SDK only infers it once a tool is
// added, and a binary built without the extension starts with none.
func New(opts Options) *Server {
	d := &Server{opts: opts, log: opts.Log, broker: opts.Broker, relays: relays{max: opts.MaxRelays}}
	srv := mcp.NewServer(&mcp.Implementation{Name: "torii", Title: "Torii browser", Version: opts.Version}, &mcp.ServerOptions{
		Logger:       opts.Log,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}, Resources: &mcp.ResourceCapabilities{}},
		Instructions: broker.ServerInstructions,
	})
	mirror := broker.NewMirror(srv, d.callTool)
	// A name not mirrored still reaches the broker, which answers with a
	// typed tool_not_found or extension_not_connected result.
	srv.AddReceivingMiddleware(mirror.UnknownTools(d.callTool))
	d.broker.OnToolsChanged(mirror.Set)
	mirror.Set(d.broker.Tools())
	d.srv = srv
	return d
}

// callTool runs one tools/call of any agent MCP session through the
// broker, as that session (a shared relay, `torii exec`, as its label's
// cli session). Cancellation is the request's context: the
// SDK cancels it on notifications/cancelled, and the broker then drops the
// call from its queue or cancels it in the extension.
func (d *Server) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil {
		return nil, errors.New("tools/call without params")
	}
	call := broker.Call{Name: req.Params.Name, Arguments: req.Params.Arguments}
	if rc := relayOf(ctx); rc != nil {
		h := rc.greeting()
		call.Session = h.SessionLabel
		if !h.Shared {
			call.Owner = d.agentSession(req.Session, call.Session, broker.KindStdio, h.Browser)
		}
		if t := time.Duration(h.TimeoutMs) * time.Millisecond; t > 0 && t <= broker.MaxCallTimeout {
			call.Timeout = t
		}
		call.Arrival = rc.arrival(req.Extra)
	} else {
		call.Session = "http"
		if req.Extra != nil && req.Extra.TokenInfo != nil {
			call.Session = "http:" + d.opts.HTTP.TokenLabel(req.Extra.TokenInfo.UserID)
		}
		want, name := "", ""
		if req.Extra != nil && req.Extra.Header != nil {
			want = req.Extra.Header.Get(BrowserHeader)
			name = req.Extra.Header.Get(SessionHeader)
		}
		if name != "" {
			// SECURITY I-82: a token's named sessions are its own.
			principal := ""
			if req.Extra.TokenInfo != nil {
				principal = req.Extra.TokenInfo.UserID
			}
			call.Session = name
			call.Owner = d.broker.NamedSession("http\x00"+principal+"\x00"+broker.ClipLabel(name), name)
		} else {
			call.Owner = d.agentSession(req.Session, call.Session, broker.KindHTTP, want)
		}
	}
	res := d.broker.CallTool(ctx, call)
	if d.opts.Result != nil {
		res = d.opts.Result(res)
	}
	return res, nil
}

// agentSession is the broker session of one MCP session (a relay
// connection, or an /mcp session bound to the token that opened it),
// minted on its first call and ended when the MCP session closes
// (SECURITY I-23): the connection is the identity, the label only a name.
// browser, if set, is the browser the client named (SECURITY I-58).
func (d *Server) agentSession(ss *mcp.ServerSession, label string, kind broker.Kind, browser string) *broker.Session {
	if ss == nil {
		return nil
	}
	d.sessMu.Lock()
	defer d.sessMu.Unlock()
	if d.agentSessions == nil {
		d.agentSessions = map[*mcp.ServerSession]*broker.Session{}
	}
	if s := d.agentSessions[ss]; s != nil {
		return s
	}
	s := d.broker.NewSession(label, kind)
	if browser != "" {
		s.BindBrowser(broker.BindNamed, browser)
	}
	d.agentSessions[ss] = s
	go func() {
		_ = ss.Wait()
		d.EndSession(ss)
	}()
	return s
}

// SessionOf is the broker session of an MCP session, nil before its first call.
func (d *Server) SessionOf(ss *mcp.ServerSession) *broker.Session {
	if ss == nil {
		return nil
	}
	d.sessMu.Lock()
	defer d.sessMu.Unlock()
	return d.agentSessions[ss]
}

// EndSession ends the broker session of an MCP session being closed:
// its calls, queued or in flight, are cancelled (in the extension too).
func (d *Server) EndSession(ss *mcp.ServerSession) {
	d.sessMu.Lock()
	s := d.agentSessions[ss]
	delete(d.agentSessions, ss)
	d.sessMu.Unlock()
	if s != nil {
		s.Close()
	}
}
