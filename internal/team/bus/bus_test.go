package bus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

// newBus connects one replica to srv for the length of the test.
func newBus(t testing.TB, srv *teamtest.Server, replica string, opts ...option) *Bus {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	b, err := connect(ctx, srv.URL, replica, log, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func deviceID(t testing.TB) string {
	t.Helper()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// echo answers with the device and replica that ran the call.
func echo(replica string) Handler {
	return func(_ context.Context, r CallRequest) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: replica + "/" + r.DeviceID + "/" + r.Tool}}}
	}
}

func text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil || len(res.Content) != 1 {
		t.Fatalf("result %+v: want one content", res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content %T: want text", res.Content[0])
	}
	return tc.Text
}

func serve(t testing.TB, b *Bus, id string, h Handler, opts ...ServeOption) func() {
	t.Helper()
	stop, err := b.ServeDevice(id, h, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return stop
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func TestCallReachesTheHomeOnly(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	a, b, c := newBus(t, srv, "a"), newBus(t, srv, "b"), newBus(t, srv, "c")
	dev, other := deviceID(t), deviceID(t)
	var elsewhere atomic.Int32
	serve(t, b, dev, func(ctx context.Context, r CallRequest) *mcp.CallToolResult {
		if r.UserID != "u1" || r.TokenID != "t1" || r.Session != "s" || string(r.Arguments) != `{"x":1}` {
			t.Errorf("request arrived as %+v", r)
		}
		return echo("b")(ctx, r)
	})
	serve(t, c, other, func(context.Context, CallRequest) *mcp.CallToolResult {
		elsewhere.Add(1)
		return &mcp.CallToolResult{}
	})
	for _, from := range []*Bus{a, b, c} {
		res, err := from.Call(ctxFor(t, 5*time.Second), CallRequest{UserID: "u1", TokenID: "t1", Session: "s",
			DeviceID: dev, Tool: "click", Arguments: json.RawMessage(`{"x":1}`)})
		if err != nil {
			t.Fatalf("call from %s: %v", from.replica, err)
		}
		if got := text(t, res); got != "b/"+dev+"/click" {
			t.Fatalf("call from %s ran as %q, want on b", from.replica, got)
		}
	}
	if n := elsewhere.Load(); n != 0 {
		t.Fatalf("another device's handler ran %d times", n)
	}
	if home, ok, err := a.Home(ctxFor(t, 5*time.Second), dev); err != nil || !ok || home != "b" {
		t.Fatalf("Home = %q %v %v, want b", home, ok, err)
	}
}

func TestDevicesOnOneReplicaStayApart(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	caller, home := newBus(t, srv, "caller"), newBus(t, srv, "home")
	devA, devB := deviceID(t), deviceID(t)
	var wrong atomic.Int32
	for _, dev := range []string{devA, devB} {
		serve(t, home, dev, func(ctx context.Context, r CallRequest) *mcp.CallToolResult {
			if r.DeviceID != dev {
				wrong.Add(1)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: dev}}}
		})
	}
	for i := range 20 {
		dev := devA
		if i%2 == 1 {
			dev = devB
		}
		res, err := caller.Call(ctxFor(t, 5*time.Second), CallRequest{DeviceID: dev, Tool: "t"})
		if err != nil {
			t.Fatal(err)
		}
		if got := text(t, res); got != dev {
			t.Fatalf("a call for %s ran on %s's handler", dev, got)
		}
	}
	if wrong.Load() != 0 {
		t.Fatal("a handler received another device's call")
	}
}

func TestCancelReachesTheHandler(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	caller, home := newBus(t, srv, "caller"), newBus(t, srv, "home")
	dev := deviceID(t)
	started, cancelled := make(chan string, 1), make(chan error, 1)
	serve(t, home, dev, func(ctx context.Context, r CallRequest) *mcp.CallToolResult {
		started <- r.CallID
		<-ctx.Done()
		cancelled <- ctx.Err()
		return &mcp.CallToolResult{}
	})
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := caller.Call(ctx, CallRequest{CallID: "call-1", DeviceID: dev, Tool: "t"})
		errc <- err
	}()
	if id := <-started; id != "call-1" {
		t.Fatalf("call id %q", id)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("Call = %v, want context.Canceled", err)
	}
	if err := <-cancelled; !errors.Is(err, context.Canceled) {
		t.Fatalf("handler ctx ended with %v, want Canceled", err)
	}
}

