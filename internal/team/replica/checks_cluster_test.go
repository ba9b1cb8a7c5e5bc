package replica

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/toolerr"
)

// mcpStatus is the HTTP status of one /mcp request with secret.
func mcpStatus(t *testing.T, tr *testReplica, secret string) int {
	t.Helper()
	req, _ := http.NewRequest("POST", tr.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func openStore(t *testing.T, url string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// SECURITY I-93: a token revoked where no replica hears of it (straight in
// the database, no event) is refused once checkMaxAge has passed, however
// busy it was on this replica.
func TestRevokedTokenWithoutAnEventIsRefusedWithinTheBound(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a := c.start("a")
	u := c.user(a, "ursula")
	c.browser(ctx, a, u, "laptop")
	s := agent(ctx, t, a, u.secret, "")
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil {
		t.Fatal(err)
	}
	if err := openStore(t, c.storeURL()).RevokeToken(ctx, u.tokenID); err != nil {
		t.Fatal(err)
	}
	revoked := time.Now()
	for time.Since(revoked) < checkMaxAge {
		mcpStatus(t, a, u.secret) // busy: every request would keep a cached answer warm
		time.Sleep(50 * time.Millisecond)
	}
	if code := mcpStatus(t, a, u.secret); code != http.StatusUnauthorized {
		t.Fatalf("a token revoked %s ago without an event: HTTP %d, want 401", time.Since(revoked), code)
	}
}

// With checks remembered for a minute, only events and a NATS reconnect
// can make a replica see a revocation: a revocation's event acts at once,
// and one made while NATS was down (its event lost) acts once NATS is back.
func TestEventsAndAReconnectDropRememberedChecks(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	long := func(o *Options) { o.checkMaxAge = time.Minute }
	a, b := c.startWith("a", long), c.startWith("b", long)
	u, v := c.user(a, "ursula"), c.user(a, "victor")
	dev, _, _ := c.browser(ctx, a, u, "laptop")
	call := func(secret string) *mcp.CallToolResult {
		t.Helper()
		res, err := agent(ctx, t, a, secret, "?browser="+dev.ID).CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := call(u.secret); res.IsError {
		t.Fatalf("first call: %q", textOf(res))
	}
	mcpStatus(t, a, v.secret)

	// The event, from the other replica.
	if code := b.api(t, "DELETE", "/admin/tokens/"+v.tokenID, c.secret, nil, nil); code/100 != 2 {
		t.Fatalf("revoke: HTTP %d", code)
	}
	// The event reaches a on NATS's time, milliseconds, far inside the minute.
	for code := mcpStatus(t, a, v.secret); code != http.StatusUnauthorized; code = mcpStatus(t, a, v.secret) {
		select {
		case <-time.After(10 * time.Millisecond): // the event's delivery
		case <-ctx.Done():
			t.Fatalf("a token revoked with an event: HTTP %d, want 401", code)
		}
	}

	// No event: revoked in the database while NATS is down.
	c.nats.Stop()
	st := openStore(t, c.storeURL())
	if err := st.RevokeToken(ctx, u.tokenID); err != nil {
		t.Fatal(err)
	}
	if err := st.RevokeDevice(ctx, dev.ID); err != nil {
		t.Fatal(err)
	}
	c.nats.Start(t)
	for { // a's bus is back once it is ready again
		resp, err := http.Get(a.base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("replica a never ready after NATS came back")
		case <-time.After(50 * time.Millisecond): // a probe's period
		}
	}
	if code := mcpStatus(t, a, u.secret); code != http.StatusUnauthorized {
		t.Fatalf("a token revoked while NATS was down, after the reconnect: HTTP %d, want 401", code)
	}
	// The device too: its remembered check was dropped with the rest.
	var tk struct{ Secret string }
	if code := a.api(t, "POST", "/admin/tokens", c.secret, map[string]any{"user": u.userID, "label": "again"}, &tk); code != http.StatusCreated {
		t.Fatalf("new token: HTTP %d", code)
	}
	if e := toolerr.FromResult(call(tk.Secret)); e == nil || e.Code != toolerr.ExtensionNotConnected {
		t.Fatal("a device revoked while NATS was down was still reached after the reconnect")
	}
}

// Without ?browser= a call goes to the user's browser that connected last,
// even one that connected after the replica remembered the user's devices
// (remembered here for a minute, so only seeing the new browser's claim
// can make it ask the store again).
func TestUnnamedCallFindsTheBrowserThatConnectedLast(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a := c.startWith("a", func(o *Options) { o.checkMaxAge = time.Minute })
	b := c.start("b")
	u := c.user(a, "ursula")
	c.browser(ctx, b, u, "first")
	s := agent(ctx, t, a, u.secret, "")
	if res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo"}); err != nil || !strings.HasPrefix(textOf(res), "first:") {
		t.Fatalf("with one browser: %v %q", err, textOf(res))
	}
	c.browser(ctx, b, u, "second")
	deadline := time.Now().Add(2 * time.Second)
	for {
		res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(textOf(res), "second:") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the browser that connected last was not picked: %q", textOf(res))
		}
		time.Sleep(20 * time.Millisecond) // the claim's way to a's watch
	}
}

// A store outage turns a token remembered a moment ago into 503 with
// Retry-After once the replica meets the outage (its next round, within
// half a second), never into 401.
func TestStoreOutageIs503EvenForARememberedToken(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	if os.Getenv("TORII_TEST_SQLITE") != "" {
		t.Skip("the outage is PostgreSQL's")
	}
	a := c.start("a")
	u := c.user(a, "ursula")
	if code := mcpStatus(t, a, u.secret); code != http.StatusOK {
		t.Fatalf("before the outage: HTTP %d", code)
	}
	c.pg.Stop()
	stopped := time.Now()
	defer c.pg.Start(t)
	for {
		req, _ := http.NewRequest("POST", a.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		req.Header.Set("Authorization", "Bearer "+u.secret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		switch resp.StatusCode {
		case http.StatusServiceUnavailable:
			if resp.Header.Get("Retry-After") == "" {
				t.Fatal("503 without Retry-After")
			}
			if d := time.Since(stopped); d > 2*time.Second {
				t.Fatalf("a remembered token passed for %s into the outage", d)
			}
			return
		case http.StatusUnauthorized:
			t.Fatal("a valid token refused as unauthorized while the store is down")
		}
		select {
		case <-ctx.Done():
			t.Fatalf("still HTTP %d with the store down", resp.StatusCode)
		case <-time.After(50 * time.Millisecond): // the replica's next round
		}
	}
}
