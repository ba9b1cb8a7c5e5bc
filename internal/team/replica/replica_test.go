package replica

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/toolerr"
)

// An agent on replica B reaches its user's browser homed on replica A;
// another user's token naming that browser gets the refusal a missing
// browser gets (SECURITY I-93); the call's audit record is in the store
// (SECURITY I-95). Drain closes the browser's link with 1012 (SECURITY I-96),
// naming the gateway's public browser address for the person.
func TestCallCrossesReplicasAndUsersStayApart(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	c.public = "https://torii.example.com"
	a, b := c.start("a"), c.start("b")
	u, v := c.user(a, "ursula"), c.user(b, "victor")
	dev, link, _ := c.browser(ctx, a, u, "laptop")

	res, err := agent(ctx, t, b, u.secret, "").CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(textOf(res), `laptop:{"x":1}`) {
		t.Fatalf("U's call via B: %+v %q", res, textOf(res))
	}
	// The named browser, by ID, for its own user.
	res, err = agent(ctx, t, b, u.secret, "?browser="+dev.ID).CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if err != nil || res.IsError {
		t.Fatalf("U naming its browser: %v %q", err, textOf(res))
	}

	refusal := func(secret, browser string) (toolerr.Code, string) {
		t.Helper()
		res, err := agent(ctx, t, b, secret, "?browser="+browser).CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		e := toolerr.FromResult(res)
		if !res.IsError || e == nil {
			t.Fatalf("want a refusal, got %q", textOf(res))
		}
		return e.Code, strings.ReplaceAll(textOf(res), browser, "NAME")
	}
	otherCode, otherText := refusal(v.secret, dev.ID)
	missCode, missText := refusal(v.secret, "0123456789abcdef0123456789abcdef")
	if otherCode != missCode || otherText != missText {
		t.Fatalf("another user's browser is told apart from a missing one:\n%s %q\n%s %q", otherCode, otherText, missCode, missText)
	}
	// V without a browser named: none of V's is connected, U's is not used.
	res, _ = agent(ctx, t, b, v.secret, "").CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if !res.IsError || strings.Contains(textOf(res), "laptop") {
		t.Fatalf("V reached U's browser: %q", textOf(res))
	}

	var page struct {
		Records []struct {
			Tool, UserID, DeviceID, Replica string
		}
	}
	if code := b.api(t, "GET", "/admin/audit?user="+u.userID, c.secret, nil, &page); code != http.StatusOK {
		t.Fatalf("audit: HTTP %d", code)
	}
	if len(page.Records) < 2 || page.Records[0].DeviceID != dev.ID || page.Records[0].Replica != "a" {
		t.Fatalf("audit records: %+v", page.Records)
	}

	a.stop()
	code, err := link.WaitClosed(ctx)
	if err != nil || code != websocket.StatusServiceRestart {
		t.Fatalf("drain closed the link with %d (%v), want 1012", code, err)
	}
	if got, want := link.CloseReason(), "service restart: reconnect to wss://torii.example.com/acp"; got != want {
		t.Fatalf("drain's close reason %q, want %q", got, want)
	}
}

// /readyz is false while Postgres is down and true again after it returns.
func TestReadyzFollowsTheStore(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a")
	ready := func() (int, Health) {
		resp, err := http.Get(a.base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h Health
		_ = json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h
	}
	if code, h := ready(); code != http.StatusOK || !h.OK {
		t.Fatalf("readyz at start: %d %+v", code, h)
	}
	c.pg.Stop()
	if code, h := ready(); code != http.StatusServiceUnavailable || h.Store == "ok" || h.Bus != "ok" {
		t.Fatalf("readyz with Postgres stopped: %d %+v", code, h)
	}
	if resp, err := http.Get(a.base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz with Postgres stopped: %v %v", resp, err)
	}
	c.pg.Start(t)
	// The pool reconnects on the next request: each probe is one, as a
	// kubelet's would be.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, h := ready()
		if code == http.StatusOK && h.OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz after Postgres restarted: %d %+v", code, h)
		}
		<-time.After(100 * time.Millisecond) // a probe's period, not a wait for state
	}
}

