// Package mcpbridge is the daemon's MCP-over-ACP connector: an MCP client
// for a server that a link peer (the extension) declared in session/new as
// {"type":"acp",…} and serves over the same WebSocket.
//
// Wire (docs/protocol.md, brief "MCP-over-ACP"): mcp/connect {acpId} (Gen A)
// or {serverId} (Gen B) → {connectionId}; then mcp/message {connectionId,
// method, params} carrying one flattened inner MCP message with no inner id
// (the outer JSON-RPC id correlates; no outer id = inner notification; an
// inner MCP error is the outer JSON-RPC error); mcp/disconnect
// {connectionId}. The non-standard notification mcp/cancel {requestId,
// connectionId} names the outer id of the call to abort.
//
// Behaviour follows OpenAB's tunnel: connect + initialize (+ the first
// tools/list) within 30 s or the server is never registered; 180 s per
// request unless the caller passes less; a dropped link fails every pending
// call at once with extension_not_connected.
package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/jsonrpc"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/toolerr"
)

const (
	// ConnectTimeout bounds mcp/connect + initialize + the first tools/list.
	ConnectTimeout = 30 * time.Second
	// DefaultCallTimeout is a tools/call's deadline when the caller gives none.
	DefaultCallTimeout = 180 * time.Second
	// ProtocolVersion is the MCP revision the connector asks for.
	ProtocolVersion = "2025-11-25"
	// MaxTools bounds the catalogue one declared server may publish.
	MaxTools = 256
	// controlTimeout bounds fire-and-forget frames (mcp/cancel, mcp/disconnect).
	controlTimeout = 5 * time.Second
)

// Conn is the link connection the server was declared on; *link.Conn
// implements it.
type Conn interface {
	ID() string
	Context() context.Context
	Call(ctx context.Context, method string, params, result any) error
	NewRequestID() json.RawMessage
	CallID(ctx context.Context, id json.RawMessage, method string, params, result any) error
	Notify(ctx context.Context, method string, params any) error
}

var _ Conn = (*link.Conn)(nil)

// Options tune Connect.
type Options struct {
	ClientName    string // clientInfo.name in the inner initialize; default "torii"
	ClientVersion string
	// ConnectTimeout overrides the 30 s registration window (tests).
	ConnectTimeout time.Duration
	Logger         *slog.Logger
}

// InitializeResult is the inner MCP initialize answer.
type InitializeResult struct {
	ProtocolVersion string              `json:"protocolVersion"`
	Capabilities    json.RawMessage     `json:"capabilities,omitempty"`
	ServerInfo      *mcp.Implementation `json:"serverInfo,omitempty"`
	Instructions    string              `json:"instructions,omitempty"`
}

// Bridge is one live MCP connection to a declared server.
type Bridge struct {
	conn   Conn
	server acp.MCPServer
	connID string
	init   InitializeResult
	log    *slog.Logger
	ctx    context.Context // ends when the link ends or Close is called
	cancel context.CancelFunc

	mu    sync.Mutex
	tools []*mcp.Tool

	closeOnce sync.Once
}

// message is an mcp/message envelope.
type message struct {
	ConnectionID string `json:"connectionId"`
	Method       string `json:"method"`
	Params       any    `json:"params,omitempty"`
}