func TestLostHomeIsTypedMayHaveRun(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	caller, home := newBus(t, srv, "caller"), newBus(t, srv, "home")
	dev := deviceID(t)
	started := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	serve(t, home, dev, func(ctx context.Context, r CallRequest) *mcp.CallToolResult {
		close(started)
		<-release
		return &mcp.CallToolResult{}
	})
	errc := make(chan error, 1)
	go func() {
		_, err := caller.Call(ctxFor(t, 30*time.Second), CallRequest{DeviceID: dev, Tool: "t"})
		errc <- err
	}()
	<-started
	killed := time.Now()
	home.nc.Close() // the replica dies: no reply, no release, no goodbye
	err := <-errc
	if !errors.Is(err, ErrHomeLost) {
		t.Fatalf("Call = %v, want ErrHomeLost", err)
	}
	if d := time.Since(killed); d > 2500*time.Millisecond {
		t.Fatalf("ErrHomeLost after %s, want about 1.5 s", d)
	}
	if !strings.Contains(err.Error(), "may have run") {
		t.Fatalf("error %q does not say the call may have run", err)
	}
}

func TestNoHomeIsImmediate(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	caller, home := newBus(t, srv, "caller"), newBus(t, srv, "home")
	dev := deviceID(t)
	begin := time.Now()
	if _, err := caller.Call(ctxFor(t, 10*time.Second), CallRequest{DeviceID: dev, Tool: "t"}); !errors.Is(err, ErrNoHome) {
		t.Fatalf("Call = %v, want ErrNoHome", err)
	}
	// "Immediately": well before a lost home could be declared.
	if d := time.Since(begin); d >= home.t.lostAfter {
		t.Fatalf("ErrNoHome took %s", d)
	}
	stop := serve(t, home, dev, echo("home"))
	if _, err := caller.Call(ctxFor(t, 5*time.Second), CallRequest{DeviceID: dev}); err != nil {
		t.Fatal(err)
	}
	stop()
	if _, err := caller.Call(ctxFor(t, 10*time.Second), CallRequest{DeviceID: dev}); !errors.Is(err, ErrNoHome) {
		t.Fatalf("after stop: Call = %v, want ErrNoHome", err)
	}
	if _, ok, err := caller.Home(ctxFor(t, 5*time.Second), dev); ok || err != nil {
		t.Fatalf("after stop: Home ok=%v err=%v, want released", ok, err)
	}
}

func TestPresenceMovesAndTheOldHomeIsTold(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	a, b, c := newBus(t, srv, "a"), newBus(t, srv, "b"), newBus(t, srv, "c")
	dev := deviceID(t)
	evicted := make(chan string, 1)
	stopA := serve(t, a, dev, echo("a"), OnEvicted(func(id string) { evicted <- id }))
	if res, err := c.Call(ctxFor(t, 5*time.Second), CallRequest{DeviceID: dev}); err != nil || text(t, res) != "a/"+dev+"/" {
		t.Fatalf("before the move: %v %v", res, err)
	}
	serve(t, b, dev, echo("b")) // the browser reconnected to b
	if id := <-evicted; id != dev {
		t.Fatalf("evicted %q, want %q", id, dev)
	}
	if home, ok, err := c.Home(ctxFor(t, 5*time.Second), dev); err != nil || !ok || home != "b" {
		t.Fatalf("Home = %q %v %v, want b", home, ok, err)
	}
	if res, err := c.Call(ctxFor(t, 5*time.Second), CallRequest{DeviceID: dev}); err != nil || text(t, res) != "b/"+dev+"/" {
		t.Fatalf("after the move: %v %v", res, err)
	}
	stopA() // the stale link closes: it must not release b's claim
	online, err := c.Online(ctxFor(t, 5*time.Second), true)
	if err != nil || online[dev] != "b" {
		t.Fatalf("Online = %v %v, want %s on b", online, err, dev)
	}
}

