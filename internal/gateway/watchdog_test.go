package gateway

import (
	"context"
	"log/slog"
	"testing"
	"time"
)

func busySession(idle time.Duration) (*Session, *turn) {
	s := &Session{ID: "s1", Agent: "a", g: New(Options{IdleTimeout: idle}), status: StatusBusy}
	t := &turn{}
	s.mu.Lock()
	s.turn = t
	s.armWatchdog(t)
	s.mu.Unlock()
	return s, t
}

// The turn's timer is one timer: armed at the start, stopped while the
// person decides on a permission, re-armed when they answer. Stop reports
// whether the timer was armed, so no clock is read.
func TestWatchdogPausesForThePerson(t *testing.T) {
	t.Parallel()
	s, tn := busySession(time.Hour)
	s.mu.Lock()
	s.permissionWaitLocked(true)
	s.mu.Unlock()
	if tn.idleTimer.Stop() {
		t.Fatal("the idle timer runs while the person decides")
	}
	s.mu.Lock()
	s.permissionWaitLocked(false)
	s.mu.Unlock()
	if !tn.idleTimer.Stop() {
		t.Fatal("the idle timer was not re-armed after the answer")
	}
	// An update re-arms it too.
	s.mu.Lock()
	s.activeLocked()
	s.mu.Unlock()
	if !tn.idleTimer.Stop() {
		t.Fatal("an update did not re-arm the idle timer")
	}
}

// A timer that fires late, after activity re-armed it, or while a
// permission waits, flags nothing; one that finds the turn idle flags it.
func TestWatchdogFlagsOnlyAnIdleTurn(t *testing.T) {
	t.Parallel()
	s, tn := busySession(time.Hour)
	tn.idleTimer.Stop()
	s.idleExpired(tn) // activity is newer than the timeout
	if s.status != StatusBusy {
		t.Fatalf("status %q after a stale fire", s.status)
	}
	s.lastActive = time.Now().Add(-2 * time.Hour)
	s.permWaits = 1
	s.idleExpired(tn)
	if s.status != StatusBusy {
		t.Fatalf("status %q while the person decides", s.status)
	}
	s.permWaits = 0
	s.idleExpired(&turn{idle: time.Hour}) // another turn's timer
	if s.status != StatusBusy {
		t.Fatalf("status %q from another turn's timer", s.status)
	}
	s.idleExpired(tn)
	if s.status != StatusNotResponding || s.detail != "no update from the agent for 1h0m0s" {
		t.Fatalf("status %q %q, want not_responding", s.status, s.detail)
	}
}

// Armed for a short timeout, the timer itself fires and flags the turn;
// the daemon's log line is the event.
func TestWatchdogFires(t *testing.T) {
	t.Parallel()
	logged := make(chan string, 1)
	s := &Session{ID: "s1", Agent: "a", status: StatusBusy,
		g: New(Options{IdleTimeout: time.Millisecond, Logger: slog.New(chanHandler(logged))})}
	tn := &turn{}
	s.mu.Lock()
	s.turn = tn
	s.armWatchdog(tn)
	s.mu.Unlock()
	select {
	case msg := <-logged:
		if msg != "gateway: agent not responding" {
			t.Fatalf("logged %q", msg)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the idle timer never flagged the turn")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status != StatusNotResponding {
		t.Fatalf("status %q", s.status)
	}
}

// chanHandler sends each log message to a channel.
type chanHandler chan string

func (h chanHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h chanHandler) Handle(_ context.Context, r slog.Record) error {
	select {
	case h <- r.Message:
	default:
	}
	return nil
}
func (h chanHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h chanHandler) WithGroup(string) slog.Handler      { return h }
