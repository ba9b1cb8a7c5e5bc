// Package control is the daemon's local control socket: a Unix socket
// carrying newline-delimited JSON-RPC 2.0, used by the CLI. `torii mcp`
// uses it only to find or start the daemon and check --browser; its MCP
// goes over the daemon's MCP socket instead.
package control

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/wire"
)

// MaxLine bounds one request line, so a client that never sends a newline
// cannot grow the daemon's memory without limit.
const MaxLine = 8 << 20

// Handler answers one control method. Returning a *wire.Error sends it
// as is; any other error becomes -32603 with its message.
type Handler func(ctx context.Context, method string, params json.RawMessage) (any, error)

// Listen creates the control socket. SECURITY I-9: the socket lives in a
// 0700 directory and is itself 0600, so only the daemon's user can connect.
// A stale socket file is removed; the caller must hold the daemon lock.
func Listen(path string) (net.Listener, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control: create socket dir: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("control: secure socket dir: %w", err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control: remove stale socket: %w", err)
	}
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("control: listen: %w", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control: chmod socket: %w", err)
	}
	return ln, nil
}

// Limits bound what one client can make the daemon hold (SECURITY I-49).
type Limits struct {
	// MaxConns caps open connections; past it a newcomer is closed at once.
	MaxConns int
	// MaxInFlight caps one connection's requests being handled; past it the
	// connection is not read until one finishes (push-back, not refusal).
	MaxInFlight int
	// LineTimeout bounds how long a started line may take to finish.
	LineTimeout time.Duration
}

// Default limits.
const (
	DefaultMaxConns    = 256
	DefaultMaxInFlight = 64
	DefaultLineTimeout = 30 * time.Second
)

func (l Limits) withDefaults() Limits {
	if l.MaxConns <= 0 {
		l.MaxConns = DefaultMaxConns
	}
	if l.MaxInFlight <= 0 {
		l.MaxInFlight = DefaultMaxInFlight
	}
	if l.LineTimeout <= 0 {
		l.LineTimeout = DefaultLineTimeout
	}
	return l
}

// Server serves a Handler on a listener.
type Server struct {
	handler Handler
	log     *slog.Logger
	limits  Limits

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup // connection goroutines
	calls  sync.WaitGroup // in-flight handler calls

}

// NewServer returns a server; a nil logger discards.
func NewServer(h Handler, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{handler: h, log: log, conns: map[net.Conn]struct{}{}, limits: Limits{}.withDefaults()}
}

// SetLimits replaces the limits (zero fields: the defaults). Call before Serve.
func (s *Server) SetLimits(l Limits) { s.limits = l.withDefaults() }

// Accept back-off bounds: an error such as EMFILE is retried, never fatal.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// Serve accepts until ln is closed (by Close) or ctx ends. An accept error
// (out of file descriptors, a connection reset before accept) is logged and
// retried with back-off: it never ends the daemon (SECURITY I-49).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	go func() { <-ctx.Done(); ln.Close() }()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || ctx.Err() != nil {
				return nil
			}
			if errors.Is(err, net.ErrClosed) {
				return err
			}
			delay = min(max(delay*2, acceptBackoffMin), acceptBackoffMax)
			s.log.Warn("control: accept failed; retrying", "err", err, "retryIn", delay)
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		delay = 0
		s.mu.Lock()
		if s.closed || len(s.conns) >= s.limits.MaxConns {
			full := !s.closed
			s.mu.Unlock()
			if full {
				s.log.Warn("control: too many connections; refused one", "max", s.limits.MaxConns)
			}
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(ctx, c)
	}
}

// Close lets in-flight calls finish and write their replies (so a
// `shutdown` call is answered), then drops every connection. Handlers
// should watch the Serve context, which the caller cancels first.
func (s *Server) Close() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	s.calls.Wait()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
}

func (s *Server) serveConn(ctx context.Context, c net.Conn) {
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.wg.Done()
	}()
	f := wire.NewLineFramer(&lineDeadline{Conn: c, timeout: s.limits.LineTimeout}, c, MaxLine)
	peer := wire.NewPeer(f, wire.Options{
		// SECURITY I-49: a connection's requests in flight are bounded; the
		// next line is read only when one finishes. Each request runs on its
		// own goroutine: `pair.decide` and other long calls must not block
		// the connection's other calls.
		MaxInFlight: s.limits.MaxInFlight,
		Arrive: func(ctx context.Context, msg *wire.Message) context.Context {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.closed {
				c.Close() // shutting down: read no more
				return context.WithValue(ctx, refusedKey{}, true)
			}
			s.calls.Add(1)
			return ctx
		},
		Handle: func(ctx context.Context, msg *wire.Message) (any, error) {
			if ctx.Value(refusedKey{}) != nil {
				return nil, wire.NoReply
			}
			defer s.calls.Done()
			return s.handler(ctx, msg.Method, msg.Params)
		},
		// Control clients send requests only; a notification is run inline.
		Notify: func(ctx context.Context, msg *wire.Message) { _, _ = s.handler(ctx, msg.Method, msg.Params) },
	})
	_ = peer.Run(ctx)
}

type refusedKey struct{}

// lineDeadline bounds how long a line may take once its first byte has
// arrived, so a client that trickles an endless line is dropped; between
// lines an idle connection (a CLI waiting on a long call, such as
// `torii exec`'s tools.call) has no deadline.
type lineDeadline struct {
	net.Conn
	timeout time.Duration
	inLine  bool
}

func (l *lineDeadline) Read(p []byte) (int, error) {
	n, err := l.Conn.Read(p)
	if n > 0 {
		switch ended := p[n-1] == '\n'; {
		case ended && l.inLine:
			l.inLine = false
			_ = l.Conn.SetReadDeadline(time.Time{})
		case !ended && !l.inLine:
			l.inLine = true
			_ = l.Conn.SetReadDeadline(time.Now().Add(l.timeout))
		}
	}
	return n, err
}
