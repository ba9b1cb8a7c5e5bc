package broker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/toolerr"
)

// SECURITY I-80: a call's deadline runs from its arrival, its wait in the
// queue included, and ends before the common MCP clients' 60 s, above the
// extension's own 50 s cap on a tool's run; no separate queue budget fires
// first.
func TestCallDeadlineDefaults(t *testing.T) {
	t.Parallel()
	if DefaultCallTimeout <= 50*time.Second || DefaultCallTimeout >= 60*time.Second {
		t.Fatalf("DefaultCallTimeout %s: must sit above the extension's 50 s and under a client's 60 s", DefaultCallTimeout)
	}
	if MaxCallTimeout < DefaultCallTimeout {
		t.Fatalf("MaxCallTimeout %s below the default", MaxCallTimeout)
	}
	if config.BrokerDefaults.QueueBudgetMs != 0 {
		t.Fatalf("a queue budget of %d ms by default: a queued call waits within its own deadline", config.BrokerDefaults.QueueBudgetMs)
	}
	b, f := setup(t, config.Broker{})
	close(f.gate)
	s := b.NewSession("s", KindStdio)
	for _, c := range []struct {
		timeout time.Duration
		want    time.Duration
	}{{0, DefaultCallTimeout}, {5 * time.Second, 5 * time.Second}, {time.Hour, MaxCallTimeout}} {
		f.mu.Lock()
		f.left = nil
		f.mu.Unlock()
		if got := code(s.CallTool(context.Background(), "work", args(1), c.timeout)); got != "ok" {
			t.Fatalf("timeout %s: %s", c.timeout, got)
		}
		f.mu.Lock()
		d := f.left[0]
		f.mu.Unlock()
		// The one absolute deadline sent: the whole timeout, less the moment it took.
		if d > c.want || d < c.want-time.Second {
			t.Fatalf("timeout %s: deadline %s away, want about %s", c.timeout, d, c.want)
		}
	}
}

// The call queued behind one that times out is not cancelled with it: it
// runs once the tab is free, within what is left of its own deadline.
func TestQueuedCallRunsBehindTimedOutCall(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{})
	s := b.NewSession("s", KindStdio)
	first := make(chan *mcp.CallToolResult, 1)
	go func() { first <- s.CallTool(context.Background(), "work", args(7), 300*time.Millisecond) }()
	waitFor(t, "the first call running", func() bool { return f.startedN() == 1 })
	second := make(chan *mcp.CallToolResult, 1)
	start := time.Now()
	go func() { second <- s.CallTool(context.Background(), "work", args(7), 3*time.Second) }()
	// The fake extension never answers the first: its own deadline ends it.
	r1 := <-first
	if got := code(r1); got != "timeout" {
		t.Fatalf("first: %s, want timeout", got)
	}
	waitFor(t, "the second call sent once the first timed out", func() bool { return f.startedN() == 2 })
	f.gate <- struct{}{}
	r2 := <-second
	if got := code(r2); got != "ok" {
		t.Fatalf("second: %s (%v), want ok", got, toolerr.FromResult(r2))
	}
	f.mu.Lock()
	budget := f.left[1]
	f.mu.Unlock()
	// It was sent its own deadline, what was left of it after its wait, not a fresh one.
	if waited := time.Since(start); budget > 3*time.Second-200*time.Millisecond || budget < time.Second || waited > 3*time.Second {
		t.Fatalf("second: budget %s after a wait; took %s", budget, waited)
	}
	if f.startedN() != 2 {
		t.Fatalf("started %v", f.started)
	}
}

// A queued call whose own deadline runs out before the tab is free fails
// with busy, was never sent, and says why; the call in front runs on.
func TestQueuedCallBusyAtItsOwnDeadline(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{})
	s := b.NewSession("s", KindStdio)
	first := make(chan *mcp.CallToolResult, 1)
	go func() { first <- s.CallTool(context.Background(), "work", args(3), 10*time.Second) }()
	waitFor(t, "the first call running", func() bool { return f.startedN() == 1 })
	start := time.Now()
	r := s.CallTool(context.Background(), "work", args(3), 1500*time.Millisecond)
	took := time.Since(start)
	e := toolerr.FromResult(r)
	if e == nil || e.Code != toolerr.Busy || !strings.Contains(e.Message, "nothing was sent") {
		t.Fatalf("second: %v, want busy", e)
	}
	// Its deadline less the second kept for an answer: not 30 s, not the first's 10 s.
	if took < 400*time.Millisecond || took > 1500*time.Millisecond {
		t.Fatalf("busy after %s", took)
	}
	if f.startedN() != 1 {
		t.Fatalf("the busy call reached the extension: %v", f.started)
	}
	f.gate <- struct{}{}
	if got := code(<-first); got != "ok" {
		t.Fatalf("first: %s", got)
	}
}
