package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by calls on a peer whose read side has ended; the
// cause (EOF, a close status, a frame over the cap) is wrapped beside it.
var ErrClosed = errors.New("jsonrpc: connection closed")

// ErrBusy is returned by Call when MaxPending requests already await the
// remote's answers; nothing was sent.
var ErrBusy = errors.New("jsonrpc: too many requests awaiting the peer's answers")

// NoReply is returned by a Handle that answers the request itself, now or
// later, through Reply (a pairing that waits for a person's decision).
var NoReply = errors.New("jsonrpc: the handler replies itself")

// Framer carries whole JSON-RPC messages: a WebSocket text frame, a line.
//
// ReadFrame is only called from the peer's read loop. It may return a
// *FrameError for input that is not a frame the peer can decode; any other
// error ends the peer. WriteFrame may be called concurrently.
type Framer interface {
	ReadFrame() ([]byte, error)
	WriteFrame(ctx context.Context, frame []byte) error
}

// FrameError is a frame the framer refused (binary, over its cap): Reply, if
// set, goes back with id null; the peer reads on unless Fatal (a stream cut
// mid-line cannot be resynchronised).
type FrameError struct {
	Reply *Error
	Fatal bool
	Err   error // the framer's own cause, for Fatal ones
	// ID, when the framer could read it, names the response the frame was:
	// that call fails with Err itself, the others only with ErrClosed.
	ID json.RawMessage
}

func (e *FrameError) Error() string {
	if e.Err != nil {
		return e.Err.Error()
	}
	if e.Reply != nil {
		return e.Reply.Message
	}
	return "jsonrpc: bad frame"
}

func (e *FrameError) Unwrap() error { return e.Err }

// Options configure a Peer. Every field is optional.
type Options struct {
	// IDPrefix makes outgoing ids strings ("d1", "d2", …); empty gives
	// numbers.
	IDPrefix string
	// StringIDs renders ids as strings even without a prefix.
	StringIDs bool
	// MaxPending bounds our requests awaiting answers (0: unbounded); past it
	// Call fails with ErrBusy and nothing is sent.
	MaxPending int
	// MaxInFlight bounds the remote's requests being handled at once (0:
	// unbounded). At the bound the read loop waits, which pushes back on the
	// remote instead of queueing its frames in memory.
	MaxInFlight int
	// MaxRequest: a method-bearing frame larger is answered -32600 with its
	// id and not decoded; responses may be larger (0: no such limit).
	MaxRequest int
	// QuietBadFrames drops frames that fail to decode instead of answering
	// them with a per-frame error (a client does not argue with its server).
	QuietBadFrames bool

	// Handle answers a request on its own goroutine. A *Error goes out as
	// is, any other error as -32603, NoReply sends nothing. nil answers
	// -32601.
	Handle func(ctx context.Context, req *Message) (any, error)
	// Notify handles a notification inline, in the read loop, so that
	// notifications keep their order and a slow consumer blocks the read
	// (push-back) rather than a queue growing. nil drops them.
	Notify func(ctx context.Context, n *Message)
	// Inline, if it says so, runs Handle for this request in the read loop
	// (cheap requests whose order matters, such as a handshake).
	Inline func(req *Message) bool
	// Arrive runs in the read loop for each request about to be handled
	// concurrently, in arrival order, once it has its MaxInFlight slot; the
	// context it returns is Handle's, which then always runs.
	Arrive func(ctx context.Context, req *Message) context.Context
	// Unmatched receives responses that answer no pending call (a late
	// answer, an error reply with id null).
	Unmatched func(m *Message)
	// Log sees every frame read ("in") or written ("out").
	Log func(dir string, frame []byte)
}

// Peer is one end of a JSON-RPC 2.0 connection: it correlates our requests
// with their responses, serves the remote's requests and notifications, and
// answers each undecodable frame with its own error. Both sides of every
// torii wire use it (SECURITY I-56), so the bounds live in one place.
type Peer struct {
	f    Framer
	opts Options
	next atomic.Int64
	done chan struct{}

	mu      sync.Mutex
	pending map[string]chan answer // nil once closed
	cause   error
}

// NewPeer returns a peer over f; call Run to start reading.
func NewPeer(f Framer, opts Options) *Peer {
	return &Peer{f: f, opts: opts, done: make(chan struct{}), pending: map[string]chan answer{}}
}

