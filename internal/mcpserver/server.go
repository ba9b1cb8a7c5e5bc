// Package mcpserver is the MCP server behind `torii mcp`: what an agent
// (Claude Code, Cursor, Codex, …) talks to over stdio. It is one session of
// the shared daemon: its tools are the extension's catalogue, mirrored from
// the daemon's control method tools.list, and every call goes to the daemon
// as tools.call (the daemon's broker gates it and forwards it to the
// extension).
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/toolerr"
)

// Name is the server name reported in MCP initialize.
const Name = "torii"

// Poll intervals for tools.list: often while no extension is connected (to
// pick up a browser that connects late), rarely once one is (to notice a
// reloaded extension with a different catalogue).
const (
	DefaultPollDisconnected = 2 * time.Second
	DefaultPollConnected    = 30 * time.Second
)

// cancelRetryFor bounds how long a cancelled call keeps asking the daemon
// to cancel it (tools.cancel may overtake tools.call on the socket).
const cancelRetryFor = 2 * time.Second

// Caller is the daemon's control socket (control.Client satisfies it).
type Caller interface {
	Call(ctx context.Context, method string, params, result any) error
}

// Options configure one MCP session.
type Options struct {
	Version      string
	SessionLabel string // shown to the person to tell agent sessions apart
	Logger       *slog.Logger
	// Control reaches the daemon. Nil serves an empty catalogue (tests).
	Control Caller
	// Poll intervals; zero means the defaults.
	PollDisconnected, PollConnected time.Duration
}

// Server is one `torii mcp` session's MCP server.
type Server struct {
	o      Options
	srv    *mcp.Server
	mirror *broker.Mirror
	log    *slog.Logger
	wake   chan struct{}
	order  *order // keeps a session's calls in arrival order (order.go)

	mu        sync.Mutex
	connected bool
}

// New builds the MCP server. The tools capability is declared explicitly:
// the SDK only infers it once a tool is added, and without it clients skip
// tools/list (and the SDK would refuse it) while the catalogue is empty.
func New(o Options) *Server {
	title := "Torii browser"
	if o.SessionLabel != "" {
		title += " (" + o.SessionLabel + ")"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.PollDisconnected <= 0 {
		o.PollDisconnected = DefaultPollDisconnected
	}
	if o.PollConnected <= 0 {
		o.PollConnected = DefaultPollConnected
	}
	s := &Server{o: o, log: o.Logger, wake: make(chan struct{}, 1), order: newOrder()}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: Name, Title: title, Version: o.Version}, &mcp.ServerOptions{
		Logger:       o.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		Instructions: broker.ServerInstructions,
	})
	s.mirror = broker.NewMirror(s.srv, s.callTool)
	// A name not (yet) mirrored still goes to the daemon, which answers with
	// a typed unknown_tool or extension_not_connected result.
	s.srv.AddReceivingMiddleware(s.mirror.UnknownTools(s.callTool))
	return s
}

// MCP is the underlying go-sdk server.
func (s *Server) MCP() *mcp.Server { return s.srv }

// Refresh fetches the daemon's catalogue once and mirrors it.
func (s *Server) Refresh(ctx context.Context) error {
	if s.o.Control == nil {
		return nil
	}
	var r struct {
		Tools              []*mcp.Tool `json:"tools"`
		ExtensionConnected bool        `json:"extensionConnected"`
	}
	if err := s.o.Control.Call(ctx, "tools.list", nil, &r); err != nil {
		return err
	}
	s.mirror.Set(r.Tools)
	s.mu.Lock()
	s.connected = r.ExtensionConnected
	s.mu.Unlock()
	return nil
}

func (s *Server) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// poll keeps the mirror current until ctx ends.
func (s *Server) poll(ctx context.Context) {
	for {
		s.mu.Lock()
		d := s.o.PollConnected
		if !s.connected {
			d = s.o.PollDisconnected
		}
		s.mu.Unlock()
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.wake:
			t.Stop()
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		if err := s.Refresh(rctx); err != nil && ctx.Err() == nil {
			s.log.Debug("mcp: tools.list failed", "err", err)
		}
		cancel()
	}
}

