// Package linktest is a Go "fake extension" for tests: it dials /acp over a
// real WebSocket, pairs and authenticates with a real P-256 key exactly as
// the extension does (docs/protocol.md), and then speaks JSON-RPC.
package linktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/wire"
)

// ExtensionOrigin is the Origin the real extension sends.
const ExtensionOrigin = "chrome-extension://" + link.ExtensionID

// Options configure Dial.
type Options struct {
	// Origin sent in the handshake; empty means ExtensionOrigin. Set
	// NoOrigin to send none (a non-browser client).
	Origin   string
	NoOrigin bool
	// Header adds request headers (e.g. Authorization, Host).
	Header http.Header
	// Subprotocols offered, e.g. "openab.bearer.<t>", "acp.v1".
	Subprotocols []string
	// Handler answers requests the daemon sends (e.g. mcp/connect later);
	// nil answers -32601. Notifications also arrive here (result ignored).
	Handler func(ctx context.Context, method string, params json.RawMessage) (any, error)
}

// Client is one connection to /acp.
type Client struct {
	WS     *websocket.Conn
	Origin string
	// HTTP is the upgrade response (subprotocol echo, status).
	HTTP *http.Response
	// Hello is the last torii/hello result.
	Hello *link.HelloResult

	handler func(ctx context.Context, method string, params json.RawMessage) (any, error)
	ctx     context.Context
	cancel  context.CancelFunc
	peer    *wire.Peer
	inbox   chan *wire.Message

	clientNonce []byte
	pairSig     string // daemonSig from an approved torii/pair on this connection
}

// Dial opens a WebSocket to url (ws://host:port/acp). On a refused
// handshake the error wraps the HTTP status; see StatusOf.
func Dial(ctx context.Context, url string, opts *Options) (*Client, error) {
	if opts == nil {
		opts = &Options{}
	}
	origin := opts.Origin
	if origin == "" && !opts.NoOrigin {
		origin = ExtensionOrigin
	}
	h := http.Header{}
	for k, v := range opts.Header {
		h[k] = append([]string(nil), v...)
	}
	if origin != "" {
		h.Set("Origin", origin)
	}
	ws, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: h, Subprotocols: opts.Subprotocols})
	if err != nil {
		if resp != nil {
			return nil, &HandshakeError{Status: resp.StatusCode, Err: err}
		}
		return nil, err
	}
	ws.SetReadLimit(-1) // the test client must be able to receive anything
	cctx, cancel := context.WithCancel(context.Background())
	c := &Client{WS: ws, Origin: origin, HTTP: resp, handler: opts.Handler, ctx: cctx, cancel: cancel,
		inbox: make(chan *wire.Message, 256)}
	c.peer = wire.NewPeer(wire.NewWSFramer(cctx, ws, wire.WSOptions{}), wire.Options{
		QuietBadFrames: true,
		Handle:         c.handle,
		Notify:         c.notify,
		Unmatched:      c.keep,
	})
	go c.peer.Run(cctx)
	return c, nil
}

// HandshakeError is a refused upgrade.
type HandshakeError struct {
	Status int
	Err    error
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("handshake refused: HTTP %d: %v", e.Status, e.Err)
}
func (e *HandshakeError) Unwrap() error { return e.Err }

// StatusOf returns the HTTP status of a refused handshake, or 0.
func StatusOf(err error) int {
	var h *HandshakeError
	if errors.As(err, &h) {
		return h.Status
	}
	return 0
}

// keep puts a message no Call or Handler took into the inbox.
func (c *Client) keep(m *wire.Message) {
	select {
	case c.inbox <- m:
	default: // a test that never reads its inbox must not wedge the loop
	}
}

func (c *Client) notify(_ context.Context, m *wire.Message) {
	if c.handler == nil {
		c.keep(m)
		return
	}
	go func() { _, _ = c.handler(c.ctx, m.Method, m.Params) }()
}

func (c *Client) handle(_ context.Context, m *wire.Message) (any, error) {
	if c.handler == nil {
		return nil, wire.Errorf(wire.CodeMethodNotFound, "linktest: no handler for %s", m.Method)
	}
	return c.handler(context.WithValue(c.ctx, requestIDKey{}, m.ID), m.Method, m.Params)
}

type requestIDKey struct{}

// RequestID is the outer JSON-RPC id of the request a Handler is answering
// (nil for a notification); MCP-over-ACP's mcp/cancel names calls by it.
func RequestID(ctx context.Context) json.RawMessage {
	id, _ := ctx.Value(requestIDKey{}).(json.RawMessage)
	return id
}

// SendRaw writes one text frame as is (for malformed-input tests).
func (c *Client) SendRaw(ctx context.Context, data []byte) error {
	return c.WS.Write(ctx, websocket.MessageText, data)
}

// Call sends a request and waits for its response; an error reply comes
// back as *wire.Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	err := c.peer.Call(ctx, method, params, result)
	if errors.Is(err, wire.ErrClosed) {
		return fmt.Errorf("linktest: connection closed: %w", c.err())
	}
	return err
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	return c.peer.Notify(ctx, method, params)
}

// Next returns the next message that was neither a response to a Call nor
// handled by the Handler (e.g. an error reply with id null).
func (c *Client) Next(ctx context.Context) (*wire.Message, error) {
	select {
	case m := <-c.inbox:
		return m, nil
	case <-c.peer.Done():
		select {
		case m := <-c.inbox:
			return m, nil
		default:
		}
		return nil, fmt.Errorf("linktest: connection closed: %w", c.err())
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (c *Client) err() error { return c.peer.Err() }

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.peer.Done() }

// WaitClosed waits for the daemon to close the connection and returns the
// close status it sent (-1 if the connection ended without one).
func (c *Client) WaitClosed(ctx context.Context) (websocket.StatusCode, error) {
	select {
	case <-c.peer.Done():
		return websocket.CloseStatus(c.err()), nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// CloseReason is the reason the daemon's close frame gave, once Done is
// closed ("" without one).
func (c *Client) CloseReason() string {
	var ce websocket.CloseError
	if errors.As(c.err(), &ce) {
		return ce.Reason
	}
	return ""
}

// Close closes the connection normally.
func (c *Client) Close() error {
	err := c.WS.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	<-c.peer.Done()
	return err
}
