package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/link/linktest"
)

// pairRequest opens a fake extension on the real link and sends torii/pair;
// it returns the code the extension computed and a channel with Pair's result.
func pairRequest(t *testing.T, addr string) (*linktest.Device, string, <-chan error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	c, err := linktest.Dial(ctx, "ws://"+addr+"/acp", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.SayHello(ctx, ""); err != nil {
		t.Fatal(err)
	}
	d, err := linktest.NewDevice("Test Chrome")
	if err != nil {
		t.Fatal(err)
	}
	codes := make(chan string, 1)
	done := make(chan error, 1)
	go func() { done <- c.Pair(ctx, d, linktest.PairOptions{OnCode: func(code string) { codes <- code }}) }()
	code := <-codes
	// Wait until the daemon lists it, so the CLI sees it.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		var p pendingResult
		c2, _, err := dial(ctx)
		if err == nil {
			err = c2.Call(ctx, "pair.pending", nil, &p)
			c2.Close()
		}
		if err == nil && len(p.Requests) > 0 {
			break
		}
		time.Sleep(50 * time.Millisecond) // the control socket offers no event for a new request
	}
	return d, code, done
}

func TestPairApproveByCodeThenRevoke(t *testing.T) {
	e := newEnv(t)
	t.Setenv("TORII_STATE_DIR", e.state) // for the in-test dial in pairRequest
	t.Setenv("TORII_CONFIG_DIR", e.config)
	_, addr := e.serve()
	d, code, done := pairRequest(t, addr)

	r := e.run("", "pair", "list", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, code) || !strings.Contains(r.stdout, "Test Chrome") {
		t.Fatalf("pair list: %d %q", r.code, r.stdout)
	}
	if r := e.run("", "pair", "approve", "000000"); r.code != 1 || !strings.Contains(r.stderr, "no pending pairing request matches") || !strings.Contains(r.stderr, formatCode(code)) {
		t.Fatalf("wrong code: %d %q", r.code, r.stderr)
	}
	// The code as the popup shows it, "123 456", split over two arguments.
	r = e.run("", "pair", "approve", code[:3], code[3:])
	if r.code != 0 || !strings.Contains(r.stdout, "Paired") {
		t.Fatalf("approve: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if err := <-done; err != nil {
		t.Fatalf("extension side: %v", err)
	}
	r = e.run("", "devices", "--json")
	var dl devicesResult
	if err := json.Unmarshal([]byte(r.stdout), &dl); err != nil || len(dl.Devices) != 1 || dl.Devices[0].DeviceID != d.ID {
		t.Fatalf("devices: %q (%v)", r.stdout, err)
	}
	if r := e.run("", "devices", "revoke", d.ID); r.code != 0 {
		t.Fatalf("revoke: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "devices", "revoke", d.ID); r.code != 1 || !strings.Contains(r.stderr, "no device") {
		t.Fatalf("revoke twice: %d %q", r.code, r.stderr)
	}
}

func TestPairInteractive(t *testing.T) {
	for _, c := range []struct {
		answer  string
		approve bool
	}{{"y\n", true}, {"\n", false}} {
		e := newEnv(t)
		t.Setenv("TORII_STATE_DIR", e.state)
		t.Setenv("TORII_CONFIG_DIR", e.config)
		_, addr := e.serve()
		_, code, done := pairRequest(t, addr)
		r := e.run(c.answer, "pair")
		if r.code != 0 || !strings.Contains(r.stdout, `Device "Test Chrome" (chrome-extension://`) || !strings.Contains(r.stdout, "Code: "+formatCode(code)+"\n") || !strings.Contains(r.stdout, "Approve? [y/N] ") {
			t.Fatalf("pair %q: %d %q %q", c.answer, r.code, r.stdout, r.stderr)
		}
		err := <-done
		if c.approve && err != nil {
			t.Errorf("approved, but extension got %v", err)
		}
		if !c.approve && (err == nil || !strings.Contains(err.Error(), "denied")) {
			t.Errorf("denied, but extension got %v", err)
		}
	}
}

func TestMatchRequest(t *testing.T) {
	t.Parallel()
	reqs := []pendingRequest{{RequestID: "r1", Code: "123456"}, {RequestID: "r2", Code: "654321"}}
	for in, want := range map[string]string{"123456": "r1", "123 456": "r1", " 654 321 ": "r2", "r2": "r2"} {
		got, err := matchRequest(reqs, in)
		if err != nil || got.RequestID != want {
			t.Errorf("%q: got %q, %v; want %q", in, got.RequestID, err, want)
		}
	}
	if _, err := matchRequest(reqs, "111111"); err == nil {
		t.Error("no match must fail")
	}
	dup := append(reqs, pendingRequest{RequestID: "r3", Code: "123456"})
	if _, err := matchRequest(dup, "123456"); err == nil || !strings.Contains(err.Error(), "request id") {
		t.Errorf("ambiguous code: %v", err)
	}
}
