package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/torii-browser/torii/internal/browserlink"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/toolerr"
)

// fakeServer is an in-process extension tool server: each call blocks
// until released (or cancelled), and records what it saw.
type fakeServer struct {
	ctx    context.Context
	cancel context.CancelFunc

	mu       sync.Mutex
	started  []string // "session:tool:tab" in the order calls reached it
	running  int
	peak     int
	gate     chan struct{} // nil: answer at once; else each call takes one token
	tabs     map[string][]int
	notified []string
	metaSeen []map[string]any
	left     []time.Duration // what each call's deadline left when it was sent
}

func newFake() *fakeServer {
	f := &fakeServer{tabs: map[string][]int{}}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	return f
}

func (f *fakeServer) LinkID() string           { return "fake" }
func (f *fakeServer) Context() context.Context { return f.ctx }
func (f *fakeServer) Close()                   { f.cancel() }
func (f *fakeServer) Tools() []*mcp.Tool {
	return []*mcp.Tool{{Name: "work", InputSchema: map[string]any{"type": "object"}}}
}
func (f *fakeServer) SessionEnded(_ context.Context, params any) error {
	b, _ := json.Marshal(params)
	f.mu.Lock()
	f.notified = append(f.notified, browserlink.MethodSessionEnded+" "+string(b))
	f.mu.Unlock()
	return nil
}

func (f *fakeServer) Call(ctx context.Context, r browserlink.Request) *mcp.CallToolResult {
	name, args, meta := r.Tool, r.Args, r.Meta
	// As the link: the call's deadline ends its wait for the extension.
	ctx, cancel := context.WithDeadline(ctx, r.Deadline)
	defer cancel()
	sess := meta[MetaKey].(map[string]any)
	id := sess["sessionId"].(string)
	tab, _ := tabOf(args)
	f.mu.Lock()
	f.started = append(f.started, fmt.Sprintf("%s:%s:%d", sess["session"], name, tab))
	f.metaSeen = append(f.metaSeen, meta)
	f.left = append(f.left, time.Until(r.Deadline))
	f.running++
	f.peak = max(f.peak, f.running)
	gate := f.gate
	if tab >= 0 {
		f.tabs[id] = []int{tab}
	}
	tabs := f.tabs[id]
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return toolerr.Result(toolerr.Timeout, "%s got no answer within its deadline", name)
			}
			return toolerr.Result(toolerr.Cancelled, "cancelled in the fake extension")
		case <-f.ctx.Done():
			return toolerr.Result(toolerr.ExtensionNotConnected, "fake extension gone")
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s tab %d", id, tab)}},
		Meta: mcp.Meta{MetaKey: map[string]any{"tabs": tabs}}}
}

func (f *fakeServer) startedN() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.started)
}

// waitFor polls cond, bounded. The scheduler's queue offers no event to
// wait on, and one added only for tests would be a hook in production.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func setup(t *testing.T, l config.Broker) (*Broker, *fakeServer) {
	t.Helper()
	b := New(nil)
	b.SetLimits(l)
	f := newFake()
	f.gate = make(chan struct{})
	b.AttachServer(f)
	t.Cleanup(func() { b.Close(); f.cancel() })
	return b, f
}

