package link

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/wire"
)

// ErrFrameTooLarge is the cause beside wire.ErrClosed when the peer sent a
// frame over MaxFrame: the connection was closed with 1009 (SECURITY I-11).
var ErrFrameTooLarge = websocket.ErrMessageTooBig

// ErrBusy is returned by Call when MaxPending requests already await this
// peer's answers; nothing was sent (SECURITY I-34).
var ErrBusy = wire.ErrBusy

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

	peer *wire.Peer
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

// newPeer is the connection's JSON-RPC peer: correlation, the pending
// budget, bounded concurrent handlers and per-frame error replies.
func (c *Conn) newPeer() *wire.Peer {
	f := wire.NewWSFramer(c.ctx, c.ws, wire.WSOptions{
		WriteTimeout: writeTimeout,
		Begin:        c.frameBegun,
		Binary:       func(data []byte) { c.srv.logFrame("in", c, data) },
	})
	return wire.NewPeer(f, wire.Options{
		IDPrefix: "d",
		// SECURITY I-34: a per-connection budget of outstanding requests
		// bounds the answers (up to MaxFrame each) one peer can make us hold.
		MaxPending: MaxPending,
		// The read loop blocks at the bound, which pushes back on the peer.
		MaxInFlight: maxInFlight,
		// SECURITY I-11: only responses may use the full MaxFrame; a larger
		// request or notification is refused with its id, the connection stays.
		MaxRequest: MaxRequest,
		Inline:     c.inline,
		Handle:     c.handle,
		// Inline, so notifications (session/cancel) keep their order.
		Notify: c.notify,
		Unmatched: func(*wire.Message) {
			c.srv.log.Debug("link: response to no pending call", "conn", c.id)
		},
		Log: func(dir string, frame []byte) { c.srv.logFrame(dir, c, frame) },
	})
}

// Call sends a request to the peer and waits for its response. A JSON-RPC
// error answer is returned as *wire.Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	return c.peer.Call(ctx, method, params, result)
}

// Start writes a request and returns without waiting for the answer, so a
// caller keeps its requests in the order it wrote them; the Pending's ID is
// what MCP-over-ACP's `mcp/cancel {requestId}` names. id may be nil.
func (c *Conn) Start(ctx context.Context, id json.RawMessage, method string, params any) (*wire.Pending, error) {
	return c.peer.Start(ctx, id, method, params)
}

// Notify sends a notification to the peer.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	return c.peer.Notify(ctx, method, params)
}

func (c *Conn) reply(id json.RawMessage, result any) {
	c.peer.Reply(c.ctx, id, result, nil)
}

func (c *Conn) replyErr(id json.RawMessage, e *wire.Error) {
	c.peer.Reply(c.ctx, id, nil, e)
}

// readLoop owns the socket's reads until it closes.
func (c *Conn) readLoop() {
	err := c.peer.Run(c.ctx)
	// Over MaxFrame the library has already closed with 1009 (SECURITY I-11).
	if errors.Is(err, ErrFrameTooLarge) {
		c.srv.log.Info("link: frame over limit, closed 1009", "conn", c.id)
	}
	c.cancel()
}

// frameBegun arms SECURITY I-51's read deadline: once a frame has begun
// it must be complete within frameTimeout; waiting for the next frame has
// no deadline of its own (keepalive watches a silent peer).
func (c *Conn) frameBegun() (end func()) {
	c.lastRead.Store(time.Now().UnixNano())
	t := time.AfterFunc(orDefault(c.srv.opts.frameTimeout, frameTimeout), func() {
		c.srv.log.Info("link: frame not finished in time, closing", "conn", c.id)
		c.Close(c.timeoutStatus(), "frame read timeout")
	})
	return func() { t.Stop() }
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

// inline: torii/* handshake methods (and every method before
// authentication) are answered in the read loop, in frame order; other
// torii/* methods of an authenticated connection (the gateway's
// torii/agents, torii/session/…) go to the Handler like any request.
func (c *Conn) inline(msg *wire.Message) bool {
	return c.srv.opts.Handler == nil || c.toriiOwn(msg) || !c.authed()
}

func (c *Conn) toriiOwn(msg *wire.Message) bool {
	return strings.HasPrefix(msg.Method, "torii/") && (linkMethod(msg.Method) || !c.authed())
}

func (c *Conn) handle(ctx context.Context, msg *wire.Message) (any, error) {
	if c.toriiOwn(msg) {
		c.handleTorii(msg)
		return nil, wire.NoReply
	}
	// SECURITY I-4: nothing but torii/hello, pair, auth, ping before auth.
	if !c.authed() {
		return nil, wire.Errorf(wire.CodeNotAuthenticated, "%s needs torii/auth first", msg.Method)
	}
	if c.srv.opts.Handler == nil {
		return nil, wire.Errorf(wire.CodeMethodNotFound, "method %q not found", msg.Method)
	}
	return c.srv.opts.Handler.Handle(ctx, c, msg.Method, msg.Params)
}

func (c *Conn) notify(ctx context.Context, msg *wire.Message) {
	switch {
	case c.toriiOwn(msg):
		c.handleTorii(msg)
	case c.authed() && c.srv.opts.Handler != nil:
		_, _ = c.srv.opts.Handler.Handle(ctx, c, msg.Method, msg.Params)
	}
}

// linkMethod reports whether a torii/* method is the link's own.
func linkMethod(m string) bool {
	switch m {
	case "torii/ping", "torii/hello", "torii/pair", "torii/auth":
		return true
	}
	return false
}