// Done is closed when the read loop has ended.
func (p *Peer) Done() <-chan struct{} { return p.done }

// Err is why the read loop ended (nil while it runs).
func (p *Peer) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cause
}

// Run reads until the framer fails, dispatching every frame; ctx is the
// parent of every handler's context and ends with the read loop. Pending
// calls fail at once with ErrClosed; Run returns after the handlers did.
func (p *Peer) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var sem chan struct{}
	if p.opts.MaxInFlight > 0 {
		sem = make(chan struct{}, p.opts.MaxInFlight)
	}
	var handlers sync.WaitGroup
	var cause error
	var fatal *FrameError // the frame error that ended the stream, if one did
	for {
		frame, err := p.f.ReadFrame()
		if err != nil {
			var fe *FrameError
			if errors.As(err, &fe) {
				if fe.Reply != nil && !p.opts.QuietBadFrames {
					p.send(ctx, NewErrorResponse(nil, fe.Reply))
				}
				if !fe.Fatal {
					continue
				}
				fatal = fe
			}
			cause = err
			break
		}
		if p.opts.Log != nil {
			p.opts.Log("in", frame)
		}
		if !p.dispatch(ctx, frame, sem, &handlers) {
			cause = ctx.Err()
			break
		}
	}
	cancel()
	p.mu.Lock()
	if cause == nil {
		cause = errors.New("read loop ended")
	}
	p.cause = cause
	for id, ch := range p.pending {
		if fatal != nil && fatal.ID != nil && id == string(fatal.ID) {
			ch <- answer{err: fmt.Errorf("%w: %w", ErrClosed, fatal)}
		}
		close(ch)
	}
	p.pending = nil
	p.mu.Unlock()
	close(p.done)
	handlers.Wait()
	return cause
}

// dispatch handles one frame; false means the peer is shutting down.
func (p *Peer) dispatch(ctx context.Context, frame []byte, sem chan struct{}, handlers *sync.WaitGroup) bool {
	if p.opts.MaxRequest > 0 && len(frame) > p.opts.MaxRequest {
		id, method, ok := Peek(frame)
		if !ok {
			p.badFrame(ctx, nil, Errorf(CodeParseError, "parse error: frame is not valid JSON"))
			return true
		}
		if method != "" {
			p.badFrame(ctx, id, Errorf(CodeInvalidRequest, "request too large: %d bytes, limit %d", len(frame), p.opts.MaxRequest))
			return true
		}
	}
	msg, rpcErr := Decode(frame)
	if rpcErr != nil {
		var id json.RawMessage
		if msg != nil {
			id = msg.ID
		}
		p.badFrame(ctx, id, rpcErr)
		return true
	}
	if msg.Method == "" {
		p.deliver(msg)
		return true
	}
	if !msg.HasID() {
		if p.opts.Notify != nil {
			p.opts.Notify(ctx, msg)
		}
		return true
	}
	if p.opts.Inline != nil && p.opts.Inline(msg) {
		p.serve(ctx, msg)
		return true
	}
	if sem != nil {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return false
		}
	}
	hctx := ctx
	if p.opts.Arrive != nil {
		hctx = p.opts.Arrive(ctx, msg)
	}
	handlers.Add(1)
	go func() {
		defer handlers.Done()
		if sem != nil {
			defer func() { <-sem }()
		}
		p.serve(hctx, msg)
	}()
	return true
}

func (p *Peer) badFrame(ctx context.Context, id json.RawMessage, e *Error) {
	if !p.opts.QuietBadFrames {
		p.send(ctx, NewErrorResponse(id, e))
	}
}

func (p *Peer) serve(ctx context.Context, req *Message) {
	if p.opts.Handle == nil {
		p.send(ctx, NewErrorResponse(req.ID, Errorf(CodeMethodNotFound, "method %q not found", req.Method)))
		return
	}
	res, err := p.opts.Handle(ctx, req)
	if errors.Is(err, NoReply) {
		return
	}
	// An answer is owed even when the handler ended because the connection
	// is shutting down (a `shutdown` request is answered); a framer that
	// cannot write any more says so itself.
	p.Reply(context.WithoutCancel(ctx), req.ID, res, err)
}

