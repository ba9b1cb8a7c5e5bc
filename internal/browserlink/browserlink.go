// Package browserlink is the daemon's side of the browser-tool leg of the
// link (docs/protocol.md "Browser tools"): a direct request per tool call on
// the extension's authenticated link connection, never a second MCP session.
//
//	daemon → extension  torii/tools/list            → {tools}
//	extension → daemon  torii/tools/changed          (notification: list again)
//	daemon → extension  torii/tools/call {callId, tool, arguments, meta, deadline} → MCP CallToolResult
//	daemon → extension  torii/tools/cancel {callId}  (notification)
//	daemon → extension  torii/tools/session_ended {sessionId, closeTabs, closeManagedTabs}
//
// The call's JSON-RPC id is its callId, so the link peer's table of pending
// requests is the one in-flight table. The deadline is the broker's: one
// absolute time (unix ms) the extension honours and this side waits for, no
// timer of its own (SECURITY I-80). Every link failure is mapped here, once,
// onto a typed tool error that says whether the call may have run.
package browserlink

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

// The link methods of the browser-tool leg.
const (
	MethodList         = "torii/tools/list"
	MethodChanged      = "torii/tools/changed"
	MethodCall         = "torii/tools/call"
	MethodCancel       = "torii/tools/cancel"
	MethodSessionEnded = "torii/tools/session_ended"
)

const (
	// ListTimeout bounds the catalogue request when the server is opened.
	ListTimeout = 30 * time.Second
	// MaxTools bounds the catalogue one extension may publish.
	MaxTools = 256
	// controlTimeout bounds fire-and-forget frames (cancel, session_ended).
	controlTimeout = 5 * time.Second
)

// Conn is the link connection the extension serves its tools on;
// *link.Conn implements it.
type Conn interface {
	ID() string
	Context() context.Context
	Call(ctx context.Context, method string, params, result any) error
	Start(ctx context.Context, id json.RawMessage, method string, params any) (*wire.Pending, error)
	Notify(ctx context.Context, method string, params any) error
}

var _ Conn = (*link.Conn)(nil)

// Request is one tool call as the broker hands it over.
type Request struct {
	Tool string
	// Args are the call's arguments, already checked to be JSON where they
	// entered the daemon; nil sends {}.
	Args json.RawMessage
	// Meta is the calling session's identity (SECURITY I-24).
	Meta map[string]any
	// Deadline is the call's one deadline (SECURITY I-80).
	Deadline time.Time
	// ReadOnly: the tool only reads, so a failure here never says it may
	// have changed anything.
	ReadOnly bool
	// Browser names the browser in failure messages; Hint, if set, is the
	// next step when it is gone (a managed browser: run torii launch).
	Browser string
	Hint    string
}

