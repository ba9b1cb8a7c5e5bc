package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/torii-browser/torii/internal/wire"
)

// permissionWait bounds how long a relayed permission request waits for
// the person.
const permissionWait = 30 * time.Minute

// relayPermission asks the attached client; it falls back to the daemon's
// policy (deny) when the client cannot grant (-32601), is gone, or fails.
func (s *Session) relayPermission(ctx context.Context, params json.RawMessage) any {
	cancelled := map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
	s.mu.Lock()
	t, conn := s.turn, s.conn
	s.permissionWaitLocked(true)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.permissionWaitLocked(false)
		s.mu.Unlock()
	}()
	if t == nil || t.cancelled.Load() {
		return cancelled
	}
	if conn == nil {
		return deny(params, "no client is attached")
	}
	s.flush(2 * time.Second) // the tool_call update reaches the client first
	p, err := rewrite(params, s.ID)
	if err != nil {
		return deny(params, "bad params")
	}
	// The call runs on its own, uncancellable context: coder/websocket
	// closes the whole connection when a write's context ends during (or
	// before) the write, so session/cancel must not cancel the link call.
	// It abandons the wait instead; a late answer is dropped.
	type answer struct {
		res json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), permissionWait)
		defer cancel()
		var a answer
		a.err = conn.Call(cctx, "session/request_permission", json.RawMessage(p), &a.res)
		ch <- a
	}()
	var a answer
	select {
	case a = <-ch:
	case <-t.cancelCh:
		return cancelled
	case <-t.ctx.Done():
		return cancelled
	case <-ctx.Done(): // the agent went away
		return cancelled
	}
	res, err := a.res, a.err
	if t.cancelled.Load() || t.killed.Load() {
		return cancelled
	}
	if err != nil {
		var e *wire.Error
		if errors.As(err, &e) && e.Code == wire.CodeMethodNotFound {
			return deny(params, "the client cannot grant permissions")
		}
		return deny(params, err.Error())
	}
	var check struct {
		Outcome *struct {
			Outcome string `json:"outcome"`
		} `json:"outcome"`
	}
	if json.Unmarshal(res, &check) != nil || check.Outcome == nil || check.Outcome.Outcome == "" {
		return deny(params, "the client's answer has no outcome")
	}
	return res
}

// deny is the daemon's own policy answer: the first reject option, else
// cancelled.
func deny(params json.RawMessage, why string) any {
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	for _, kind := range []string{"reject_once", "reject_always"} {
		for _, o := range p.Options {
			if o.Kind == kind {
				return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": o.OptionID}}
			}
		}
	}
	_ = why
	return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
}
