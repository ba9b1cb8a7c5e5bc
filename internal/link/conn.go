package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/jsonrpc"
)

// ErrConnClosed is returned by Call on a connection that has ended.
var ErrConnClosed = errors.New("link: connection closed")

// ErrBusy is returned by Call when MaxPending requests already await this
// peer's answers; nothing was sent (SECURITY I-34).
var ErrBusy = errors.New("link: too many requests awaiting the peer's answers")

type authState int

const (
	stateNew     authState = iota // upgraded, nothing said
	stateHello                    // torii/hello answered, nonces fixed
	statePairing                  // torii/pair waiting for a decision
	stateAuthed                   // torii/auth passed, or a token client
)

// Conn is one live /acp connection.
type Conn struct {
	id     string
	srv    *Server
	ws     *websocket.Conn
	origin string
	since  time.Time
	ctx    context.Context
	cancel context.CancelFunc

	mu         sync.Mutex
	state      authState
	kind       Kind
	deviceID   string
	deviceName string
	tokenID    string
	// Handshake material from torii/hello; fixed for the connection.
	clientNonce, serverNonce []byte
	helloDevice              string // paired device named in hello
	pairedDevice             string // device approved by torii/pair on this connection
	authTimer                *time.Timer
	closing                  bool

	// Guarded by the hub's lock.
	counted bool   // holds one of the MaxUnauthenticated slots
	seq     uint64 // arrival order

	lastRead atomic.Int64 // unix ns of the last frame begun

	next    atomic.Int64
	pmu     sync.Mutex
	pending map[string]chan *jsonrpc.Message
}

// ID is the connection ID (also the connectionId bound into signatures).
func (c *Conn) ID() string { return c.id }

// Origin is the Origin header the daemon saw ("" for non-browser clients).
func (c *Conn) Origin() string { return c.origin }

// Context ends when the connection closes.
func (c *Conn) Context() context.Context { return c.ctx }

// Info is a snapshot for status listings.
func (c *Conn) Info() ConnInfo {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ConnInfo{ID: c.id, Kind: c.kind, DeviceID: c.deviceID, DeviceName: c.deviceName,
		TokenID: c.tokenID, Origin: c.origin, Since: c.since}
}

// anonymous: nothing on this connection shows it is the paired extension
// or a pairing in progress, so it may be evicted for a newcomer.
func (c *Conn) anonymous() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing {
		return true
	}
	switch c.state {
	case stateNew:
		return true
	case stateHello:
		return c.helloDevice == "" && c.pairedDevice == ""
	}
	return false
}

func (c *Conn) authed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state == stateAuthed
}

// Close closes the connection with a WebSocket status. It returns at once;
// the close handshake finishes in the background.
func (c *Conn) Close(code websocket.StatusCode, reason string) {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	if c.authTimer != nil {
		c.authTimer.Stop()
	}
	c.mu.Unlock()
	c.srv.log.Debug("link: closing", "conn", c.id, "code", int(code), "reason", reason)
	go func() {
		_ = c.ws.Close(code, reason)
		c.cancel()
	}()
}

// Call sends a request to the peer and waits for its response. A JSON-RPC
// error answer is returned as *jsonrpc.Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.CallID(ctx, c.NewRequestID(), method, params, result)
}

// NewRequestID returns a fresh outgoing request id for CallID.
func (c *Conn) NewRequestID() json.RawMessage {
	return jsonrpc.RawID(fmt.Sprintf("d%d", c.next.Add(1)))
}

