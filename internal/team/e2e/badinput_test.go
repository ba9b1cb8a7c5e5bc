package e2e_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link/linktest"
)

// pairReplay pairs a fake device (the real link protocol: P-256 key, the
// 6-digit code, signed challenges) on replica 0, approves its code as u on
// replica 1, and replays the same code on replica 2, as u and as other.
// It returns the paired device's live link for the revocation check.
func pairReplay(t *testing.T, c *cluster, u, other teamUser) (*linktest.Client, *linktest.Device) {
	t.Helper()
	d, err := linktest.NewDevice("fake-" + u.Name)
	if err != nil {
		t.Fatal(err)
	}
	// A person approves within seconds; an approval that never reaches the
	// waiting browser fails here rather than at the pairing's own expiry.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	codes := make(chan string, 1)
	type linked struct {
		c   *linktest.Client
		err error
	}
	done := make(chan linked, 1)
	go func() {
		cl, err := linktest.PairAndConnect(ctx, "ws://"+c.replicas[0].addr+"/acp", d,
			linktest.PairOptions{OnCode: func(code string) { codes <- code }}, nil)
		done <- linked{cl, err}
	}()
	var code string
	select {
	case code = <-codes:
	case l := <-done:
		t.Fatalf("pairing ended before it showed a code: %v", l.err)
	}
	// The person reads the code off the browser and approves it once the
	// request is listed (the admin's view of pending requests).
	deadline := time.Now().Add(20 * time.Second)
	for !pendingCode(t, c, 1, code) {
		if time.Now().After(deadline) {
			t.Fatalf("the pairing request with code %s is not pending on r1 after 20 s", code)
		}
		time.Sleep(50 * time.Millisecond) // the person's next look
	}
	c.mustAPI(1, u.Token, http.MethodPost, "/v1/pair", map[string]any{"code": code}, nil)
	l := <-done
	if l.err != nil {
		t.Fatalf("the approved pairing did not connect: %v", l.err)
	}
	t.Cleanup(func() { _ = l.c.Close() })

	for _, who := range []teamUser{u, other} {
		status, err := c.api(2, who.Token, http.MethodPost, "/v1/pair", map[string]any{"code": code}, nil)
		if err == nil {
			t.Errorf("the code %s, replayed by %s on r2 after its approval on r1, was accepted", code, who.Name)
			continue
		}
		if status < 400 || status >= 500 {
			t.Errorf("the replayed code gave %d, want a 4xx refusal: %v", status, err)
		}
		t.Logf("replay by %s on r2: %v", who.Name, err)
	}
	var raw json.RawMessage
	c.mustAPI(2, other.Token, http.MethodGet, "/v1/devices", nil, &raw)
	for _, dv := range decodeList[struct {
		ID string `json:"deviceId"`
	}](raw, "devices") {
		if dv.ID == d.ID {
			t.Errorf("the replayed code gave %s the device %s", other.Name, d.ID)
		}
	}
	return l.c, d
}

func pendingCode(t *testing.T, c *cluster, i int, code string) bool {
	t.Helper()
	var raw json.RawMessage
	c.mustAPI(i, c.adminToken, http.MethodGet, "/admin/pairings", nil, &raw)
	for _, p := range decodeList[struct {
		Code  string `json:"code"`
		State string `json:"state"`
	}](raw, "pairings") {
		if p.Code == code {
			return true
		}
	}
	return false
}

// revokeDevice revokes a device linked to replica 0 through replica 2 and
// checks its link is closed (1008) within 2 s.
func revokeDevice(t *testing.T, c *cluster, u teamUser, link *linktest.Client, d *linktest.Device) {
	t.Helper()
	start := time.Now()
	c.mustAPI(2, u.Token, http.MethodDelete, "/v1/devices/"+d.ID, nil, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second+time.Since(start))
	defer cancel()
	code, err := link.WaitClosed(ctx)
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		t.Fatalf("the revoked device's link on r0 is still open %s after the revocation on r2", time.Since(start))
	}
	t.Logf("the revoked device's link closed %s after the revocation, code %d", time.Since(start), code)
	if code != websocket.StatusPolicyViolation {
		t.Errorf("the revoked device's link closed with %d, want 1008", code)
	}
	// It cannot come back.
	if cl, err := linktest.Connect(context.Background(), "ws://"+c.replicas[1].addr+"/acp", d, nil); err == nil {
		cl.Close()
		t.Errorf("the revoked device authenticated again on r1")
	}
}

// revokeToken starts a long call with a second token of u on replica i,
// revokes that token through another replica, and checks the call ends
// within 2 s and the token is refused afterwards.
func revokeToken(t *testing.T, c *cluster, web *site, u teamUser, b *browser, i int) {
	t.Helper()
	tok := c.newToken(other(i), u.ID, "short-lived")
	tu := u
	tu.Token, tu.TokenID = tok.secret, tok.id
	ag := connectAgent(t, c, i, tu, "", nil)
	arrived := web.await(func(h hit) bool { return h.path == "/slow" && h.hold == "revoke" && h.agent == b.agent })
	result := make(chan reply, 1)
	go func() {
		result <- ag.call(b.deviceID, "navigate", map[string]any{"url": web.url("/slow?user=" + u.Name + "&hold=revoke"), "newTab": true, "timeoutMs": 30000}, 40*time.Second)
	}()
	select {
	case <-arrived:
	case r := <-result:
		t.Fatalf("navigate to /slow ended before the page was asked for: %s", r.text())
	case <-time.After(30 * time.Second):
		t.Fatal("the browser never asked for /slow")
	}
	defer web.release("revoke")
	start := time.Now()
	c.mustAPI(other(i), c.adminToken, http.MethodDelete, "/admin/tokens/"+tok.id, nil, nil)
	select {
	case r := <-result:
		t.Logf("the revoked token's call ended %s after the revocation: %q %s", time.Since(start), r.code(), firstLine(r.text()))
		if r.ok() {
			t.Errorf("the revoked token's call succeeded")
		}
	case <-time.After(2*time.Second + time.Since(start)):
		t.Errorf("the revoked token's call on r%d still runs %s after the revocation", i, time.Since(start))
	}
	if r := ag.call(b.deviceID, "tabs", map[string]any{}, 10*time.Second); r.ok() {
		t.Errorf("a call with the revoked token succeeded: %s", r.text())
	}
}
