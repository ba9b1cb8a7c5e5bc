package link_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/tokens"
	"github.com/torii-browser/torii/internal/wire"
)

// slowApprover approves every request after a delay, as a person would.
type slowApprover struct {
	devices *pairing.DeviceStore
	delay   time.Duration
}

func (s slowApprover) Pair(ctx context.Context, req link.PairRequest) (string, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	d, err := s.devices.Add(req.DeviceName, req.Origin, req.DeviceKey)
	return d.ID, err
}

func newServer(t *testing.T, authTimeout, pairDelay time.Duration) (*link.Server, string) {
	t.Helper()
	dir := t.TempDir()
	id, devs := linktest.Stores(t, dir)
	opts := link.Options{Identity: id, Devices: devs, Pairer: slowApprover{devs, pairDelay}, LoopbackBind: true}
	link.SetAuthTimeout(&opts, authTimeout)
	srv := link.NewServer(opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Hub().CloseAll(websocket.StatusGoingAway, "test over")
		srv.Hub().Wait()
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http") + "/acp"
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestNoAuthWithinDeadlineCloses1008(t *testing.T) {
	t.Parallel()
	srv, url := newServer(t, 200*time.Millisecond, 0)
	c, err := linktest.Dial(ctx(t), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if n := srv.Hub().Unauthenticated(); n != 1 {
		t.Fatalf("unauthenticated count %d", n)
	}
	start := time.Now()
	// Pings do not extend the deadline.
	for i := 0; i < 3; i++ {
		c.Call(ctx(t), "torii/ping", struct{}{}, nil)
	}
	code, err := c.WaitClosed(ctx(t))
	if err != nil || code != websocket.StatusPolicyViolation {
		t.Fatalf("close %v (%v), want 1008", code, err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("closed after %v", el)
	}
	waitHub(t, srv.Hub(), "the unauthenticated slot's release", func() bool { return srv.Hub().Unauthenticated() == 0 })
}

func TestPairingSuspendsAuthDeadline(t *testing.T) {
	t.Parallel()
	srv, url := newServer(t, 200*time.Millisecond, 600*time.Millisecond)
	d, _ := linktest.NewDevice("slow human")
	// The person takes 3x the auth deadline to approve; the link must survive,
	// then authenticate within a fresh deadline.
	c, err := linktest.PairAndConnect(ctx(t), url, d, linktest.PairOptions{}, nil)
	if err != nil {
		t.Fatalf("pair+auth: %v", err)
	}
	defer c.Close()
	if srv.Hub().Unauthenticated() != 0 || !srv.Hub().ExtensionConnected() {
		t.Fatal("hub does not show the authenticated device")
	}
	// A connection opened now has the same auth deadline, and it starts
	// later than the authenticated link's: once it is closed for missing
	// it, the authenticated link's deadline has passed too. It stays.
	probe, err := linktest.Dial(ctx(t), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if code, err := probe.WaitClosed(ctx(t)); err != nil || code != websocket.StatusPolicyViolation {
		t.Fatalf("probe closed %v (%v), want 1008", code, err)
	}
	var p link.PingResult
	if err := c.Call(ctx(t), "torii/ping", struct{}{}, &p); err != nil {
		t.Fatalf("authenticated link closed: %v", err)
	}
	// With no Handler every other method is unknown after auth.
	if err := c.Call(ctx(t), "initialize", struct{}{}, nil); err == nil || !strings.Contains(err.Error(), "method_not_found") {
		t.Fatalf("no handler: %v", err)
	}
	// Handshake methods after auth are refused but keep the link.
	if err := c.Call(ctx(t), "torii/auth", map[string]string{"deviceId": d.ID, "sig": "x"}, nil); err == nil {
		t.Fatal("second torii/auth accepted")
	} else if e, ok := err.(*wire.Error); !ok || e.Code != wire.CodeInvalidRequest {
		t.Fatalf("second auth: %v", err)
	}
	if n := srv.Hub().CloseDevice(d.ID); n != 1 {
		t.Fatalf("CloseDevice closed %d", n)
	}
	if code, _ := c.WaitClosed(ctx(t)); code != websocket.StatusPolicyViolation {
		t.Fatalf("close %v", code)
	}
}

func TestBinaryFrameIsParseError(t *testing.T) {
	t.Parallel()
	_, url := newServer(t, time.Second, 0)
	c, err := linktest.Dial(ctx(t), url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.WS.Write(ctx(t), websocket.MessageBinary, []byte(`{"jsonrpc":"2.0","id":1,"method":"torii/ping"}`))
	m, err := c.Next(ctx(t))
	if err != nil || m.Error == nil || m.Error.Code != wire.CodeParseError {
		t.Fatalf("binary frame: %+v %v", m, err)
	}
	if err := c.Call(ctx(t), "torii/ping", struct{}{}, nil); err != nil {
		t.Fatal(err)
	}
}

// callback calls back into the client on every request, as the daemon
// will for mcp/connect: it exercises Conn.Call and the linktest Handler.
type callback struct{ closed chan string }

func (cb callback) Handle(ctx context.Context, c *link.Conn, method string, params json.RawMessage) (any, error) {
	var out map[string]any
	if err := c.Call(ctx, "client/echo", map[string]string{"asked": method}, &out); err != nil {
		return nil, err
	}
	return out, nil
}

func (cb callback) Closed(c *link.Conn) { cb.closed <- c.ID() }

func TestDaemonToClientCalls(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ts, _ := tokens.Open(filepath.Join(dir, "tokens.json"))
	_, tok, err := ts.Create("cb")
	if err != nil {
		t.Fatal(err)
	}
	cb := callback{closed: make(chan string, 1)}
	srv := link.NewServer(link.Options{Tokens: ts, Handler: cb, LoopbackBind: true})
	hs := httptest.NewServer(srv)
	defer hs.Close()
	c, err := linktest.Dial(ctx(t), "ws"+strings.TrimPrefix(hs.URL, "http")+"/acp", &linktest.Options{
		NoOrigin: true, Subprotocols: []string{link.BearerSubprotocolPrefix + tok, link.Subprotocol},
		Handler: func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method != "client/echo" {
				return nil, wire.Errorf(wire.CodeMethodNotFound, "no")
			}
			return params, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	if err := c.Call(ctx(t), "anything/here", struct{}{}, &out); err != nil || out["asked"] != "anything/here" {
		t.Fatalf("round trip: %v %v", out, err)
	}
	id := srv.Hub().Connections()[0].ID
	c.Close()
	select {
	case got := <-cb.closed:
		if got != id {
			t.Fatalf("Closed for %s, want %s", got, id)
		}
	case <-time.After(3 * time.Second):
		t.Fatal("Handler.Closed not called")
	}
}

// waitHub waits for cond to hold, checking it at each change of the hub.
func waitHub(t *testing.T, h *link.Hub, what string, cond func() bool) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		changed := h.Changed()
		if cond() {
			return
		}
		select {
		case <-changed:
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