func args(tab int) json.RawMessage {
	if tab < 0 {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(fmt.Sprintf(`{"tabId":%d}`, tab))
}

func code(r *mcp.CallToolResult) string {
	if e := toolerr.FromResult(r); e != nil {
		return string(e.Code)
	}
	return "ok"
}

// At most MaxInFlight calls reach the extension; the rest are admitted
// first-come first-served as slots free up.
func TestFIFOAdmissionAndInFlightCap(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{MaxInFlight: 2})
	var wg sync.WaitGroup
	sess := make([]*Session, 5)
	for i := range sess {
		sess[i] = b.NewSession(fmt.Sprintf("s%d", i), KindStdio)
		wg.Add(1)
		go func() { defer wg.Done(); sess[i].CallTool(context.Background(), "work", args(100+i), 0) }()
		waitFor(t, "queued", func() bool { st := b.Stats(); return st.InFlight+st.Queued == i+1 })
	}
	if st := b.Stats(); st.InFlight != 2 || st.Queued != 3 {
		t.Fatalf("stats %+v, want 2 in flight, 3 queued", st)
	}
	// One release at a time, each awaited: two calls freed together are
	// admitted in order but may reach the fake in either order.
	for i := 0; i < 5; i++ {
		f.gate <- struct{}{}
		waitFor(t, "the next admission", func() bool { return f.startedN() >= min(5, 3+i) })
	}
	wg.Wait()
	want := []string{"s0:work:100", "s1:work:101", "s2:work:102", "s3:work:103", "s4:work:104"}
	if fmt.Sprint(f.started) != fmt.Sprint(want) {
		t.Fatalf("admission order %v, want %v", f.started, want)
	}
	if f.peak > 2 {
		t.Fatalf("peak in flight %d > 2", f.peak)
	}
}

// One call at a time per tab, even across sessions; a blocked call does
// not hold up a later call for another tab.
func TestPerTabSerialisationNoHeadOfLineBlocking(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{MaxInFlight: 8})
	a, c, d := b.NewSession("a", KindStdio), b.NewSession("c", KindStdio), b.NewSession("d", KindStdio)
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); a.CallTool(context.Background(), "work", args(7), 0) }()
	waitFor(t, "a running", func() bool { return f.startedN() == 1 })
	go func() { defer wg.Done(); c.CallTool(context.Background(), "work", args(7), 0) }()
	waitFor(t, "c queued", func() bool { return b.Stats().Queued == 1 })
	go func() { defer wg.Done(); d.CallTool(context.Background(), "work", args(8), 0) }()
	waitFor(t, "d running past c", func() bool { return f.startedN() == 2 })
	if f.started[1] != "d:work:8" {
		t.Fatalf("second started %q, want d on tab 8", f.started[1])
	}
	if b.Stats().Queued != 1 {
		t.Fatal("c should still wait for tab 7")
	}
	for i := 0; i < 3; i++ {
		f.gate <- struct{}{}
	}
	wg.Wait()
	if f.started[2] != "c:work:7" {
		t.Fatalf("started %v", f.started)
	}
}

// A session's calls run one at a time, in the order they arrived.
func TestSessionOrder(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{MaxInFlight: 8})
	s := b.NewSession("one", KindStdio)
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); s.CallTool(context.Background(), "work", args(i), 0) }()
		waitFor(t, "enqueued", func() bool { st := b.Stats(); return st.InFlight+st.Queued == i+1 })
	}
	if st := b.Stats(); st.InFlight != 1 {
		t.Fatalf("a session ran %d calls at once", st.InFlight)
	}
	for i := 0; i < 6; i++ {
		f.gate <- struct{}{}
	}
	wg.Wait()
	for i, got := range f.started {
		if want := fmt.Sprintf("one:work:%d", i); got != want {
			t.Fatalf("call %d: %s, want %s (all %v)", i, got, want, f.started)
		}
	}
}

