package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The MCP socket: `torii mcp` relays its agent's stdio here unchanged,
// newline-delimited JSON-RPC both ways, and each connection is one session
// of the shared MCP server (server.go). It is owner-only, like the
// control socket (SECURITY I-54).
const (
	// RelayHello is the one message of the relay's own: a notification sent
	// first, with RelayHelloParams.
	RelayHello = "torii/relay"
	// maxRelayLine bounds one message; a longer line is answered with an
	// error and skipped (SECURITY I-54).
	maxRelayLine = 32 << 20
	// relayWriteTimeout bounds one write to a relay that stopped reading.
	relayWriteTimeout = 30 * time.Second
	// turnMax bounds how long reading waits for a tools/call to take its
	// place in its session's queue (see turn).
	turnMax = 2 * time.Second
)

// RelayHelloParams say who a connection to the MCP socket is.
type RelayHelloParams struct {
	// SessionLabel names the session for the person.
	SessionLabel string `json:"sessionLabel,omitempty"`
	// Browser is the browser the client named (`torii mcp --browser`).
	Browser string `json:"browser,omitempty"`
	// Shared puts the connection's calls in the shared cli session of its
	// label instead of a session of its own: `torii exec` is one process
	// per call, and each call sees the tabs the ones before it opened.
	Shared bool `json:"shared,omitempty"`
	// TimeoutMs sets each call's deadline, its time in the queue included
	// (0: broker.DefaultCallTimeout; at most broker.MaxCallTimeout).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
}

// Line is the hello as the first line a client writes.
func (p RelayHelloParams) Line() []byte {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": RelayHello, "params": p})
	return append(b, '\n')
}

// relays tracks the live relay connections for the cap and for shutdown.
type relays struct {
	max   int
	mu    sync.Mutex
	conns map[*relayConn]bool
}

// ServeRelays accepts relays on ln until it is closed.
func (d *Server) ServeRelays(ctx context.Context, ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return nil
			}
			d.log.Warn("mcp socket: accept failed", "err", err)
			time.Sleep(50 * time.Millisecond)
			continue
		}
		rc := newRelayConn(c)
		if !d.relays.add(rc) {
			// SECURITY I-49: past the budget a newcomer is closed at once.
			d.log.Warn("mcp socket: too many relays; closing a new one", "max", d.relays.max)
			c.Close()
			continue
		}
		go d.serveRelay(ctx, rc)
	}
}

func (d *Server) serveRelay(ctx context.Context, rc *relayConn) {
	defer d.relays.remove(rc)
	ss, err := d.srv.Connect(context.WithValue(ctx, relayKey{}, rc), rc, nil)
	if err != nil {
		rc.Close()
		return
	}
	// Its broker session, if a call minted one, ends with it (agentSession).
	_ = ss.Wait()
}

func (r *relays) add(c *relayConn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		r.conns = map[*relayConn]bool{}
	}
	if len(r.conns) >= r.max {
		return false
	}
	r.conns[c] = true
	return true
}

func (r *relays) remove(c *relayConn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

// CloseRelays ends every relay session (daemon shutdown): each relay sees
// its socket close and re-initialises against the next daemon.
func (d *Server) CloseRelays() { d.relays.closeAll() }

func (r *relays) closeAll() {
	r.mu.Lock()
	cs := make([]*relayConn, 0, len(r.conns))
	for c := range r.conns {
		cs = append(cs, c)
	}
	r.mu.Unlock()
	for _, c := range cs {
		c.Close()
	}
}

type relayKey struct{}

// relayOf is the relay connection a request arrived on (the SDK hands the
// context given to Connect down to every handler), or nil for /mcp.
func relayOf(ctx context.Context) *relayConn {
	rc, _ := ctx.Value(relayKey{}).(*relayConn)
	return rc
}

// relayConn is one relay connection as an mcp.Transport and its
// mcp.Connection.
type relayConn struct {
	c    net.Conn
	br   *bufio.Reader
	turn turn

	wmu sync.Mutex // one message per write, whole

	mu      sync.Mutex
	hello   RelayHelloParams
	pending map[jsonrpc.ID]bool // requests read and not yet answered
	once    sync.Once
}

func newRelayConn(c net.Conn) *relayConn {
	return &relayConn{c: c, br: bufio.NewReaderSize(c, 64<<10), pending: map[jsonrpc.ID]bool{}}
}

func (r *relayConn) Connect(context.Context) (mcp.Connection, error) { return r, nil }
func (r *relayConn) SessionID() string                               { return "" }

// greeting is what the connection's hello said; the label defaults to "mcp".
func (r *relayConn) greeting() RelayHelloParams {
	r.mu.Lock()
	defer r.mu.Unlock()
	h := r.hello
	if h.SessionLabel == "" {
		h.SessionLabel = "mcp"
	}
	return h
}

func (r *relayConn) Close() error {
	r.once.Do(func() { r.c.Close() })
	return nil
}

// Read returns the next message. The go-sdk runs each call on its own
// goroutine, so arrival order would be lost between here and the broker;
// instead, after a tools/call the next message is read only once that
// call holds its place in the session's queue (turn): calls still run
// concurrently with reading, but are queued in the order they arrived.
func (r *relayConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	r.turn.wait(ctx)
	for {
		line, err := r.readLine()
		if err != nil {
			return nil, err
		}
		msg := r.decode(line)
		if msg == nil {
			continue
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok {
			return msg, nil
		}
		switch {
		case req.Method == RelayHello && !req.IsCall():
			var p RelayHelloParams
			if json.Unmarshal(req.Params, &p) == nil {
				r.mu.Lock()
				r.hello = p
				r.mu.Unlock()
			}
			continue
		case req.Method == "notifications/cancelled":
			// The SDK may never answer a cancelled request.
			var p struct {
				RequestID any `json:"requestId"`
			}
			if json.Unmarshal(req.Params, &p) == nil {
				if id, err := jsonrpc.MakeID(p.RequestID); err == nil {
					r.mu.Lock()
					delete(r.pending, id)
					r.mu.Unlock()
				}
			}
		case req.IsCall():
			r.mu.Lock()
			dup := r.pending[req.ID]
			r.pending[req.ID] = true
			r.mu.Unlock()
			if dup {
				// The SDK would drop it without a word. Answered with a null
				// id: the call that holds the id must not get this answer.
				r.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "request id already in use by a request not yet answered")
				continue
			}
			if req.Method == "tools/call" {
				r.turn.hold(req.ID)
			}
		}
		return msg, nil
	}
}

// readLine reads one line; a line over maxRelayLine is answered with an
// error and skipped.
func (r *relayConn) readLine() ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := r.br.ReadSlice('\n')
		if !tooLong && len(buf)+len(chunk) > maxRelayLine {
			tooLong, buf = true, nil
		}
		if !tooLong {
			buf = append(buf, chunk...)
		}
		switch {
		case err == nil || (errors.Is(err, io.EOF) && len(buf) > 0):
			if tooLong {
				r.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "message too large")
				tooLong, buf = false, nil
				if err != nil {
					return nil, err
				}
				continue
			}
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, err
		}
	}
}