// Connect opens an MCP connection to srv on conn: mcp/connect, inner
// initialize, notifications/initialized, tools/list. Any failure (or more
// than ConnectTimeout) returns an error, after a best-effort mcp/disconnect;
// the caller must then not register the server.
func Connect(ctx context.Context, conn Conn, srv acp.MCPServer, opts Options) (_ *Bridge, err error) {
	timeout := opts.ConnectTimeout
	if timeout <= 0 {
		timeout = ConnectTimeout
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	name := opts.ClientName
	if name == "" {
		name = "torii"
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	// Emit the generation the peer declared with (brief: accept A and B,
	// emit what the peer speaks).
	var connect any = map[string]string{"acpId": srv.ID}
	if srv.Gen == acp.GenB {
		connect = map[string]string{"serverId": srv.ID}
	}
	var cr struct {
		ConnectionID string `json:"connectionId"`
	}
	if err := conn.Call(cctx, "mcp/connect", connect, &cr); err != nil {
		return nil, fmt.Errorf("mcpbridge: mcp/connect %q: %w", srv.Name, err)
	}
	if cr.ConnectionID == "" {
		return nil, fmt.Errorf("mcpbridge: mcp/connect %q: empty connectionId", srv.Name)
	}
	b := &Bridge{conn: conn, server: srv, connID: cr.ConnectionID, log: log}
	b.ctx, b.cancel = context.WithCancel(conn.Context())
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	initParams := map[string]any{
		"protocolVersion": ProtocolVersion,
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]string{"name": name, "version": opts.ClientVersion},
	}
	if err := conn.Call(cctx, "mcp/message", message{b.connID, "initialize", initParams}, &b.init); err != nil {
		return nil, fmt.Errorf("mcpbridge: %q initialize: %w", srv.Name, err)
	}
	if b.init.ProtocolVersion == "" {
		return nil, fmt.Errorf("mcpbridge: %q initialize: no protocolVersion in the answer", srv.Name)
	}
	if err := conn.Notify(cctx, "mcp/message", message{ConnectionID: b.connID, Method: "notifications/initialized"}); err != nil {
		return nil, fmt.Errorf("mcpbridge: %q notifications/initialized: %w", srv.Name, err)
	}
	if _, err := b.ListTools(cctx); err != nil {
		return nil, err
	}
	log.Info("mcpbridge: connected", "server", srv.Name, "gen", srv.Gen, "conn", conn.ID(),
		"connectionId", b.connID, "protocol", b.init.ProtocolVersion, "tools", len(b.Tools()))
	return b, nil
}

// Server is the declaration this bridge serves.
func (b *Bridge) Server() acp.MCPServer { return b.server }

// ConnectionID is the provider's connectionId.
func (b *Bridge) ConnectionID() string { return b.connID }

// LinkID is the link connection's ID.
func (b *Bridge) LinkID() string { return b.conn.ID() }

// Initialize is the provider's initialize answer.
func (b *Bridge) Initialize() InitializeResult { return b.init }

// Done is closed when the link ends or Close is called.
func (b *Bridge) Done() <-chan struct{} { return b.ctx.Done() }

// Context ends when the link ends or Close is called.
func (b *Bridge) Context() context.Context { return b.ctx }

// Tools is the cached catalogue (from Connect or the last ListTools).
func (b *Bridge) Tools() []*mcp.Tool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*mcp.Tool(nil), b.tools...)
}

// ListTools fetches the catalogue (following nextCursor) and caches it.
// Tools without a name, duplicates and tools whose inputSchema is not a
// JSON object schema are dropped with a log line: MCP clients refuse them.
func (b *Bridge) ListTools(ctx context.Context) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	seen := map[string]bool{}
	cursor := ""
	for page := 0; ; page++ {
		if page > 32 {
			return nil, fmt.Errorf("mcpbridge: %q tools/list: too many pages", b.server.Name)
		}
		var params any
		if cursor != "" {
			params = map[string]string{"cursor": cursor}
		}
		var res struct {
			Tools      []*mcp.Tool `json:"tools"`
			NextCursor string      `json:"nextCursor"`
		}
		if err := b.conn.Call(ctx, "mcp/message", message{b.connID, "tools/list", params}, &res); err != nil {
			return nil, fmt.Errorf("mcpbridge: %q tools/list: %w", b.server.Name, err)
		}
		for _, t := range res.Tools {
			if t == nil || t.Name == "" || seen[t.Name] || !objectSchema(t.InputSchema) {
				b.log.Warn("mcpbridge: tool dropped from the catalogue", "server", b.server.Name, "tool", toolName(t))
				continue
			}
			seen[t.Name] = true
			out = append(out, t)
		}
		if len(out) > MaxTools {
			return nil, fmt.Errorf("mcpbridge: %q tools/list: more than %d tools", b.server.Name, MaxTools)
		}
		if res.NextCursor == "" {
			break
		}
		cursor = res.NextCursor
	}
	b.mu.Lock()
	b.tools = out
	b.mu.Unlock()
	return append([]*mcp.Tool(nil), out...), nil
}

func toolName(t *mcp.Tool) string {
	if t == nil {
		return ""
	}
	return t.Name
}

func objectSchema(s any) bool {
	m, ok := s.(map[string]any)
	return ok && m["type"] == "object"
}

// CallTool runs tools/call on the provider and always returns an MCP
// result: the provider's own (isError results pass through untouched), or
// a typed failure — extension_not_connected when the link drops (at once,
// for every pending call), cancelled when ctx is cancelled and timeout when
// the deadline passes (both send mcp/cancel first), invalid_argument /
// unknown_tool / internal for an inner protocol error. timeout <= 0 means
// DefaultCallTimeout. args go out untouched; the extension validates them.
func (b *Bridge) CallTool(ctx context.Context, name string, args json.RawMessage, timeout time.Duration) *mcp.CallToolResult {
	return b.CallToolMeta(ctx, name, args, nil, timeout)
}