// A full session queue refuses at once with busy; a call waiting past the
// budget fails with busy; neither reaches the extension; other sessions
// are unaffected.
func TestBudgetBusyAndFlooding(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{MaxInFlight: 8, MaxQueuedPerSession: 3, QueueBudgetMs: 150})
	flood := b.NewSession("flood", KindStdio)
	var busy, other atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code(flood.CallTool(context.Background(), "work", args(1), 0)) == "busy" {
				busy.Add(1)
			}
		}()
	}
	waitFor(t, "flood running", func() bool { return f.startedN() == 1 })
	waitFor(t, "16 refused at once", func() bool { return busy.Load() >= 16 })
	calm := b.NewSession("calm", KindStdio)
	wg.Add(1)
	go func() {
		defer wg.Done()
		if code(calm.CallTool(context.Background(), "work", args(2), 0)) == "ok" {
			other.Add(1)
		}
	}()
	waitFor(t, "calm running beside the flood", func() bool { return f.startedN() == 2 })
	f.gate <- struct{}{} // one of the two finishes
	f.gate <- struct{}{}
	// The flood's queued calls either start (behind the finished ones) or
	// pass their budget and come back busy.
	waitFor(t, "every flood call refused or started", func() bool { return int(busy.Load())+f.startedN()-1 == 20 })
	close(f.gate)
	wg.Wait()
	if busy.Load() != 19-int32(f.startedN()-2) || other.Load() != 1 {
		t.Fatalf("busy %d, calm ok %d, started %v", busy.Load(), other.Load(), f.started)
	}
	for _, r := range flood.Info().Recent {
		if r.Outcome == "busy" && r.WaitMs > 1000 {
			t.Fatalf("a busy call waited %dms", r.WaitMs)
		}
	}
}

// Cancelling a caller's context removes its queued call (never sent) and
// aborts its in-flight call; closing a session does both for all its calls.
func TestCancellationQueuedAndInFlight(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{MaxInFlight: 8})
	s := b.NewSession("s", KindStdio)
	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	r1, r2 := make(chan string, 1), make(chan string, 1)
	go func() { r1 <- code(s.CallTool(ctx1, "work", args(1), 0)) }()
	waitFor(t, "running", func() bool { return f.startedN() == 1 })
	go func() { r2 <- code(s.CallTool(ctx2, "work", args(1), 0)) }()
	waitFor(t, "queued", func() bool { return b.Stats().Queued == 1 })
	cancel2()
	if got := <-r2; got != "cancelled" {
		t.Fatalf("queued call: %s", got)
	}
	cancel1()
	if got := <-r1; got != "cancelled" {
		t.Fatalf("in-flight call: %s", got)
	}
	if f.startedN() != 1 {
		t.Fatal("the cancelled queued call reached the extension")
	}

	// Session end: one in flight, two queued, all cancelled promptly.
	s2 := b.NewSession("s2", KindStdio)
	res := make(chan string, 3)
	for i := 0; i < 3; i++ {
		go func() { res <- code(s2.CallTool(context.Background(), "work", args(5), 0)) }()
	}
	waitFor(t, "one running two queued", func() bool { st := b.Stats(); return st.InFlight == 1 && st.Queued == 2 })
	s2.Close()
	for i := 0; i < 3; i++ {
		select {
		case got := <-res:
			if got != "cancelled" {
				t.Fatalf("after session end: %s", got)
			}
		case <-time.After(2 * time.Second):
			t.Fatal("a call of an ended session hangs")
		}
	}
	waitFor(t, "session_ended sent", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.notified) == 1
	})
	if st := b.Stats(); st.InFlight != 0 || st.Queued != 0 {
		t.Fatalf("stats after: %+v", st)
	}
}

// Shutdown fails every pending call with daemon_restarted, an extension
// disconnect with extension_not_connected, promptly.
func TestShutdownAndDisconnect(t *testing.T) {
	t.Parallel()
	for _, how := range []string{"disconnect", "shutdown"} {
		t.Run(how, func(t *testing.T) {
			b, f := setup(t, config.Broker{MaxInFlight: 1})
			res := make(chan string, 4)
			for i := 0; i < 4; i++ {
				s := b.NewSession(fmt.Sprint(i), KindStdio)
				go func() { res <- code(s.CallTool(context.Background(), "work", args(i), 0)) }()
			}
			waitFor(t, "1 running 3 queued", func() bool { st := b.Stats(); return st.InFlight == 1 && st.Queued == 3 })
			if how == "disconnect" {
				f.cancel() // the link ends: the bridge fails its in-flight call; the broker the rest
			} else {
				b.Close()
			}
			for i := 0; i < 4; i++ {
				select {
				case got := <-res:
					want := map[string]string{"disconnect": "extension_not_connected", "shutdown": "daemon_restarted"}[how]
					if got != want {
						t.Fatalf("%s: %s, want %s", how, got, want)
					}
				case <-time.After(2 * time.Second):
					t.Fatalf("%s: a caller hangs", how)
				}
			}
		})
	}
}

