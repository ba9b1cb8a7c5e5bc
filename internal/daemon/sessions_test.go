package daemon_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/mcpserver"
)

// waitDone waits for an MCP client session to end (its stream closed by
// the daemon) and fails after d.
func waitDone(t *testing.T, s *mcp.ClientSession, d time.Duration, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { s.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: the session is still open after %s", what, d)
	}
}

func status(t *testing.T, d *daemontest.Daemon) daemon.StatusResult {
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	return st
}

// A revoked token's /mcp sessions end at once: calls in flight are
// cancelled in the extension, 100 queued calls fail, the streams close.
func TestRevokedTokenEndsItsSessionsAndCalls(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	p, slow := observedProvider()
	d.Extension(t, ctx, p, genA())
	d.WaitTools(t, 5)
	var tok daemon.TokensCreateResult
	d.Call(t, "tokens.create", map[string]string{"label": "revoked"}, &tok)
	const sessions, perSession = 7, 15 // 105 calls: 7 in flight, the rest queued
	var all []*mcp.ClientSession
	for i := 0; i < sessions; i++ {
		s, err := d.MCP(t, ctx, tok.Token, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, s)
	}
	var wg sync.WaitGroup
	returned := make(chan time.Time, sessions*perSession)
	for _, s := range all {
		for j := 0; j < perSession; j++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
				returned <- time.Now()
			}()
		}
	}
	// Wait for the calls to be running and queued. The broker's queue
	// offers no event, so its length is polled, bounded.
	for range sessions {
		slow.wait(t, slow.started, "a session's call in the extension")
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := status(t, d)
		if p.Inflight() == sessions && st.Broker.Queued >= sessions*(perSession-1)-5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("calls never queued: inflight %d, broker %+v", p.Inflight(), st.Broker)
		}
		time.Sleep(10 * time.Millisecond) // the broker queue offers no event: polled, bounded
	}
	revoked := time.Now()
	d.Call(t, "tokens.revoke", map[string]string{"id": tok.ID}, nil)
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatalf("%d calls still running 5 s after the revocation", sessions*perSession-len(returned))
	}
	var last time.Time
	for len(returned) > 0 {
		last = <-returned
	}
	t.Logf("every call returned %s after the revocation", last.Sub(revoked).Round(time.Millisecond))
	for i, s := range all {
		waitDone(t, s, 5*time.Second, fmt.Sprintf("session %d", i))
	}
	// The extension was told to cancel the calls it was running.
	for range sessions {
		slow.wait(t, slow.ended, "a running call cancelled in the extension")
	}
	if st := status(t, d); st.MCPSessions != 0 || st.Broker.Queued != 0 {
		t.Fatalf("after the revocation: %d /mcp sessions, broker %+v", st.MCPSessions, st.Broker)
	}
}

// An idle /mcp session expires, its standalone stream included.
func TestIdleMCPSessionExpires(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, func(o *daemon.Options) { daemon.SetSessionLimits(o, 300*time.Millisecond, 0, 0) })
	ctx := tctx(t)
	tok := d.Token(t, "idle")
	s, err := d.MCP(t, ctx, tok, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	waitDone(t, s, 5*time.Second, "idle session")
	if st := status(t, d); st.MCPSessions != 0 {
		t.Fatalf("%d /mcp sessions left", st.MCPSessions)
	}
}

// A token's sessions are capped: opening one more ends its least recently
// used, so a client that never closes its sessions cannot grow the daemon.
func TestMCPSessionsPerTokenCapped(t *testing.T) {
	t.Parallel()
	const perToken = 3
	d := daemontest.Start(t, func(o *daemon.Options) { daemon.SetSessionLimits(o, 0, perToken, 0) })
	ctx := tctx(t)
	tok := d.Token(t, "leaky")
	var all []*mcp.ClientSession
	for i := 0; i < perToken+2; i++ {
		s, err := d.MCP(t, ctx, tok, nil, nil)
		if err != nil {
			t.Fatalf("session %d: %v", i, err)
		}
		all = append(all, s)
	}
	// Two ended, never the newest. Which two depends on when each client's standalone stream first
	// reached the daemon (a request, so a use). An ended session fails a request; its client
	// notices by itself only through that stream, which on a loaded machine may not be open yet.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var gone []int
		for i, s := range all {
			if _, err := s.ListTools(ctx, nil); err != nil {
				gone = append(gone, i)
			}
		}
		if len(gone) == 2 && gone[1] < perToken+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sessions ended: %v; want two, not the newest", gone)
		}
	}
	if st := status(t, d); st.MCPSessions != perToken {
		t.Fatalf("%d /mcp sessions, want %d", st.MCPSessions, perToken)
	}
}