// CallToolMeta is CallTool with the request's _meta: the broker passes the
// calling session there (SECURITY I-24), so the extension can enforce tab
// ownership itself.
func (b *Bridge) CallToolMeta(ctx context.Context, name string, args json.RawMessage, meta map[string]any, timeout time.Duration) *mcp.CallToolResult {
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	if b.ctx.Err() != nil {
		return toolerr.Result(toolerr.ExtensionNotConnected, "the extension's tool server is not connected")
	}
	if err := ctx.Err(); err != nil {
		return toolerr.Result(toolerr.Cancelled, "cancelled before it was sent; nothing ran")
	}
	p := struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments,omitempty"`
		Meta      map[string]any  `json:"_meta,omitempty"`
	}{name, args, meta}
	if len(args) > 0 && !json.Valid(args) {
		return toolerr.Result(toolerr.InvalidArgument, "arguments are not valid JSON")
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// Close (a replaced bridge) ends the wait too.
	stop := context.AfterFunc(b.ctx, cancel)
	defer stop()
	id := b.conn.NewRequestID()
	var res mcp.CallToolResult
	err := b.conn.CallID(cctx, id, "mcp/message", message{b.connID, "tools/call", p}, &res)
	if err == nil {
		if res.Content == nil {
			res.Content = []mcp.Content{}
		}
		return &res
	}
	var rpcErr *jsonrpc.Error
	switch {
	case errors.Is(err, link.ErrBusy):
		return toolerr.Result(toolerr.Busy, "too many calls are waiting on this connection; %s was not sent", name)
	case b.conn.Context().Err() != nil || errors.Is(err, link.ErrConnClosed):
		return toolerr.Result(toolerr.ExtensionNotConnected, "the extension disconnected during %s; it may have run", name)
	case b.ctx.Err() != nil:
		return toolerr.Result(toolerr.ExtensionNotConnected, "the extension's tool server was replaced during %s; it may have run", name)
	case errors.As(err, &rpcErr):
		return innerError(name, rpcErr)
	case cctx.Err() != nil:
		b.cancelCall(id)
		if errors.Is(ctx.Err(), context.Canceled) {
			return toolerr.Result(toolerr.Cancelled, "%s was cancelled; it may have partly run", name)
		}
		return toolerr.Result(toolerr.Timeout, "%s got no answer within its deadline (at most %s); it may have run", name, timeout)
	}
	return toolerr.Result(toolerr.Internal, "%s: %v", name, err)
}

// innerError maps an inner MCP protocol error onto a typed result.
func innerError(name string, e *jsonrpc.Error) *mcp.CallToolResult {
	switch e.Code {
	case jsonrpc.CodeInvalidParams:
		return toolerr.Result(toolerr.InvalidArgument, "%s: %s", name, e.Message)
	case jsonrpc.CodeMethodNotFound:
		return toolerr.Result(toolerr.UnknownTool, "%s: %s", name, e.Message)
	}
	return toolerr.Result(toolerr.Internal, "%s: extension error %d: %s", name, e.Code, e.Message)
}

// cancelCall sends mcp/cancel {requestId, connectionId} for an abandoned call.
func (b *Bridge) cancelCall(id json.RawMessage) {
	if b.conn.Context().Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(b.ctx), controlTimeout)
	defer cancel()
	err := b.conn.Notify(ctx, "mcp/cancel", struct {
		RequestID    json.RawMessage `json:"requestId"`
		ConnectionID string          `json:"connectionId"`
	}{id, b.connID})
	if err != nil {
		b.log.Debug("mcpbridge: mcp/cancel not sent", "err", err)
	}
}

// NotifyServer sends an inner MCP notification to the provider (best
// effort; e.g. the broker's notifications/torii/session_ended).
func (b *Bridge) NotifyServer(ctx context.Context, method string, params any) error {
	if b.ctx.Err() != nil {
		return b.ctx.Err()
	}
	return b.conn.Notify(ctx, "mcp/message", message{b.connID, method, params})
}

// Close ends the bridge: pending calls fail, and mcp/disconnect is sent
// (best effort) while the link is up. Safe to call more than once.
func (b *Bridge) Close() {
	b.closeOnce.Do(func() {
		b.cancel()
		if b.conn.Context().Err() != nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(b.conn.Context()), controlTimeout)
		defer cancel()
		if err := b.conn.Call(ctx, "mcp/disconnect", map[string]string{"connectionId": b.connID}, nil); err != nil {
			b.log.Debug("mcpbridge: mcp/disconnect", "server", b.server.Name, "err", err)
		}
	})
}
