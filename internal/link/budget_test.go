package link_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

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
	started chan struct{} // one value per "block" call entering its handler
}

func (b *blocker) Handle(ctx context.Context, c *link.Conn, method string, _ json.RawMessage) (any, error) {
	if method != "block" {
		return map[string]bool{"ok": true}, nil
	}
	b.mu.Lock()
	b.running[c.ID()]++
	b.peak[c.ID()] = max(b.peak[c.ID()], b.running[c.ID()])
	b.mu.Unlock()
	b.started <- struct{}{}
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

func (b *blocker) peakOf() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	peak := 0
	for _, v := range b.peak {
		peak = max(peak, v)
	}
	return peak
}

// SECURITY I-34: a connection has at most 16 requests
// in its handlers at once; past that its read loop stops reading, so the
// peer is pushed back and the retained request bytes stay under 16 × 1 MiB
// (plus one 8 MiB frame being read). The budget is per connection: another
// connection is served meanwhile.
func TestPerConnectionInFlightBudget(t *testing.T) {
	t.Parallel()
	b, _, dial := budgetServer(t)
	c := ctx(t)
	a, other := dial("tok-a", nil), dial("tok-b", nil)

	// All 24 requests are written before the handlers are waited on, so a
	// reader that ignored the budget would find the 17th at hand.
	const sent = 24
	for i := 1; i <= sent; i++ {
		if err := a.SendRaw(c, []byte(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"block","params":{}}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 16; i++ {
		<-b.started
	}
	// The other connection is not starved by the first one's budget; its
	// round trip also gives a reader that ignored the budget the time to
	// start a 17th.
	if err := other.Call(c, "quick", map[string]any{}, nil); err != nil {
		t.Fatalf("the other connection was blocked: %v", err)
	}
	if peak := b.peakOf(); peak != 16 {
		t.Fatalf("peak in-flight on one connection = %d, want 16", peak)
	}
	close(b.release)
	for answered := 0; answered < sent; answered++ {
		if m, err := a.Next(c); err != nil || m.Error != nil {
			t.Fatalf("answered %d of %d once released: %+v %v", answered, sent, m, err)
		}
	}
	if peak := b.peakOf(); peak != 16 {
		t.Fatalf("peak in-flight on one connection = %d, want 16", peak)
	}
}

func budgetServer(t *testing.T) (*blocker, *link.Server, func(string, func(context.Context, string, json.RawMessage) (any, error)) *linktest.Client) {

	dir := t.TempDir()
	id, devs := linktest.Stores(t, dir)
	b := &blocker{running: map[string]int{}, peak: map[string]int{}, release: make(chan struct{}), started: make(chan struct{}, 64)}
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
	t.Parallel()
	_, srv, dial := budgetServer(t)
	c := ctx(t)
	seen := make(chan string, 2*link.MaxPending) // each method the peer is asked
	silent := func(ctx context.Context, method string, _ json.RawMessage) (any, error) {
		seen <- method
		<-ctx.Done() // never answers
		return nil, ctx.Err()
	}
	dial("tok-a", silent)
	dial("tok-b", func(context.Context, string, json.RawMessage) (any, error) { return map[string]bool{"ok": true}, nil })
	var conns = map[string]*link.Conn{}
	waitHub(t, srv.Hub(), "both token connections", func() bool {
		for _, ci := range srv.Hub().Connections() {
			conns[ci.TokenID] = srv.Hub().Get(ci.ID)
		}
		return conns["a"] != nil && conns["b"] != nil
	})
	a, other := conns["a"], conns["b"]
	cctx, cancel := context.WithCancel(c)
	var wg sync.WaitGroup
	for i := 0; i < link.MaxPending; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); _ = a.Call(cctx, "wait", map[string]any{}, nil) }()
	}
	for range link.MaxPending {
		<-seen
	}
	if err := a.Call(c, "one-more", map[string]any{}, nil); !errors.Is(err, link.ErrBusy) {
		t.Fatalf("call past the budget: %v, want ErrBusy", err)
	}
	if err := other.Call(c, "ping", map[string]any{}, nil); err != nil {
		t.Fatalf("another connection's budget was affected: %v", err)
	}
	cancel()
	wg.Wait()
	// Freed budget is usable again. Frames on one connection arrive in
	// order, so a refused call that had been sent anyway would reach the
	// peer before this one.
	short, cancel2 := context.WithCancel(c)
	defer cancel2()
	again := make(chan error, 1)
	go func() { again <- a.Call(short, "again", map[string]any{}, nil) }()
	for m := <-seen; m != "again"; m = <-seen {
		if m == "one-more" {
			t.Fatal("the peer was asked the refused call: it must not be sent")
		}
	}
	cancel2()
	if err := <-again; errors.Is(err, link.ErrBusy) {
		t.Fatal("the budget was not released")
	}
}