// Reply answers the request id: err (a *Error as is, any other as -32603)
// or result. Best effort: a broken connection is the read loop's business.
func (p *Peer) Reply(ctx context.Context, id json.RawMessage, result any, err error) {
	if err != nil {
		p.send(ctx, NewErrorResponse(id, asError(err)))
		return
	}
	m, mErr := NewResult(id, result)
	if mErr != nil {
		m = NewErrorResponse(id, Errorf(CodeInternalError, "encode result: %v", mErr))
	}
	p.send(ctx, m)
}

// asError is err as a JSON-RPC error: itself if it is one, else -32603.
func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return Errorf(CodeInternalError, "%v", err)
}

func (p *Peer) deliver(m *Message) {
	p.mu.Lock()
	ch := p.pending[string(m.ID)]
	if ch != nil {
		delete(p.pending, string(m.ID))
	}
	p.mu.Unlock()
	if ch == nil {
		if p.opts.Unmatched != nil {
			p.opts.Unmatched(m)
		}
		return
	}
	ch <- answer{m: m}
}

// answer is what a pending call gets: the response, or why there is none.
type answer struct {
	m   *Message
	err error
}

func (p *Peer) send(ctx context.Context, m *Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err // nothing was written
	}
	if p.opts.Log != nil {
		p.opts.Log("out", b)
	}
	return p.f.WriteFrame(ctx, b)
}

// newID returns a fresh outgoing request id.
func (p *Peer) newID() json.RawMessage {
	n := p.next.Add(1)
	if p.opts.IDPrefix != "" || p.opts.StringIDs {
		return RawID(p.opts.IDPrefix + strconv.FormatInt(n, 10))
	}
	return IntID(n)
}

// Pending is a request that was written and awaits its answer.
type Pending struct {
	p  *Peer
	id json.RawMessage
	ch chan answer
}

// ID is the request's id (MCP-over-ACP's mcp/cancel names a call by it).
func (c *Pending) ID() json.RawMessage { return c.id }

// Start writes a request (id nil: a fresh one) and returns
// at once; Wait collects the answer. Callers that must keep their requests
// in order start them one after the other and wait in any order.
func (p *Peer) Start(ctx context.Context, id json.RawMessage, method string, params any) (*Pending, error) {
	if id == nil {
		id = p.newID()
	}
	req, err := NewRequest(id, method, params)
	if err != nil {
		return nil, fmt.Errorf("jsonrpc: encode %s params: %w", method, err)
	}
	ch := make(chan answer, 1)
	p.mu.Lock()
	if p.pending == nil {
		err := p.closedErr()
		p.mu.Unlock()
		return nil, err
	}
	if p.opts.MaxPending > 0 && len(p.pending) >= p.opts.MaxPending {
		p.mu.Unlock()
		return nil, ErrBusy
	}
	p.pending[string(id)] = ch
	p.mu.Unlock()
	c := &Pending{p: p, id: id, ch: ch}
	if err := p.send(ctx, req); err != nil {
		c.forget()
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return c, nil
}

func (c *Pending) forget() {
	c.p.mu.Lock()
	if c.p.pending != nil {
		delete(c.p.pending, string(c.id))
	}
	c.p.mu.Unlock()
}

// Wait waits for the answer and decodes its result into result (nil
// discards it). A JSON-RPC error answer comes back as *Error; ctx ending
// gives ctx.Err(), the connection ending ErrClosed.
func (c *Pending) Wait(ctx context.Context, result any) error {
	defer c.forget()
	var a answer
	select {
	case a = <-c.ch:
	case <-ctx.Done():
		return ctx.Err()
	case <-c.p.done:
		// An answer that arrived just before the end still counts.
		select {
		case a = <-c.ch:
		default:
		}
	}
	m := a.m
	if a.err != nil {
		return a.err
	}
	if m == nil {
		c.p.mu.Lock()
		defer c.p.mu.Unlock()
		return c.p.closedErr()
	}
	return m.DecodeResult(result)
}

func (p *Peer) closedErr() error {
	if p.cause != nil {
		return fmt.Errorf("%w: %v", ErrClosed, p.cause)
	}
	return ErrClosed
}

// Call sends a request and waits for its answer.
func (p *Peer) Call(ctx context.Context, method string, params, result any) error {
	c, err := p.Start(ctx, nil, method, params)
	if err != nil {
		return err
	}
	return c.Wait(ctx, result)
}

// Notify sends a notification.
func (p *Peer) Notify(ctx context.Context, method string, params any) error {
	m, err := NewRequest(nil, method, params)
	if err != nil {
		return err
	}
	return p.send(ctx, m)
}