// CallID is Call with an id taken from NewRequestID beforehand, for callers
// that must name the request later: MCP-over-ACP's `mcp/cancel {requestId}`
// cancels a call by its outer JSON-RPC id.
func (c *Conn) CallID(ctx context.Context, id json.RawMessage, method string, params, result any) error {
	req, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		return fmt.Errorf("link: encode %s params: %w", method, err)
	}
	ch := make(chan *jsonrpc.Message, 1)
	c.pmu.Lock()
	if c.pending == nil {
		c.pmu.Unlock()
		return ErrConnClosed
	}
	if len(c.pending) >= MaxPending {
		// SECURITY I-34: a per-connection budget of outstanding requests
		// bounds the answers (up to MaxFrame each) one peer can make us hold.
		c.pmu.Unlock()
		return ErrBusy
	}
	c.pending[string(id)] = ch
	c.pmu.Unlock()
	defer func() {
		c.pmu.Lock()
		if c.pending != nil {
			delete(c.pending, string(id))
		}
		c.pmu.Unlock()
	}()
	if err := c.send(ctx, req); err != nil {
		return err
	}
	var m *jsonrpc.Message
	select {
	case m = <-ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		// A reply that arrived just before the close still counts.
		select {
		case m = <-ch:
		default:
		}
	}
	if m == nil {
		return ErrConnClosed
	}
	return m.DecodeResult(result)
}

// Notify sends a notification to the peer.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	n, err := jsonrpc.NewRequest(nil, method, params)
	if err != nil {
		return err
	}
	return c.send(ctx, n)
}

func (c *Conn) send(ctx context.Context, m *jsonrpc.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // nothing was written; the connection is untouched
	}
	c.srv.logFrame("out", c, b)
	// A write interrupted by cancellation makes coder/websocket close the whole
	// connection without a close frame, so once started a write is bounded only
	// by the write timeout and the connection's own lifetime, never by the caller.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	if err := c.ws.Write(wctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("%w: %v", ErrConnClosed, err)
	}
	return nil
}

func (c *Conn) reply(id json.RawMessage, result any) {
	m, err := jsonrpc.NewResult(id, result)
	if err != nil {
		c.replyErr(id, jsonrpc.Errorf(jsonrpc.CodeInternalError, "encode result: %v", err))
		return
	}
	_ = c.send(c.ctx, m)
}

func (c *Conn) replyErr(id json.RawMessage, e *jsonrpc.Error) {
	_ = c.send(c.ctx, jsonrpc.NewErrorResponse(id, e))
}

// readLoop owns the socket's reads until it closes.
func (c *Conn) readLoop() {
	sem := make(chan struct{}, maxInFlight)
	var handlers sync.WaitGroup
	for {
		typ, data, err := c.readFrame()
		if err != nil {
			// Over MaxFrame the library has already closed with 1009 (SECURITY I-11).
			if errors.Is(err, websocket.ErrMessageTooBig) {
				c.srv.log.Info("link: frame over limit, closed 1009", "conn", c.id)
			}
			break
		}
		c.srv.logFrame("in", c, data)
		if typ != websocket.MessageText {
			c.replyErr(nil, jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error: binary frames are not accepted; send JSON text frames"))
			continue
		}
		c.handleFrame(data, sem, &handlers)
	}
	c.cancel()
	handlers.Wait()
	c.pmu.Lock()
	for _, ch := range c.pending {
		close(ch)
	}
	c.pending = nil
	c.pmu.Unlock()
}

// readFrame reads one message. SECURITY I-51: once a frame has begun it
// must be complete within frameTimeout; waiting for the next frame has no
// deadline of its own (keepalive watches a silent peer).
func (c *Conn) readFrame() (websocket.MessageType, []byte, error) {
	typ, r, err := c.ws.Reader(c.ctx)
	if err != nil {
		return 0, nil, err
	}
	c.lastRead.Store(time.Now().UnixNano())
	t := time.AfterFunc(orDefault(c.srv.opts.frameTimeout, frameTimeout), func() {
		c.srv.log.Info("link: frame not finished in time, closing", "conn", c.id)
		c.Close(c.timeoutStatus(), "frame read timeout")
	})
	defer t.Stop()
	data, err := io.ReadAll(r)
	return typ, data, err
}

// timeoutStatus is the close code for a deadline: 1008 before
// authentication; 1001 after, because the extension treats a 1008 on an
// authenticated connection as its pairing being refused.
func (c *Conn) timeoutStatus() websocket.StatusCode {
	if c.authed() {
		return websocket.StatusGoingAway
	}
	return websocket.StatusPolicyViolation
}

// keepalive pings a peer that has been silent for pingInterval and closes
// the connection if no pong comes within pongTimeout. SECURITY I-51.
func (c *Conn) keepalive() {
	every := orDefault(c.srv.opts.pingInterval, pingInterval)
	t := time.NewTicker(every / 2)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(time.Unix(0, c.lastRead.Load())) < every {
			continue
		}
		ctx, cancel := context.WithTimeout(c.ctx, orDefault(c.srv.opts.pongTimeout, pongTimeout))
		err := c.ws.Ping(ctx)
		cancel()
		if err != nil {
			if c.ctx.Err() == nil {
				c.srv.log.Info("link: no pong, closing", "conn", c.id)
				c.Close(c.timeoutStatus(), "keepalive timeout")
			}
			return
		}
		c.lastRead.Store(time.Now().UnixNano())
	}
}

