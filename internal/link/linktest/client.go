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
	"sync"
	"sync/atomic"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/jsonrpc"
	"github.com/torii-browser/torii/internal/link"
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
	next    atomic.Int64
	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Message
	inbox   chan *jsonrpc.Message
	done    chan struct{}
	readErr error

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
		pending: map[string]chan *jsonrpc.Message{}, inbox: make(chan *jsonrpc.Message, 256), done: make(chan struct{})}
	go c.readLoop()
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

func (c *Client) readLoop() {
	defer close(c.done)
	for {
		_, data, err := c.WS.Read(c.ctx)
		if err != nil {
			c.mu.Lock()
			c.readErr = err
			for _, ch := range c.pending {
				close(ch)
			}
			c.pending = nil
			c.mu.Unlock()
			return
		}
		msg, rpcErr := jsonrpc.Decode(data)
		if rpcErr != nil {
			continue
		}
		if msg.IsResponse() && msg.HasID() {
			c.mu.Lock()
			ch := c.pending[string(msg.ID)]
			delete(c.pending, string(msg.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- msg
				continue
			}
		}
		if msg.Method != "" && c.handler != nil {
			go c.serve(msg)
			continue
		}
		if msg.IsRequest() {
			go c.send(c.ctx, jsonrpc.NewErrorResponse(msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "linktest: no handler for %s", msg.Method)))
			continue
		}
		select {
		case c.inbox <- msg:
		default: // a test that never reads its inbox must not wedge the loop
		}
	}
}

type requestIDKey struct{}

// RequestID is the outer JSON-RPC id of the request a Handler is answering
// (nil for a notification); MCP-over-ACP's mcp/cancel names calls by it.
func RequestID(ctx context.Context) json.RawMessage {
	id, _ := ctx.Value(requestIDKey{}).(json.RawMessage)
	return id
}

func (c *Client) serve(msg *jsonrpc.Message) {
	res, err := c.handler(context.WithValue(c.ctx, requestIDKey{}, msg.ID), msg.Method, msg.Params)
	if !msg.HasID() {
		return
	}
	if err != nil {
		var e *jsonrpc.Error
		if !errors.As(err, &e) {
			e = jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", err)
		}
		_ = c.send(c.ctx, jsonrpc.NewErrorResponse(msg.ID, e))
		return
	}
	out, err := jsonrpc.NewResult(msg.ID, res)
	if err == nil {
		_ = c.send(c.ctx, out)
	}
}

func (c *Client) send(ctx context.Context, m *jsonrpc.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	return c.WS.Write(ctx, websocket.MessageText, b)
}

// SendRaw writes one text frame as is (for malformed-input tests).
func (c *Client) SendRaw(ctx context.Context, data []byte) error {
	return c.WS.Write(ctx, websocket.MessageText, data)
}

// Call sends a request and waits for its response; an error reply comes
// back as *jsonrpc.Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc.IntID(c.next.Add(1))
	req, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		return err
	}
	ch := make(chan *jsonrpc.Message, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return fmt.Errorf("linktest: connection closed: %w", c.readErr)
	}
	c.pending[string(id)] = ch
	c.mu.Unlock()
	if err := c.send(ctx, req); err != nil {
		return err
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return fmt.Errorf("linktest: connection closed: %w", c.err())
		}
		return m.DecodeResult(result)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Notify sends a notification.
func (c *Client) Notify(ctx context.Context, method string, params any) error {
	m, err := jsonrpc.NewRequest(nil, method, params)
	if err != nil {
		return err
	}
	return c.send(ctx, m)
}

// Next returns the next message that was neither a response to a Call nor
// handled by the Handler (e.g. an error reply with id null).
func (c *Client) Next(ctx context.Context) (*jsonrpc.Message, error) {
	select {
	case m := <-c.inbox:
		return m, nil
	case <-c.done:
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

func (c *Client) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readErr
}

// Done is closed when the connection has ended.
func (c *Client) Done() <-chan struct{} { return c.done }

// WaitClosed waits for the daemon to close the connection and returns the
// close status it sent (-1 if the connection ended without one).
func (c *Client) WaitClosed(ctx context.Context) (websocket.StatusCode, error) {
	select {
	case <-c.done:
		return websocket.CloseStatus(c.err()), nil
	case <-ctx.Done():
		return -1, ctx.Err()
	}
}

// Close closes the connection normally.
func (c *Client) Close() error {
	err := c.WS.Close(websocket.StatusNormalClosure, "")
	c.cancel()
	<-c.done
	return err
}
