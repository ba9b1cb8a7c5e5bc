package gateway

import (
	"time"
)

// pump sends buffered updates to the attached client, in order.
func (s *Session) pump() {
	for {
		select {
		case <-s.done:
			return
		case <-s.buf.Signal():
		}
		s.drain()
	}
}

// drain sends every buffered update, then wakes the flushes waiting for
// the outbox to be empty.
func (s *Session) drain() {
	for {
		s.flushMu.Lock()
		s.sending = true
		s.flushMu.Unlock()
		u := s.buf.Pop()
		if u == nil {
			break
		}
		s.mu.Lock()
		c := s.conn
		s.mu.Unlock()
		if c != nil {
			_ = c.Notify(c.Context(), "session/update", map[string]any{"sessionId": s.ID, "update": u})
		}
	}
	s.flushMu.Lock()
	s.sending = false
	// An update pushed since the last Pop left a signal: the pump comes
	// back for it, and the waiters wait for that round.
	if s.buf.Pending() == 0 {
		for _, w := range s.flushed {
			close(w)
		}
		s.flushed = nil
	}
	s.flushMu.Unlock()
}

// flush waits (up to d) until every buffered update has been sent, so what
// the agent said before reaches the client before what follows it (a
// permission request, a prompt's answer).
func (s *Session) flush(d time.Duration) {
	s.flushMu.Lock()
	if !s.sending && s.buf.Pending() == 0 {
		s.flushMu.Unlock()
		return
	}
	w := make(chan struct{})
	s.flushed = append(s.flushed, w)
	s.flushMu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-w:
	case <-t.C:
	case <-s.done:
	}
}

// StatusParams is torii/agent_status.
type StatusParams struct {
	SessionID string `json:"sessionId"`
	Agent     string `json:"agent"`
	Status    string `json:"status"`
	Detail    string `json:"detail,omitempty"`
}

// notifyStatus sends the session's current status. Sends are serialised, and
// each takes its snapshot inside that order, so the last word a client gets is
// the latest status: two goroutines (a turn ending, the process exiting) never
// deliver an older word after a newer one.
func (s *Session) notifyStatus() {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.sendStatus()
}

// sendStatus sends the current status; the caller holds notifyMu.
func (s *Session) sendStatus() {
	s.mu.Lock()
	c := s.conn
	p := StatusParams{SessionID: s.ID, Agent: s.Agent, Status: s.status, Detail: s.detail}
	s.mu.Unlock()
	if c != nil {
		_ = c.Notify(c.Context(), "torii/agent_status", p)
	}
}