// decode parses one line; a line that is not one JSON-RPC message is
// answered with a parse or invalid-request error (the session goes on),
// and decode returns nil.
func (r *relayConn) decode(line []byte) jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	switch {
	case err == nil:
		return msg
	case !json.Valid(line):
		r.reply(jsonrpc.ID{}, jsonrpc.CodeParseError, "parse error: not valid JSON")
	case line[0] == '[':
		r.reply(jsonrpc.ID{}, jsonrpc.CodeInvalidRequest, "batches are not supported: send one message per line")
	default:
		var e struct {
			ID any `json:"id"`
		}
		_ = json.Unmarshal(line, &e)
		id, _ := jsonrpc.MakeID(e.ID)
		r.reply(id, jsonrpc.CodeInvalidRequest, "invalid JSON-RPC message: "+err.Error())
	}
	return nil
}

func (r *relayConn) reply(id jsonrpc.ID, code int64, message string) {
	_ = r.Write(context.Background(), &jsonrpc.Response{ID: id, Error: &jsonrpc.Error{Code: code, Message: message}})
}

func (r *relayConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
		r.mu.Lock()
		delete(r.pending, resp.ID)
		r.mu.Unlock()
		// A call answered without running (invalid, cancelled while the
		// SDK still held it) gives its turn back here.
		r.turn.releaseID(resp.ID)
	}
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_ = r.c.SetWriteDeadline(time.Now().Add(relayWriteTimeout))
	_, err = r.c.Write(append(b, '\n'))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.Close()
	}
	return err
}

// turn is the one tools/call of a relay connection not yet queued in the
// broker. It is released when the call is queued (or refused) there, when
// any answer to it is written, or after turnMax.
type turn struct {
	mu sync.Mutex
	ch chan struct{}
	id jsonrpc.ID
}

func (t *turn) hold(id jsonrpc.ID) {
	t.mu.Lock()
	t.ch, t.id = make(chan struct{}), id
	t.mu.Unlock()
}

func (t *turn) release() {
	t.mu.Lock()
	if t.ch != nil {
		close(t.ch)
		t.ch = nil
	}
	t.mu.Unlock()
}

// releaser is the release of the turn held now, for the handler of the
// call holding it (nothing else can be read, so no other call holds one):
// idempotent, and a no-op once a later call holds the turn.
func (t *turn) releaser() func() {
	t.mu.Lock()
	ch := t.ch
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		if ch != nil && t.ch == ch {
			close(ch)
			t.ch = nil
		}
		t.mu.Unlock()
	}
}

func (t *turn) releaseID(id jsonrpc.ID) {
	t.mu.Lock()
	if t.ch != nil && t.id == id {
		close(t.ch)
		t.ch = nil
	}
	t.mu.Unlock()
}

func (t *turn) wait(ctx context.Context) {
	t.mu.Lock()
	ch := t.ch
	t.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
		return
	default:
	}
	tm := time.NewTimer(turnMax)
	defer tm.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-tm.C:
		t.release()
	}
}