// A device revoked through replica B has its link on replica A closed with
// 1008, and its user's calls then get the refusal of a missing browser.
func TestDeviceRevokedOnAnotherReplicaClosesItsLink(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	u := c.user(a, "ursula")
	dev, link, _ := c.browser(ctx, a, u, "laptop")
	if code := b.api(t, "DELETE", "/admin/devices/"+dev.ID, c.secret, nil, nil); code/100 != 2 {
		t.Fatalf("revoke: HTTP %d", code)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	code, err := link.WaitClosed(wctx)
	if err != nil || code != websocket.StatusPolicyViolation {
		t.Fatalf("revoked device's link closed with %d (%v), want 1008 within 2 s", code, err)
	}
	res, err := agent(ctx, t, b, u.secret, "?browser="+dev.ID).CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if err != nil {
		t.Fatal(err)
	}
	if e := toolerr.FromResult(res); e == nil || e.Code != toolerr.ExtensionNotConnected {
		t.Fatalf("call to a revoked browser: %q", textOf(res))
	}
}

// A token revoked on replica B cancels its call running in the browser
// homed on replica A within 2 s.
func TestTokenRevokedCancelsItsCallOnTheHome(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	u := c.user(a, "ursula")
	_, _, p := c.browser(ctx, a, u, "laptop")
	s := agent(ctx, t, b, u.secret, "")
	revokeMidCall(ctx, t, c, b, s, p, u)
	// The next request with the revoked token is refused outright.
	cl := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, nil)
	if _, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.base + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{u.secret}}, DisableStandaloneSSE: true}, nil); err == nil {
		t.Fatal("a revoked token connected")
	}
}

// SIGTERM drains: readyz false and new agent requests refused at once; a
// call in flight is given the grace, then answered with a typed error; the
// browser is told 1012 to reconnect elsewhere.
func TestDrainRefusesNewWorkThenRestartsLinks(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a := c.start("a")
	u := c.user(a, "ursula")
	_, link, p := c.browser(ctx, a, u, "laptop")
	s := agent(ctx, t, a, u.secret, "")
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		done <- res
	}()
	if _, err := p.WaitForCall("slow", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	stopped := make(chan struct{})
	go func() { a.stop(); close(stopped) }()
	for {
		resp, err := http.Get(a.base + "/readyz")
		if err != nil {
			t.Fatalf("readyz during the drain: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			break
		}
		<-time.After(20 * time.Millisecond) // a probe's period
	}
	req, _ := http.NewRequest("POST", a.base+"/mcp", strings.NewReader(`{}`))
	req.Header.Set("Authorization", "Bearer "+u.secret)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a new /mcp request during the drain: %v %v", resp, err)
	}
	res := <-done
	if e := toolerr.FromResult(res); res == nil || e == nil || !strings.Contains(textOf(res), "may have") {
		t.Fatalf("the in-flight call after the grace: %+v", res)
	}
	if code, err := link.WaitClosed(ctx); err != nil || code != websocket.StatusServiceRestart {
		t.Fatalf("link closed with %d (%v), want 1012", code, err)
	}
	<-stopped
}

// A browser's pairing on replica A is approved with its code through
// replica B (the decision reaches A over the bus); the same code replayed
// is refused.
func TestPairingCodeApprovedOnAnotherReplica(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	u := c.user(a, "ursula")
	d, err := linktest.NewDevice("desk")
	if err != nil {
		t.Fatal(err)
	}
	cl, err := linktest.Dial(ctx, a.ws(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.SayHello(ctx, ""); err != nil {
		t.Fatal(err)
	}
	rid := "6f1c1b9e-8a53-4d0e-9a57-3e7c5a2f4b10"
	codes := make(chan string, 1)
	paired := make(chan error, 1)
	go func() {
		paired <- cl.Pair(ctx, d, linktest.PairOptions{RequestID: rid, OnCode: func(code string) { codes <- code }})
	}()
	code := <-codes
	id := ""
	approve := func() int {
		// The request is in the store once A has it; B lists it.
		for {
			var pend struct {
				Pairings []struct{ RequestID, Code string }
			}
			b.api(t, "GET", "/admin/pairings", c.secret, nil, &pend)
			for _, p := range pend.Pairings {
				if p.Code == code {
					id = p.RequestID
					return b.api(t, "POST", "/admin/pairings/"+id+"/approve", c.secret, map[string]any{"user": u.userID, "code": code}, nil)
				}
			}
			select {
			case err := <-paired:
				t.Fatalf("pairing ended before its approval: %v", err)
			case <-ctx.Done():
				t.Fatal("the pairing request never reached the store")
			case <-time.After(20 * time.Millisecond): // a retry of a listing, not a wait for state
			}
		}
	}
	if got := approve(); got/100 != 2 {
		t.Fatalf("approve: HTTP %d", got)
	}
	if err := <-paired; err != nil || d.ID == "" {
		t.Fatalf("pairing on A after approval on B: %v", err)
	}
	if _, err := cl.Auth(ctx, d); err != nil {
		t.Fatalf("auth after pairing: %v", err)
	}
	replay := b.api(t, "POST", "/admin/pairings/"+id+"/approve", c.secret, map[string]any{"user": u.userID, "code": code}, nil)
	if replay/100 == 2 {
		t.Fatalf("a replayed approval succeeded: HTTP %d", replay)
	}
}
