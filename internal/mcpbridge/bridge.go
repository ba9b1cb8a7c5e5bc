// Package mcpbridge is the gateway's MCP-over-ACP connector: an MCP client
// for a server that a chat client declared in session/new as
// {"type":"acp",…} and serves over the same WebSocket. The paired
// extension's own tools never come this way: the broker calls them directly
// on the link (internal/browserlink).
//
// Wire (docs/protocol.md, "MCP-over-ACP"): mcp/connect {acpId} (Gen A)
// or {serverId} (Gen B) → {connectionId}; then mcp/message {connectionId,
// method, params} carrying one flattened inner MCP message with no inner id
// (the outer JSON-RPC id correlates; no outer id = inner notification; an
// inner MCP error is the outer JSON-RPC error); mcp/disconnect
// {connectionId}. The non-standard notification mcp/cancel {requestId,
// connectionId} names the outer id of the call to abort.
//
// The MCP side is the official SDK's client (mcp.Client) over a transport
// that carries each message as mcp/message (transport.go); this package adds
// only the ACP framing, the deadlines and the mapping of failures onto typed
// tool errors.
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

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/toolerr"
	torpc "github.com/torii-browser/torii/internal/wire"
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
	// maxPages bounds tools/list paging.
	maxPages = 32
)

// Conn is the link connection the server was declared on; *link.Conn
// implements it.
type Conn interface {
	ID() string
	Context() context.Context
	Call(ctx context.Context, method string, params, result any) error
	Start(ctx context.Context, id json.RawMessage, method string, params any) (*torpc.Pending, error)
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

// Bridge is one live MCP connection to a declared server.
type Bridge struct {
	conn    Conn
	server  acp.MCPServer
	connID  string
	session *mcp.ClientSession
	log     *slog.Logger
	ctx     context.Context // ends when the link ends or Close is called
	cancel  context.CancelFunc

	mu    sync.Mutex
	tools []*mcp.Tool

	closeOnce sync.Once
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

	// Accept either generation, and speak the one the peer declared with:
	// hosts in the field send one or the other.
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
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: opts.ClientVersion},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	b.session, err = client.Connect(cctx, newTunnel(b.ctx, conn, b.connID), &mcp.ClientSessionOptions{ProtocolVersion: ProtocolVersion})
	if err != nil {
		return nil, fmt.Errorf("mcpbridge: %q initialize: %w", srv.Name, err)
	}
	if _, err := b.listTools(cctx); err != nil {
		return nil, err
	}
	log.Info("mcpbridge: connected", "server", srv.Name, "gen", srv.Gen, "conn", conn.ID(),
		"connectionId", b.connID, "protocol", b.session.InitializeResult().ProtocolVersion, "tools", len(b.Tools()))
	return b, nil
}

// LinkID is the link connection's ID.
func (b *Bridge) LinkID() string { return b.conn.ID() }

// Done is closed when the link ends or Close is called.
func (b *Bridge) Done() <-chan struct{} { return b.ctx.Done() }

// Context ends when the link ends or Close is called.
func (b *Bridge) Context() context.Context { return b.ctx }

// Tools is the cached catalogue (from Connect).
func (b *Bridge) Tools() []*mcp.Tool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*mcp.Tool(nil), b.tools...)
}

// listTools fetches the catalogue (following nextCursor) and caches it.
// Tools without a name, duplicates and tools whose inputSchema is not a
// JSON object schema are dropped with a log line: MCP clients refuse them.
func (b *Bridge) listTools(ctx context.Context) ([]*mcp.Tool, error) {
	var out []*mcp.Tool
	seen := map[string]bool{}
	params := &mcp.ListToolsParams{}
	for page := 0; ; page++ {
		if page > maxPages {
			return nil, fmt.Errorf("mcpbridge: %q tools/list: too many pages", b.server.Name)
		}
		res, err := b.session.ListTools(ctx, params)
		if err != nil {
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
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
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
// the deadline passes (both send mcp/cancel), invalid_argument /
// tool_not_found / internal for an inner protocol error. timeout <= 0 means
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
	if len(args) > 0 && !json.Valid(args) {
		return toolerr.Result(toolerr.InvalidArgument, "arguments are not valid JSON")
	}
	p := &mcp.CallToolParams{Name: name, Arguments: args}
	if len(args) == 0 {
		p.Arguments = json.RawMessage("{}")
	}
	if meta != nil {
		p.Meta = mcp.Meta(meta)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// The link ending or Close (a replaced bridge) ends the wait too: the
	// tunnel answers every call it still carries, each with its cause.
	res, err := b.session.CallTool(cctx, p)
	if err == nil {
		if res.Content == nil {
			res.Content = []mcp.Content{}
		}
		return res
	}
	var wireErr *jsonrpc.Error
	isWire := errors.As(err, &wireErr)
	switch {
	case isWire && wireErr.Code == codeBusy:
		return toolerr.Result(toolerr.Busy, "too many calls are waiting on this connection; %s was not sent", name)
	case isWire && wireErr.Code == codeTooLarge:
		return toolerr.Result(toolerr.TooLarge, "the extension's answer to %s was over the link's %d MiB frame cap; the link was closed and the extension reconnects", name, link.MaxFrame>>20)
	case b.conn.Context().Err() != nil || isWire && wireErr.Code == codeClosed || errors.Is(err, mcp.ErrConnectionClosed):
		if b.conn.Context().Err() == nil && b.ctx.Err() != nil {
			return toolerr.Result(toolerr.ExtensionNotConnected, "the extension's tool server was replaced during %s; it may have run", name)
		}
		return toolerr.Result(toolerr.ExtensionNotConnected, "the extension disconnected during %s; it may have run", name)
	case b.ctx.Err() != nil:
		return toolerr.Result(toolerr.ExtensionNotConnected, "the extension's tool server was replaced during %s; it may have run", name)
	case isWire:
		return innerError(name, wireErr)
	case cctx.Err() != nil:
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
	case torpc.CodeInvalidParams:
		return toolerr.Result(toolerr.InvalidArgument, "%s: %s", name, e.Message)
	case torpc.CodeMethodNotFound:
		return toolerr.Result(toolerr.ToolNotFound, "%s: %s", name, e.Message)
	}
	return toolerr.Result(toolerr.Internal, "%s: extension error %d: %s", name, e.Code, e.Message)
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
		if b.session != nil {
			go b.session.Close() // returns once the tunnel has failed its calls
		}
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
