package gateway

import (
	"fmt"
	"time"
)

// The watchdog flags the agent not_responding when a turn sees no update
// for the idle timeout. It is one timer per turn, re-armed by each update;
// time waiting on the person's permission answer does not count, so the
// timer is stopped while a relay waits and re-armed when it ends.

// armWatchdog starts the turn's timer; the caller holds s.mu.
func (s *Session) armWatchdog(t *turn) {
	t.idle = s.g.conf().IdleTimeout
	s.lastActive = time.Now()
	t.idleTimer = time.AfterFunc(t.idle, func() { s.idleExpired(t) })
}

// activeLocked records activity of the agent or the person and re-arms the
// turn's timer unless a permission relay is waiting; the caller holds s.mu.
func (s *Session) activeLocked() {
	s.lastActive = time.Now()
	if t := s.turn; t != nil && t.idleTimer != nil && s.permWaits == 0 {
		t.idleTimer.Reset(t.idle)
	}
}

// permissionWaitLocked pauses (waiting) or resumes the watchdog around a
// permission relay; the caller holds s.mu.
func (s *Session) permissionWaitLocked(waiting bool) {
	if waiting {
		s.permWaits++
		if t := s.turn; t != nil && t.idleTimer != nil {
			t.idleTimer.Stop()
		}
		return
	}
	s.permWaits--
	s.activeLocked()
}

// idleExpired runs when the turn's timer fires. A timer that fired while
// activity was re-arming it finds the activity newer than the timeout and
// does nothing.
func (s *Session) idleExpired(t *turn) {
	s.mu.Lock()
	flag := s.turn == t && s.status == StatusBusy && s.permWaits == 0 && time.Since(s.lastActive) >= t.idle
	if flag {
		s.status, s.detail = StatusNotResponding, fmt.Sprintf("no update from the agent for %s", t.idle.Round(time.Millisecond))
	}
	s.mu.Unlock()
	if flag {
		s.g.log.Warn("gateway: agent not responding", "session", s.ID, "agent", s.Agent)
		s.notifyStatus()
	}
}