func (c *Conn) handleFrame(data []byte, sem chan struct{}, handlers *sync.WaitGroup) {
	if len(data) > MaxRequest {
		// SECURITY I-11: only responses may be this large; a request or
		// notification is refused with its id and the connection stays.
		id, method, ok := jsonrpc.Peek(data)
		if !ok {
			c.replyErr(nil, jsonrpc.Errorf(jsonrpc.CodeParseError, "parse error: frame is not valid JSON"))
			return
		}
		if method != "" {
			c.replyErr(id, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "request too large: %d bytes, limit %d", len(data), MaxRequest))
			return
		}
	}
	msg, rpcErr := jsonrpc.Decode(data)
	if rpcErr != nil {
		var id json.RawMessage
		if msg != nil {
			id = msg.ID
		}
		c.replyErr(id, rpcErr)
		return
	}
	if msg.Method == "" {
		c.deliverResponse(msg)
		return
	}
	// torii/* handshake methods (and every torii/* before authentication)
	// belong to the link; other torii/* methods of an authenticated
	// connection (the gateway's torii/agents, torii/session/…) go to the Handler.
	if strings.HasPrefix(msg.Method, "torii/") && (linkMethod(msg.Method) || !c.authed()) {
		c.handleTorii(msg)
		return
	}
	// SECURITY I-4: nothing but torii/hello, pair, auth, ping before auth.
	if !c.authed() {
		if msg.HasID() {
			c.replyErr(msg.ID, jsonrpc.Errorf(jsonrpc.CodeNotAuthenticated, "%s needs torii/auth first", msg.Method))
		}
		return
	}
	if c.srv.opts.Handler == nil {
		if msg.HasID() {
			c.replyErr(msg.ID, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method %q not found", msg.Method))
		}
		return
	}
	if msg.IsNotification() {
		// Inline, so notifications (session/cancel) keep their order.
		_, _ = c.srv.opts.Handler.Handle(c.ctx, c, msg.Method, msg.Params)
		return
	}
	sem <- struct{}{}
	handlers.Add(1)
	go func() {
		defer func() { <-sem; handlers.Done() }()
		res, err := c.srv.opts.Handler.Handle(c.ctx, c, msg.Method, msg.Params)
		if err != nil {
			var e *jsonrpc.Error
			if !errors.As(err, &e) {
				e = jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", err)
			}
			c.replyErr(msg.ID, e)
			return
		}
		c.reply(msg.ID, res)
	}()
}

func (c *Conn) deliverResponse(m *jsonrpc.Message) {
	c.pmu.Lock()
	ch := c.pending[string(m.ID)]
	delete(c.pending, string(m.ID))
	c.pmu.Unlock()
	if ch == nil {
		c.srv.log.Debug("link: response to no pending call", "conn", c.id)
		return
	}
	ch <- m
}

// linkMethod reports whether a torii/* method is the link's own.
func linkMethod(m string) bool {
	switch m {
	case "torii/ping", "torii/hello", "torii/pair", "torii/auth":
		return true
	}
	return false
}