// The daemon mints identities; a label never selects a session, and a tab
// the extension reported as another session's is refused before sending.
func TestIdentityAndOwnership(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{})
	close(f.gate)
	a := b.NewSession("review", KindStdio)
	forged := b.NewSession("review", KindStdio) // same label: another session
	if a.ID() == forged.ID() {
		t.Fatal("two sessions share an id")
	}
	if r := a.CallTool(context.Background(), "work", args(42), 0); code(r) != "ok" || fmt.Sprint(r.Meta) != "map[torii:map[waitMs:0]]" {
		t.Fatalf("owner: %s %+v", code(r), r.Meta)
	}
	if got := a.Info().Tabs; fmt.Sprint(got) != "[42]" {
		t.Fatalf("tabs %v", got)
	}
	n := f.startedN()
	r := forged.CallTool(context.Background(), "work", args(42), 0)
	if code(r) != "tab_not_owned" || f.startedN() != n {
		t.Fatalf("forged label on another's tab: %s (sent: %v)", code(r), f.startedN() != n)
	}
	// The label-keyed cli session is yet another session.
	r = b.CallTool(context.Background(), Call{Name: "work", Arguments: args(42), Session: "review"})
	if code(r) != "tab_not_owned" {
		t.Fatalf("cli session with the same label: %s", code(r))
	}
	// Each call carried its own session's id.
	for _, m := range f.metaSeen {
		if m[MetaKey].(map[string]any)["sessionId"] != a.ID() {
			t.Fatalf("meta %v", m)
		}
	}
	// The status tool is answered by the daemon, about the caller only.
	st := a.CallTool(context.Background(), StatusTool, nil, 0)
	sc, _ := json.Marshal(st.StructuredContent)
	var so StatusOf
	_ = json.Unmarshal(sc, &so)
	if so.Session.ID != a.ID() || len(so.Session.Recent) != 1 || f.startedN() != n {
		t.Fatalf("status: %s", sc)
	}
	if !json.Valid(sc) || so.Session.Recent[0].Outcome != "ok" {
		t.Fatalf("status recent: %s", sc)
	}
	found := false
	for _, tl := range b.Tools() {
		found = found || tl.Name == StatusTool
	}
	if !found {
		t.Fatal("status is not in the catalogue")
	}
}

// An agent session's calls name its gateway (chat) session for the
// extension's window grant (SECURITY I-29); other kinds never carry one.
func TestGatewaySessionInMeta(t *testing.T) {
	t.Parallel()
	b, f := setup(t, config.Broker{})
	close(f.gate)
	ag := b.NewSession("agent:alpha:1234", KindAgent)
	ag.SetGatewaySession("chat-1")
	other := b.NewSession("review", KindHTTP)
	other.SetGatewaySession("chat-2") // ignored: not an agent session
	ag.CallTool(context.Background(), "work", args(1), 0)
	other.CallTool(context.Background(), "work", args(2), 0)
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.metaSeen) != 2 {
		t.Fatalf("calls %d", len(f.metaSeen))
	}
	if m := f.metaSeen[0][MetaKey].(map[string]any); m["gatewaySessionId"] != "chat-1" || m["kind"] != KindAgent {
		t.Fatalf("agent meta %v", m)
	}
	if m := f.metaSeen[1][MetaKey].(map[string]any); m["gatewaySessionId"] != nil {
		t.Fatalf("http meta %v", m)
	}
}
