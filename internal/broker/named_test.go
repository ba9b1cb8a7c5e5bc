package broker

import (
	"context"
	"encoding/json"
	"github.com/torii-browser/torii/internal/browserlink"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/config"
)

type savedLog struct {
	mu   sync.Mutex
	last map[string]Saved
	n    int
}

func (l *savedLog) save(m map[string]Saved) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.last, l.n = m, l.n+1
}

func (l *savedLog) get() map[string]Saved {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

const savedID = "s-0b5f2d3c-1111-4222-8333-444455556666"

// A name saved by a previous daemon is the same session: its ID (which the
// extension owns tabs by) and its tabs come back; a call's result then
// says which tabs it really has, and a tab gone meanwhile leaves the store.
func TestNamedSessionResumesAndDropsUnknownTab(t *testing.T) {
	t.Parallel()
	b := New(nil)
	b.SetLimits(config.Broker{})
	log := &savedLog{}
	b.SetNamedStore(map[string]Saved{"inspector": {ID: savedID, Label: "inspector", Tabs: []int{7, 9}, Browser: "fake", Used: time.Now()}}, log.save)
	f := newFake()
	b.AttachServer(f)
	t.Cleanup(func() { b.Close(); f.cancel() })

	s := b.NamedSession("inspector", "inspector")
	if s.ID() != savedID || !slices.Equal(s.Info().Tabs, []int{7, 9}) {
		t.Fatalf("resumed session = %s %v, want %s [7 9]", s.ID(), s.Info().Tabs, savedID)
	}
	if again := b.NamedSession("inspector", "inspector"); again != s {
		t.Fatal("the same name from another caller is another session")
	}
	// The extension knows tab 9 only (7 was closed while the daemon was down).
	f.mu.Lock()
	f.tabs[savedID] = []int{9}
	f.mu.Unlock()
	if r := b.CallTool(context.Background(), Call{Name: "work", Arguments: args(-1), Owner: s}); r.IsError {
		t.Fatalf("call failed: %s", resultText(r))
	}
	if got := log.get()["inspector"]; got.ID != savedID || !slices.Equal(got.Tabs, []int{9}) {
		t.Fatalf("saved after the call = %+v, want tabs [9]", got)
	}
	if other := b.NamedSession("other", "other"); other.ID() == savedID {
		t.Fatal("another name reached the saved session")
	}
}

// A name saved so long ago that it went idle while no daemon ran is not
// resumed; the first browser to attach hears it ended (and closes its tabs
// if it is a browser torii launched).
func TestNamedSessionExpiredWhileDown(t *testing.T) {
	t.Parallel()
	b := New(nil)
	b.SetLimits(config.Broker{SessionIdleSec: 60})
	log := &savedLog{}
	b.SetNamedStore(map[string]Saved{"old": {ID: savedID, Label: "old", Tabs: []int{3}, Used: time.Now().Add(-time.Hour)}}, log.save)
	f := newFake()
	b.AttachServer(f)
	t.Cleanup(func() { b.Close(); f.cancel() })
	waitFor(t, "session_ended for the expired session", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return slices.ContainsFunc(f.notified, func(n string) bool {
			return strings.HasPrefix(n, browserlink.MethodSessionEnded) && strings.Contains(n, savedID) && strings.Contains(n, `"closeManagedTabs":true`)
		})
	})
	if s := b.NamedSession("old", "old"); s.ID() == savedID {
		t.Fatal("an expired session was resumed")
	}
}

// An idle named session ends on time, without another call to sweep it,
// and leaves the store; keepManagedTabs is passed on.
func TestNamedSessionIdleEnd(t *testing.T) {
	t.Parallel()
	b := New(nil)
	b.SetLimits(config.Broker{KeepManagedTabs: true})
	b.SetLabelLimits(300*time.Millisecond, 0)
	log := &savedLog{}
	b.SetNamedStore(nil, log.save)
	f := newFake()
	b.AttachServer(f)
	t.Cleanup(func() { b.Close(); f.cancel() })
	s := b.NamedSession("n", "n")
	if r := b.CallTool(context.Background(), Call{Name: "work", Arguments: args(4), Owner: s}); r.IsError {
		t.Fatalf("call failed: %s", resultText(r))
	}
	select {
	case <-s.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the idle named session did not end")
	}
	waitFor(t, "the store to drop it", func() bool { _, ok := log.get()["n"]; return !ok && log.get() != nil })
	waitFor(t, "session_ended", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		for _, n := range f.notified {
			var p map[string]any
			if m, raw, ok := strings.Cut(n, " "); ok && m == browserlink.MethodSessionEnded && json.Unmarshal([]byte(raw), &p) == nil {
				return p["sessionId"] == s.ID() && p["closeManagedTabs"] == false
			}
		}
		return false
	})
}

// Ending a named session on request: a saved one not yet resumed is told
// to the browser its tabs are in; an unknown name is false.
func TestEndNamed(t *testing.T) {
	t.Parallel()
	b := New(nil)
	b.SetLimits(config.Broker{})
	log := &savedLog{}
	b.SetNamedStore(map[string]Saved{"kept": {ID: savedID, Label: "kept", Tabs: []int{3}, Browser: "fake", Used: time.Now()}}, log.save)
	f := newFake()
	b.AttachServer(f)
	t.Cleanup(func() { b.Close(); f.cancel() })
	if b.EndNamed("nobody") {
		t.Fatal("ended a session that does not exist")
	}
	if !b.EndNamed("kept") {
		t.Fatal("the saved session was not found")
	}
	waitFor(t, "session_ended for the saved session", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return slices.ContainsFunc(f.notified, func(n string) bool { return strings.Contains(n, savedID) })
	})
	waitFor(t, "the store to drop it", func() bool { _, ok := log.get()["kept"]; return !ok && log.get() != nil })
	live := b.NamedSession("live", "live")
	if !b.EndNamed("live") {
		t.Fatal("the live session was not found")
	}
	<-live.Done()
}
