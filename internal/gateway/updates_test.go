package gateway

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/agents"
)

// flush returns at once when nothing waits to be sent, and otherwise when
// the pump has sent everything buffered before it, however long that takes:
// its own bound is an hour here, so returning is the pump's word.
func TestFlushWaitsForThePump(t *testing.T) {
	t.Parallel()
	s := &Session{ID: "s1", buf: agents.NewBuffer(), done: make(chan struct{})}
	defer close(s.done)
	s.buf.SetLive(true)
	returned := func(what string) {
		t.Helper()
		done := make(chan struct{})
		go func() { s.flush(time.Hour); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatalf("flush did not return %s", what)
		}
	}
	returned("with an empty outbox")

	for i := range 500 {
		s.buf.Push(json.RawMessage(fmt.Sprintf(`{"sessionUpdate":"plan","n":%d}`, i)))
	}
	flushed := make(chan struct{})
	go func() { s.flush(time.Hour); close(flushed) }()
	// Whether flush starts before the pump or after, it returns only once
	// the outbox is empty.
	go s.pump()
	select {
	case <-flushed:
	case <-time.After(30 * time.Second):
		t.Fatal("flush did not return once the pump drained the outbox")
	}
	if n := s.buf.Pending(); n != 0 {
		t.Fatalf("flush returned with %d updates unsent", n)
	}
	returned("after the pump drained")
}