func TestClockSkewKeepsTheFullBudget(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	behind := newBus(t, srv, "behind", withClock(func() time.Time { return time.Now().Add(-5 * time.Minute) }))
	ahead := newBus(t, srv, "ahead", withClock(func() time.Time { return time.Now().Add(5 * time.Minute) }))
	for _, pair := range [][2]*Bus{{behind, ahead}, {ahead, behind}} {
		caller, home := pair[0], pair[1]
		dev := deviceID(t)
		left := make(chan time.Duration, 1)
		serve(t, home, dev, func(ctx context.Context, r CallRequest) *mcp.CallToolResult {
			dl, ok := ctx.Deadline()
			if !ok || ctx.Err() != nil {
				t.Errorf("handler ctx: deadline %v, err %v", ok, ctx.Err())
			}
			left <- time.Until(dl)
			return &mcp.CallToolResult{}
		})
		// The budget from the caller's ctx deadline.
		if _, err := caller.Call(ctxFor(t, 4*time.Second), CallRequest{DeviceID: dev}); err != nil {
			t.Fatal(err)
		}
		if d := <-left; d < 3*time.Second || d > 4*time.Second {
			t.Fatalf("%s→%s: handler had %s of a 4 s budget", caller.replica, home.replica, d)
		}
		// An explicit budget, no ctx deadline.
		if _, err := caller.Call(context.Background(), CallRequest{DeviceID: dev, BudgetMs: 2000}); err != nil {
			t.Fatal(err)
		}
		if d := <-left; d < 1500*time.Millisecond || d > 2*time.Second {
			t.Fatalf("%s→%s: handler had %s of a 2 s budget", caller.replica, home.replica, d)
		}
	}
}

func TestBadDeviceIDsNeverReachASubject(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	b := newBus(t, srv, "a")
	bad := []string{"", "*", ">", "ab.cd", "ab*", "ab>", "a b", "ABCDEF", "0a.>", "torii.dev.*", "ab\ncd", "é0",
		strings.Repeat("a", 65)}
	for _, id := range bad {
		if _, err := b.Call(ctxFor(t, 5*time.Second), CallRequest{DeviceID: id}); !errors.Is(err, ErrBadDeviceID) {
			t.Errorf("Call(%q) = %v, want ErrBadDeviceID", id, err)
		}
		if _, err := b.ServeDevice(id, echo("a")); !errors.Is(err, ErrBadDeviceID) {
			t.Errorf("ServeDevice(%q) = %v, want ErrBadDeviceID", id, err)
		}
		if _, _, err := b.Home(ctxFor(t, 5*time.Second), id); !errors.Is(err, ErrBadDeviceID) {
			t.Errorf("Home(%q) = %v, want ErrBadDeviceID", id, err)
		}
		if _, _, ok := splitDeviceSubject("torii.dev." + id + ".call"); ok {
			t.Errorf("subject with %q accepted", id)
		}
	}
	if err := validDevice(strings.Repeat("0123456789abcdef", 4)); err != nil {
		t.Fatalf("64 hex digits refused: %v", err)
	}
}

func TestEventsReachEveryReplica(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	buses := []*Bus{newBus(t, srv, "a"), newBus(t, srv, "b"), newBus(t, srv, "c")}
	got := make(chan Event, 3)
	for _, b := range buses {
		stop, err := b.Subscribe(func(e Event) { got <- e })
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(stop)
	}
	want := Event{Kind: EventTokenRevoked, ID: "tok_1", UserID: "u1"}
	if err := buses[0].Publish(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	for range buses {
		if e := <-got; e != want {
			t.Fatalf("got %+v, want %+v", e, want)
		}
	}
	if err := buses[0].Publish(context.Background(), Event{Kind: "token.*"}); err == nil {
		t.Fatal("an unknown event kind was published")
	}
}

func TestDrainRefusesNewCallsAndLetsInFlightFinish(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	caller, home := newBus(t, srv, "caller"), newBus(t, srv, "home")
	dev := deviceID(t)
	started, release := make(chan struct{}, 1), make(chan struct{})
	serve(t, home, dev, func(ctx context.Context, r CallRequest) *mcp.CallToolResult {
		started <- struct{}{}
		<-release
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}
	})
	type result struct {
		res *mcp.CallToolResult
		err error
	}
	first := make(chan result, 1)
	go func() {
		res, err := caller.Call(ctxFor(t, 30*time.Second), CallRequest{DeviceID: dev})
		first <- result{res, err}
	}()
	<-started
	home.Drain()
	_, err := caller.Call(ctxFor(t, 10*time.Second), CallRequest{DeviceID: dev})
	if !errors.Is(err, ErrDraining) || !errors.Is(err, ErrNoHome) {
		t.Fatalf("a call while draining = %v, want ErrDraining (an ErrNoHome: nothing ran)", err)
	}
	select {
	case <-home.Drained():
		t.Fatal("drained with a call in flight")
	default:
	}
	close(release)
	if r := <-first; r.err != nil || text(t, r.res) != "done" {
		t.Fatalf("the in-flight call: %v %v", r.res, r.err)
	}
	<-home.Drained()
}

