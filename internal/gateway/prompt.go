package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/torii-browser/torii/internal/agents"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/wire"
)

// turn is one session/prompt, from the client's request to the agent's
// answer.
type turn struct {
	ctx       context.Context // ends when the turn ends, or is cancelled
	cancel    context.CancelFunc
	cancelled atomic.Bool   // session/cancel was received
	cancelCh  chan struct{} // closed on session/cancel
	once      sync.Once
	killed    atomic.Bool // restart/close ended it
	idle      time.Duration
	idleTimer *time.Timer // watchdog.go; guarded by the session's mu
}

// rewrite replaces params.sessionId with the agent's session id.
func rewrite(params json.RawMessage, sid string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(orEmpty(params), &m); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(sid)
	m["sessionId"] = b
	return json.Marshal(m)
}

func (s *Session) forward(ctx context.Context, method string, params json.RawMessage) (any, error) {
	s.mu.Lock()
	proc, sid := s.proc, s.agentSID
	s.mu.Unlock()
	if proc == nil {
		return nil, wire.Errorf(wire.CodeInternalError, "%s: the agent is not running", method)
	}
	p, err := rewrite(params, sid)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "%s: %v", method, err)
	}
	var res json.RawMessage
	if err := proc.Call(ctx, method, p, &res); err != nil {
		return nil, agentErr(method, err)
	}
	return res, nil
}

func agentErr(method string, err error) error {
	var e *wire.Error
	if errors.As(err, &e) {
		return e
	}
	return wire.Errorf(wire.CodeInternalError, "%s: %v", method, err)
}

func (s *Session) prompt(c *link.Conn, params json.RawMessage) (any, error) {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, wire.Errorf(CodeUnknownSession, "session/prompt: the session is closed")
	case s.conn != c:
		s.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/prompt: this connection is not attached to the session; call session/resume first")
	case s.turn != nil:
		s.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/prompt: a prompt is already running; cancel it first")
	case s.proc == nil || s.status == StatusCrashed || s.status == StatusExited:
		st, d := s.status, s.detail
		s.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInternalError, "session/prompt: the agent is %s (%s); call torii/session/restart", st, d)
	}
	proc, sid, gen := s.proc, s.agentSID, s.procGen
	t := &turn{cancelCh: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	s.turn = t
	s.status = StatusBusy
	s.armWatchdog(t)
	s.mu.Unlock()
	s.notifyStatus()
	defer t.cancel()

	p, err := rewrite(params, sid)
	if err != nil {
		s.endTurn(t)
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/prompt: %v", err)
	}
	var res json.RawMessage
	callCtx, stop := context.WithCancel(context.Background())
	context.AfterFunc(t.ctx, func() {
		if t.killed.Load() {
			stop()
		}
	})
	err = proc.Call(callCtx, "session/prompt", p, &res)
	stop()
	closed := errors.Is(err, agents.ErrClosed)
	if closed {
		select {
		case <-proc.Exited():
			s.recordEnd(proc, gen)
		case <-time.After(2 * time.Second):
		}
	}
	s.flush(2 * time.Second)
	s.endTurn(t)
	switch {
	case t.killed.Load():
		return map[string]string{"stopReason": "cancelled"}, nil
	case closed:
		return nil, wire.Errorf(wire.CodeInternalError, "session/prompt: the agent crashed (%s); call torii/session/restart", proc.ExitDetail())
	case err != nil:
		return nil, agentErr("session/prompt", err)
	}
	return res, nil
}

func (s *Session) endTurn(t *turn) {
	t.cancel()
	s.mu.Lock()
	t.idleTimer.Stop()
	if s.turn == t {
		s.turn = nil
	}
	changed := s.status == StatusBusy || s.status == StatusNotResponding
	if changed {
		s.status, s.detail = StatusReady, ""
	}
	s.mu.Unlock()
	if changed {
		s.notifyStatus()
	}
}

// cancelTurn: session/cancel. Pending permission relays answer cancelled
// at once; the agent is told and ends the prompt with stopReason cancelled.
func (s *Session) cancelTurn() {
	s.mu.Lock()
	t, proc, sid := s.turn, s.proc, s.agentSID
	s.mu.Unlock()
	if t == nil {
		return
	}
	t.cancelled.Store(true)
	t.once.Do(func() { close(t.cancelCh) })
	if proc != nil {
		// Not inline: this runs on the link's read loop, and an agent that
		// stopped reading its stdin must not stall the client's socket.
		go func() { _ = proc.Notify("session/cancel", map[string]string{"sessionId": sid}) }()
	}
}