// 1,000 event-stream requests from one token: at most the token's request
// budget is held open, every other one is answered at once (409 or 503),
// and the daemon keeps serving.
func TestThousandEventStreams(t *testing.T) {
	t.Parallel()
	const requests = 32
	d := daemontest.Start(t, func(o *daemon.Options) { daemon.SetSessionLimits(o, 0, 0, requests) })
	ctx := tctx(t)
	tok := d.Token(t, "streams")
	s, err := d.MCP(t, ctx, tok, nil, &mcp.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sid := s.ID()
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	// The streams share this client's connections, fewer than the listener holds (SECURITY I-49):
	// past that budget the daemon closes connections unanswered by design, which another test covers.
	hc := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 128}}
	defer hc.CloseIdleConnections()
	for i := 0; i < 1000; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequestWithContext(cctx, "GET", d.MCPURL, nil)
			req.Header.Set("Authorization", "Bearer "+tok)
			req.Header.Set("Accept", "text/event-stream")
			req.Header.Set("Mcp-Session-Id", sid)
			resp, err := hc.Do(req)
			code := -1
			if err == nil {
				code = resp.StatusCode
				resp.Body.Close()
			}
			mu.Lock()
			codes[code]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[http.StatusOK] > 0 {
		t.Fatalf("a second stream on one session was accepted: %v", codes)
	}
	if codes[-1] > 0 {
		t.Fatalf("%d requests failed without an answer: %v", codes[-1], codes)
	}
	if !strings.Contains(fmt.Sprint(codes), "409") && !strings.Contains(fmt.Sprint(codes), "503") {
		t.Fatalf("answers: %v", codes)
	}
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatalf("the session's own requests after the flood: %v", err)
	}
}

// SECURITY I-23: `torii exec` (a shared hello) calls in its label's cli
// session, one for every exec process of that label; a `torii mcp`
// connection of the same label keeps a session of its own.
func TestExecSharesItsLabelsSessionOnly(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	d.Extension(t, ctx, fakeProvider(), genA())
	d.WaitTools(t, 5)
	agent := d.Relay(t, ctx, mcpserver.RelayHelloParams{SessionLabel: "work"})
	if r, err := agent.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil || r.IsError {
		t.Fatalf("agent echo: %v %+v", err, r)
	}
	for i := 0; i < 2; i++ {
		if r := d.Exec(t, "work", "echo", nil); r.IsError {
			t.Fatalf("exec echo: %+v", r)
		}
	}
	kinds := map[string]int{}
	for _, s := range status(t, d).Sessions {
		if s.Label == "work" {
			kinds[string(s.Kind)] += s.Calls
		}
	}
	if kinds["stdio"] != 1 || kinds["cli"] != 2 || len(kinds) != 2 {
		t.Fatalf("calls per session kind of label work: %v", kinds)
	}
}

// Shared cli sessions are keyed by a label the caller picks: their number
// is capped and an idle one ends, so new labels cannot grow the daemon or
// `status` without bound.
func TestLabelSessionsAreBounded(t *testing.T) {
	t.Parallel()
	const maxLabels = 8
	d := daemontest.Start(t, func(o *daemon.Options) { daemon.SetLabelLimits(o, 400*time.Millisecond, maxLabels) })
	live := func() int {
		n := 0
		for _, s := range status(t, d).Sessions {
			if s.Kind == "cli" && s.Ended == nil {
				n++
			}
		}
		return n
	}
	for i := 0; i < 100; i++ {
		d.Exec(t, fmt.Sprintf("label-%d-%s", i, strings.Repeat("x", 200)), "echo", nil)
	}
	st := status(t, d)
	if n := live(); n > maxLabels {
		t.Fatalf("%d live cli sessions, cap %d", n, maxLabels)
	}
	if len(st.Sessions) > maxLabels+16 {
		t.Fatalf("status lists %d sessions", len(st.Sessions))
	}
	for _, s := range st.Sessions {
		if len([]rune(s.Label)) > 64 {
			t.Fatalf("label of %d characters kept", len([]rune(s.Label)))
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for live() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d idle cli sessions never ended", live())
		}
		time.Sleep(50 * time.Millisecond) // status offers no event: polled, bounded
	}
}