func TestNATSOutageIsTypedAndRecovers(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	restoredA, restoredB := make(chan struct{}, 1), make(chan struct{}, 1)
	signal := func(c chan struct{}) func() {
		return func() {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
	home := newBus(t, srv, "home", withRestored(signal(restoredA)))
	caller := newBus(t, srv, "caller", withRestored(signal(restoredB)))
	dev := deviceID(t)
	serve(t, home, dev, echo("home"))
	if _, err := caller.Call(ctxFor(t, 5*time.Second), CallRequest{DeviceID: dev}); err != nil {
		t.Fatal(err)
	}
	// A subscriber is told when events may have been missed: when the
	// connection drops and when it is back.
	resyncs := make(chan Event, 8)
	stopEvents, err := caller.Subscribe(func(e Event) { resyncs <- e })
	if err != nil {
		t.Fatal(err)
	}
	defer stopEvents()
	resynced := func(when string) {
		t.Helper()
		select {
		case e := <-resyncs:
			if e.Kind != EventResync {
				t.Fatalf("%s: got %+v, want %s", when, e, EventResync)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no %s", when, EventResync)
		}
	}

	downH, downC := home.nc.StatusChanged(nats.RECONNECTING), caller.nc.StatusChanged(nats.RECONNECTING)
	srv.Stop()
	<-downH
	<-downC
	resynced("NATS down")
	for _, b := range []*Bus{home, caller} {
		if err := b.Ready(ctxFor(t, 5*time.Second)); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("%s: Ready = %v with NATS down, want ErrUnavailable", b.replica, err)
		}
	}
	if online, err := caller.Online(ctxFor(t, 5*time.Second), false); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Online with NATS down = %v %v: the watched view answered while events may be missed", online, err)
	}
	ctx := ctxFor(t, 5*time.Second)
	if _, err := caller.Call(ctx, CallRequest{DeviceID: dev}); !errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
		t.Fatalf("Call with NATS down = %v (ctx %v), want ErrUnavailable before the deadline", err, ctx.Err())
	}

	srv.Start(t)
	<-restoredA
	<-restoredB
	resynced("NATS back")
	for _, b := range []*Bus{home, caller} {
		if err := b.Ready(ctxFor(t, 5*time.Second)); err != nil {
			t.Fatalf("%s: Ready after restart: %v", b.replica, err)
		}
	}
	if h, ok, err := caller.Home(ctxFor(t, 5*time.Second), dev); err != nil || !ok || h != "home" {
		t.Fatalf("presence after restart: %q %v %v, want re-claimed by home", h, ok, err)
	}
	res, err := caller.Call(ctxFor(t, 5*time.Second), CallRequest{DeviceID: dev, Tool: "t"})
	if err != nil || text(t, res) != "home/"+dev+"/t" {
		t.Fatalf("call after restart: %v %v", res, err)
	}
}

func TestConnectRefusesAnUnreachableServer(t *testing.T) {
	t.Parallel()
	url := "nats://user:secret@127.0.0.1:" + strconv.Itoa(teamtest.FreePort(t))
	_, err := Connect(ctxFor(t, 5*time.Second), url, "a", nil)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Connect = %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "TORII_TEAM_BUS") {
		t.Fatalf("error %q: must name the setting and hide the password", err)
	}
}
