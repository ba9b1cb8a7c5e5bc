package link_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
)

type oneToken struct{ ids map[string]string }

func (o oneToken) Check(tok string) (string, bool) { id, ok := o.ids[tok]; return id, ok }

// blocker holds every "block" call until released and counts how many run
// at once, per connection.
type blocker struct {
	mu      sync.Mutex
	running map[string]int
	peak    map[string]int
	release chan struct{}
}

func (b *blocker) Handle(ctx context.Context, c *link.Conn, method string, _ json.RawMessage) (any, error) {
	if method != "block" {
		return map[string]bool{"ok": true}, nil
	}
	b.mu.Lock()
	b.running[c.ID()]++
	b.peak[c.ID()] = max(b.peak[c.ID()], b.running[c.ID()])
	b.mu.Unlock()
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	b.mu.Lock()
	b.running[c.ID()]--
	b.mu.Unlock()
	return map[string]bool{"ok": true}, nil
}

func (b *blocker) Closed(*link.Conn) {}

func (b *blocker) total() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, v := range b.running {
		n += v
	}
	return n
}

// SECURITY I-34: a connection has at most 16 requests
// in its handlers at once; past that its read loop stops reading, so the
// peer is pushed back and the retained request bytes stay under 16 × 1 MiB
// (plus one 8 MiB frame being read). The budget is per connection: another
// connection is served meanwhile.
func TestPerConnectionInFlightBudget(t *testing.T) {
	b, _, dial := budgetServer(t)
	c := ctx(t)
	a, other := dial("tok-a", nil), dial("tok-b", nil)

	const sent = 24
	var answered atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < sent; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := a.Call(c, "block", map[string]any{}, nil); err == nil {
				answered.Add(1)
			}
		}()
	}
	deadline := time.Now().Add(5 * time.Second)
	for b.total() < 16 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // give a 17th the chance to start, if it could
	b.mu.Lock()
	peak := 0
	for _, v := range b.peak {
		peak = max(peak, v)
	}
	b.mu.Unlock()
	if peak != 16 {
		t.Fatalf("peak in-flight on one connection = %d, want 16", peak)
	}
	// The other connection is not starved by the first one's budget.
	if err := other.Call(c, "quick", map[string]any{}, nil); err != nil {
		t.Fatalf("the other connection was blocked: %v", err)
	}
	close(b.release)
	wg.Wait()
	if answered.Load() != sent {
		t.Fatalf("answered %d of %d once released", answered.Load(), sent)
	}
}

func budgetServer(t *testing.T) (*blocker, *link.Server, func(string, func(context.Context, string, json.RawMessage) (any, error)) *linktest.Client) {

	dir := t.TempDir()
	id, devs := linktest.Stores(t, dir)
	b := &blocker{running: map[string]int{}, peak: map[string]int{}, release: make(chan struct{})}
	srv := link.NewServer(link.Options{Identity: id, Devices: devs, Handler: b, LoopbackBind: true,
		Tokens: oneToken{map[string]string{"tok-a": "a", "tok-b": "b"}}})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Hub().CloseAll(websocket.StatusGoingAway, "test over")
		srv.Hub().Wait()
		hs.Close()
	})
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/acp"
	c := ctx(t)
	dial := func(tok string, h func(context.Context, string, json.RawMessage) (any, error)) *linktest.Client {
		cl, err := linktest.Dial(c, url, &linktest.Options{NoOrigin: true, Header: http.Header{"Authorization": {"Bearer " + tok}}, Handler: h})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cl.Close() })
		return cl
	}
	return b, srv, dial
}

// SECURITY I-34: the daemon's own requests awaiting one peer's answers are
// bounded too (MaxPending); past it Call fails at once with ErrBusy and
// nothing is sent, and the budget is per connection.
func TestPerConnectionPendingBudget(t *testing.T) {
	_, srv, dial := budgetServer(t)
	c := ctx(t)
	var seen atomic.Int32
	silent := func(ctx context.Context, method string, _ json.RawMessage) (any, error) {
		seen.Add(1)
		<-ctx.Done() // never answers
		return nil, ctx.Err()
	}
	dial("tok-a", silent)
	dial("tok-b", func(context.Context, string, json.RawMessage) (any, error) { return map[string]bool{"ok": true}, nil })
	var conns = map[string]*link.Conn{}
	deadline := time.Now().Add(5 * time.Second)
	for len(conns) < 2 && time.Now().Before(deadline) {
		for _, ci := range srv.Hub().Connections() {
			conns[ci.TokenID] = srv.Hub().Get(ci.ID)
		}
		time.Sleep(5 * time.Millisecond)
	}
	a, other := conns["a"], conns["b"]
	if a == nil || other == nil {
		t.Fatalf("connections: %v", conns)
	}
	cctx, cancel := context.WithCancel(c)
	var wg sync.WaitGroup
	for i := 0; i < link.MaxPending; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.Call(cctx, "wait", map[string]any{}, nil) }()
	}
	for seen.Load() < link.MaxPending && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if err := a.Call(c, "one-more", map[string]any{}, nil); !errors.Is(err, link.ErrBusy) {
		t.Fatalf("call past the budget: %v, want ErrBusy", err)
	}
	time.Sleep(50 * time.Millisecond)
	if n := seen.Load(); n != link.MaxPending {
		t.Fatalf("the peer saw %d requests, want %d: the refused one must not be sent", n, link.MaxPending)
	}
	if err := other.Call(c, "ping", map[string]any{}, nil); err != nil {
		t.Fatalf("another connection's budget was affected: %v", err)
	}
	cancel()
	wg.Wait()
	// Freed budget is usable again.
	short, cancel2 := context.WithTimeout(c, 100*time.Millisecond)
	defer cancel2()
	if err := a.Call(short, "again", map[string]any{}, nil); errors.Is(err, link.ErrBusy) {
		t.Fatal("the budget was not released")
	}
}
