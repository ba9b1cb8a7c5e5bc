package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/wire"
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
	// arrivalHeader carries, in the RequestExtra the relay gives the SDK, the
	// key of a tools/call's arrival stamp, so its handler finds it. Only the
	// relay sets it; /mcp requests never read it.
	arrivalHeader = "Torii-Arrival"
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
		rc := newRelayConn(c, d.broker)
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
	c      net.Conn
	br     *bufio.Reader
	broker *broker.Broker
	order  broker.Order

	wmu sync.Mutex // one message per write, whole

	mu       sync.Mutex
	hello    RelayHelloParams
	pending  map[jsonrpc.ID]string      // requests read and not yet answered: their arrival key, or ""
	arrivals map[string]*broker.Arrival // tools/calls' arrival stamps by key
	next     uint64                     // the last arrival key
	once     sync.Once
}

func newRelayConn(c net.Conn, b *broker.Broker) *relayConn {
	return &relayConn{c: c, br: bufio.NewReaderSize(c, 64<<10), broker: b,
		pending: map[jsonrpc.ID]string{}, arrivals: map[string]*broker.Arrival{}}
}

// arrival is the arrival stamp of the tools/call whose RequestExtra is
// extra, nil if it has none.
func (r *relayConn) arrival(extra *mcp.RequestExtra) *broker.Arrival {
	if extra == nil || extra.Header == nil {
		return nil
	}
	key := extra.Header.Get(arrivalHeader)
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.arrivals[key]
}

// done forgets an answered or cancelled request; a tools/call that never
// took its place in the queue gives it up, so the next one may take its own.
func (r *relayConn) done(id jsonrpc.ID) {
	r.mu.Lock()
	key, ok := r.pending[id]
	delete(r.pending, id)
	a := r.arrivals[key]
	if ok && key != "" {
		delete(r.arrivals, key)
	}
	r.mu.Unlock()
	a.Placed()
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
// instead each tools/call is stamped with its arrival as it is read
// (broker.Arrive), and the broker queues it after the calls read before it.
// Reading never waits on the queue (SECURITY I-25).
func (r *relayConn) Read(ctx context.Context) (jsonrpc.Message, error) {
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
					r.done(id)
				}
			}
		case req.IsCall():
			r.mu.Lock()
			_, dup := r.pending[req.ID]
			key := ""
			if !dup && req.Method == "tools/call" {
				r.next++
				key = strconv.FormatUint(r.next, 10)
				r.arrivals[key] = r.broker.Arrive(&r.order)
			}
			if !dup {
				r.pending[req.ID] = key
			}
			r.mu.Unlock()
			if dup {
				// The SDK would drop it without a word. Answered with a null
				// id: the call that holds the id must not get this answer.
				r.reply(nil, wire.CodeInvalidRequest, "request id already in use by a request not yet answered")
				continue
			}
			if key != "" {
				req.Extra = &mcp.RequestExtra{Header: http.Header{arrivalHeader: {key}}}
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
				r.reply(nil, wire.CodeInvalidRequest, "message too large")
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

// decode parses one line, once: the SDK's message is what the session
// gets. A line that is not one JSON-RPC message is answered with a parse or
// invalid-request error (the session goes on), and decode returns nil.
func (r *relayConn) decode(line []byte) jsonrpc.Message {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	msg, err := jsonrpc.DecodeMessage(line)
	var syntax *json.SyntaxError
	switch {
	case err == nil:
		return msg
	case errors.As(err, &syntax):
		r.reply(nil, wire.CodeParseError, "parse error: not valid JSON")
	case line[0] == '[':
		r.reply(nil, wire.CodeInvalidRequest, "batches are not supported: send one message per line")
	default:
		// Only a line already refused is read again, for its id.
		id, _, _ := wire.Peek(line)
		r.reply(id, wire.CodeInvalidRequest, "invalid JSON-RPC message: "+err.Error())
	}
	return nil
}

// reply answers a line the session never sees, with the one peer's error
// shape: its id, or "id":null when it has none (SECURITY I-56).
func (r *relayConn) reply(id json.RawMessage, code int, message string) {
	b, err := json.Marshal(wire.NewErrorResponse(id, &wire.Error{Code: code, Message: message}))
	if err == nil {
		_ = r.write(b)
	}
}

func (r *relayConn) Write(_ context.Context, msg jsonrpc.Message) error {
	b, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.IsValid() {
		// A call answered without running (invalid, cancelled while the
		// SDK still held it) gives up its place here.
		r.done(resp.ID)
	}
	return r.write(b)
}

// write writes one message and its newline, whole.
func (r *relayConn) write(b []byte) error {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_ = r.c.SetWriteDeadline(time.Now().Add(relayWriteTimeout))
	_, err := r.c.Write(append(b, '\n'))
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.Close()
	}
	return err
}