// callTool runs one tools/call as the daemon's tools.call. Arguments pass
// through untouched. When the client cancels (notifications/cancelled),
// the daemon is told with tools.cancel so the extension stops too.
func (s *Server) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil {
		return nil, errors.New("tools/call without params")
	}
	// Not before every earlier call of this session went out (order.go).
	sent, err := s.order.turn(ctx, req.Params)
	defer sent()
	if err != nil {
		return nil, err
	}
	if s.o.Control == nil {
		return toolerr.Result(toolerr.ExtensionNotConnected, "this session has no daemon"), nil
	}
	// ownSession: this process's control connection is its session, minted
	// by the daemon (a label never selects a session).
	p := map[string]any{"name": req.Params.Name, "sessionLabel": s.o.SessionLabel, "callId": "mcp-" + uuid.NewString(), "ownSession": true}
	if len(req.Params.Arguments) > 0 {
		p["arguments"] = req.Params.Arguments
	}
	done := make(chan outcome, 1)
	go func() {
		var raw json.RawMessage
		// Not ctx: a cancelled call is stopped by tools.cancel below, and
		// its late answer is read (and dropped) rather than orphaned.
		err := s.o.Control.Call(control.WithSent(context.WithoutCancel(ctx), sent), "tools.call", p, &raw)
		if err != nil {
			done <- outcome{err: err}
			return
		}
		var r mcp.CallToolResult
		if err := json.Unmarshal(raw, &r); err != nil {
			done <- outcome{err: err}
			return
		}
		done <- outcome{res: &r}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			s.log.Warn("mcp: tools.call failed", "tool", req.Params.Name, "err", o.err)
			return daemonUnreachable(o.err), nil
		}
		if e := toolerr.FromResult(o.res); e != nil && (e.Code == toolerr.ExtensionNotConnected || e.Code == toolerr.UnknownTool) {
			s.poke() // the catalogue or the link may have changed
		}
		return o.res, nil
	case <-ctx.Done():
		go s.cancelRemote(p["callId"].(string), done)
		return nil, ctx.Err()
	}
}

// cancelRemote sends tools.cancel until the daemon finds the call or the
// call ends (tools.cancel may reach the daemon before tools.call does).
func (s *Server) cancelRemote(callID string, done <-chan outcome) {
	deadline := time.Now().Add(cancelRetryFor)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		var r struct {
			Cancelled bool `json:"cancelled"`
		}
		err := s.o.Control.Call(ctx, "tools.cancel", map[string]string{"callId": callID}, &r)
		cancel()
		if err != nil || r.Cancelled || time.Now().After(deadline) {
			return
		}
		select {
		case <-done:
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

type outcome struct {
	res *mcp.CallToolResult
	err error
}

func daemonUnreachable(err error) *mcp.CallToolResult {
	e := &toolerr.Error{Code: toolerr.Internal, Message: "the torii daemon did not answer: " + err.Error(),
		Hint: "Run `torii status` or `torii doctor`; restart the agent's torii mcp if the daemon was restarted."}
	return e.Result()
}

// Serve runs the server over in/out until the client closes its end (EOF on
// in) or ctx ends, keeping the catalogue current meanwhile. A clean client
// hang-up is not an error.
func (s *Server) Serve(ctx context.Context, in io.ReadCloser, out io.WriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.o.Control != nil {
		// The first tools/list sees what the daemon has now.
		rctx, rcancel := context.WithTimeout(ctx, 10*time.Second)
		if err := s.Refresh(rctx); err != nil {
			s.log.Warn("mcp: tools.list failed", "err", err)
		}
		rcancel()
		go s.poll(ctx)
	}
	d := newDrain()
	err := s.srv.Run(ctx, &mcp.IOTransport{Reader: d.reader(s.order.reader(in)), Writer: d.writer(s.order.writer(out))})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