// CallParams are torii/tools/call's params.
type CallParams struct {
	CallID    string          `json:"callId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	Meta      map[string]any  `json:"meta,omitempty"`
	// Deadline is unix milliseconds.
	Deadline int64 `json:"deadline"`
}

// CancelParams are torii/tools/cancel's params.
type CancelParams struct {
	CallID string `json:"callId"`
}

// Server is one extension's tool server on one link connection.
type Server struct {
	conn   Conn
	log    *slog.Logger
	ctx    context.Context // ends when the link ends or Close is called
	cancel context.CancelFunc
	seq    atomic.Uint64

	mu    sync.Mutex
	tools []*mcp.Tool
}

// Open asks the extension on conn for its catalogue and returns its server.
// timeout <= 0 means ListTimeout; a nil logger discards.
func Open(ctx context.Context, conn Conn, timeout time.Duration, log *slog.Logger) (*Server, error) {
	if timeout <= 0 {
		timeout = ListTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{conn: conn, log: log}
	s.ctx, s.cancel = context.WithCancel(conn.Context())
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := s.Refresh(cctx); err != nil {
		s.cancel()
		return nil, err
	}
	return s, nil
}

// LinkID is the link connection's ID.
func (s *Server) LinkID() string { return s.conn.ID() }

// Context ends when the link ends or Close is called.
func (s *Server) Context() context.Context { return s.ctx }

// Close ends the server: its pending calls fail as replaced. Idempotent.
func (s *Server) Close() { s.cancel() }

// Tools is the catalogue as last listed.
func (s *Server) Tools() []*mcp.Tool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*mcp.Tool(nil), s.tools...)
}

// Refresh lists the catalogue again (on torii/tools/changed). Tools
// without a name, duplicates and tools whose inputSchema is not an object
// schema are dropped with a log line: MCP clients refuse them.
func (s *Server) Refresh(ctx context.Context) error {
	var res struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	if err := s.conn.Call(ctx, MethodList, struct{}{}, &res); err != nil {
		return fmt.Errorf("browserlink: %s: %w", MethodList, err)
	}
	var out []*mcp.Tool
	seen := map[string]bool{}
	for _, t := range res.Tools {
		if t == nil || t.Name == "" || seen[t.Name] || !objectSchema(t.InputSchema) {
			s.log.Warn("browserlink: tool dropped from the catalogue", "tool", toolName(t))
			continue
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	if len(out) > MaxTools {
		return fmt.Errorf("browserlink: %s: more than %d tools", MethodList, MaxTools)
	}
	s.mu.Lock()
	s.tools = out
	s.mu.Unlock()
	return nil
}

func toolName(t *mcp.Tool) string {
	if t == nil {
		return ""
	}
	return t.Name
}

func objectSchema(v any) bool {
	m, ok := v.(map[string]any)
	return ok && m["type"] == "object"
}

// SessionEnded tells the extension a session ended (best effort).
func (s *Server) SessionEnded(ctx context.Context, params any) error {
	if s.ctx.Err() != nil {
		return s.ctx.Err()
	}
	return s.conn.Notify(ctx, MethodSessionEnded, params)
}

// Call runs one tool call in the extension and always returns an MCP
// result: the extension's own (isError results pass through untouched) or
// a typed failure of the link, mapped here once.
func (s *Server) Call(ctx context.Context, r Request) *mcp.CallToolResult {
	return s.call(ctx, r).result(r)
}

// failure is a link failure before the mapping, with whether anything ran.
type failure struct {
	code toolerr.Code
	msg  string
	hint string
}

func (f *failure) result(r Request) *mcp.CallToolResult {
	e := toolerr.New(f.code, "%s", f.msg)
	if f.hint != "" {
		e.Hint = f.hint
	}
	res := e.Result()
	if r.ReadOnly {
		res = toolerr.ForRead(res)
	}
	return res
}

type outcome struct {
	res *mcp.CallToolResult
	f   *failure
}

func (o outcome) result(r Request) *mcp.CallToolResult {
	if o.f != nil {
		return o.f.result(r)
	}
	if o.res.Content == nil {
		o.res.Content = []mcp.Content{}
	}
	return o.res
}

func (s *Server) gone(r Request, during string) *failure {
	what := "the browser"
	if r.Browser != "" {
		what = fmt.Sprintf("browser %q", r.Browser)
	}
	return &failure{code: toolerr.ExtensionNotConnected, msg: fmt.Sprintf("%s disconnected %s", what, during), hint: r.Hint}
}

func (s *Server) call(ctx context.Context, r Request) outcome {
	switch {
	case s.ctx.Err() != nil:
		return outcome{f: s.gone(r, "before "+r.Tool+" was sent; nothing was sent")}
	case ctx.Err() != nil:
		return outcome{f: &failure{code: toolerr.Cancelled, msg: r.Tool + " was cancelled before it was sent; nothing was sent"}}
	case !time.Now().Before(r.Deadline):
		return outcome{f: &failure{code: toolerr.Timeout, msg: r.Tool + "'s deadline passed before it was sent; nothing was sent"}}
	}
	args := r.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	id := "c" + strconv.FormatUint(s.seq.Add(1), 10)
	cctx, cancel := context.WithDeadline(ctx, r.Deadline)
	defer cancel()
	// The server closing (a reconnect replaced it) ends the wait too.
	defer context.AfterFunc(s.ctx, cancel)()
	p, err := s.conn.Start(cctx, wire.RawID(id), MethodCall,
		CallParams{CallID: id, Tool: r.Tool, Arguments: args, Meta: r.Meta, Deadline: r.Deadline.UnixMilli()})
	if err != nil {
		if errors.Is(err, wire.ErrBusy) {
			return outcome{f: &failure{code: toolerr.Busy, msg: fmt.Sprintf("too many calls are waiting on this browser's link; %s was not sent", r.Tool)}}
		}
		if cctx.Err() == nil || s.conn.Context().Err() != nil {
			return outcome{f: s.gone(r, "before "+r.Tool+" was sent; nothing was sent")}
		}
	} else {
		var res mcp.CallToolResult
		err = p.Wait(cctx, &res)
		if err == nil {
			return outcome{res: &res}
		}
	}
	var rpcErr *wire.Error
	switch {
	case errors.As(err, &rpcErr):
		return outcome{f: rpcFailure(r.Tool, rpcErr)}
	case errors.Is(err, link.ErrFrameTooLarge):
		return outcome{f: &failure{code: toolerr.TooLarge, msg: fmt.Sprintf("the extension's answer to %s was over the link's %d MiB frame cap; the link was closed and the extension reconnects; it may have run", r.Tool, link.MaxFrame>>20)}}
	case s.conn.Context().Err() != nil || errors.Is(err, wire.ErrClosed):
		return outcome{f: s.gone(r, "during "+r.Tool+"; it may have run")}
	case s.ctx.Err() != nil:
		s.cancelCall(id)
		return outcome{f: s.gone(r, "during "+r.Tool+" (it reconnected); it may have run")}
	case ctx.Err() != nil:
		s.cancelCall(id)
		return outcome{f: &failure{code: toolerr.Cancelled, msg: r.Tool + " was cancelled; it may have partly run"}}
	case cctx.Err() != nil:
		s.cancelCall(id)
		return outcome{f: &failure{code: toolerr.Timeout, msg: fmt.Sprintf("%s got no answer by its deadline; it may have run", r.Tool)}}
	}
	return outcome{f: &failure{code: toolerr.Internal, msg: fmt.Sprintf("%s: %v", r.Tool, err)}}
}

// rpcFailure maps a JSON-RPC error answer: the extension refused the
// request itself, so nothing ran.
func rpcFailure(tool string, e *wire.Error) *failure {
	switch e.Code {
	case wire.CodeInvalidParams:
		return &failure{code: toolerr.InvalidArgument, msg: fmt.Sprintf("%s: %s; nothing ran", tool, e.Message)}
	case wire.CodeMethodNotFound:
		return &failure{code: toolerr.ExtensionNotConnected, msg: fmt.Sprintf("the extension does not serve %s; nothing ran", MethodCall),
			hint: "Update the Torii extension to the daemon's version (`torii version`), then call again."}
	}
	return &failure{code: toolerr.Internal, msg: fmt.Sprintf("%s: extension error %d: %s; nothing ran", tool, e.Code, e.Message)}
}

// cancelCall tells the extension to stop a call it may still run (best effort).
func (s *Server) cancelCall(id string) {
	if s.conn.Context().Err() != nil {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(s.conn.Context()), controlTimeout)
		defer cancel()
		if err := s.conn.Notify(ctx, MethodCancel, CancelParams{CallID: id}); err != nil {
			s.log.Debug("browserlink: cancel not sent", "call", id, "err", err)
		}
	}()
}
