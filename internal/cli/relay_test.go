package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"github.com/torii-browser/torii/internal/browserlink"
	"io"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/toolerr"
)

// rawMCP is an agent that writes `torii mcp`'s stdin line by line, so a
// test can send what a well-behaved SDK client never would.
type rawMCP struct {
	t    *testing.T
	in   io.WriteCloser
	msgs chan map[string]any
	mu   sync.Mutex
	seen []map[string]any // read, not yet taken
}

func startRaw(t *testing.T, e *env, label string) *rawMCP {
	t.Helper()
	cmd := e.command("mcp", "--session-label", label)
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := &rawMCP{t: t, in: in, msgs: make(chan map[string]any, 1024)}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	go func() {
		defer close(r.msgs)
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"unparsable": sc.Text()}
			}
			r.msgs <- m
		}
	}()
	return r
}

func (r *rawMCP) line(s string) {
	r.t.Helper()
	if _, err := io.WriteString(r.in, s+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rawMCP) send(v map[string]any) {
	r.t.Helper()
	v["jsonrpc"] = "2.0"
	b, _ := json.Marshal(v)
	r.line(string(b))
}

// take returns the first message (already read or arriving within d) that
// match accepts.
func (r *rawMCP) take(d time.Duration, what string, match func(map[string]any) bool) map[string]any {
	r.t.Helper()
	r.mu.Lock()
	for i, m := range r.seen {
		if match(m) {
			r.seen = append(r.seen[:i], r.seen[i+1:]...)
			r.mu.Unlock()
			return m
		}
	}
	r.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case m, ok := <-r.msgs:
			if !ok {
				r.t.Fatalf("torii mcp closed its stdout waiting for %s", what)
			}
			if match(m) {
				return m
			}
			r.mu.Lock()
			r.seen = append(r.seen, m)
			r.mu.Unlock()
		case <-t.C:
			r.t.Fatalf("no %s within %s (seen %v)", what, d, r.seen)
		}
	}
}

func idIs(id any) func(map[string]any) bool {
	want := fmt.Sprint(id)
	return func(m map[string]any) bool {
		v, ok := m["id"]
		return ok && v != nil && fmt.Sprint(v) == want && m["method"] == nil
	}
}

func (r *rawMCP) reply(id any) map[string]any {
	r.t.Helper()
	return r.take(20*time.Second, fmt.Sprintf("reply to %v", id), idIs(id))
}

func (r *rawMCP) initialize() {
	r.t.Helper()
	r.send(map[string]any{"id": "init", "method": "initialize", "params": map[string]any{"protocolVersion": "2025-06-18",
		"capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "0"}}})
	if m := r.reply("init"); m["result"] == nil {
		r.t.Fatalf("initialize: %v", m)
	}
	r.send(map[string]any{"method": "notifications/initialized"})
}

func (r *rawMCP) call(id any, name string, args map[string]any) {
	r.t.Helper()
	r.send(map[string]any{"id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
}

func (r *rawMCP) cancel(id any) {
	r.t.Helper()
	r.send(map[string]any{"method": "notifications/cancelled", "params": map[string]any{"requestId": id, "reason": "test"}})
}

// resultText is a tools/call reply's text, or its error code prefixed "!".
func resultText(t *testing.T, m map[string]any) string {
	t.Helper()
	b, _ := json.Marshal(m["result"])
	var r mcp.CallToolResult
	if m["result"] == nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("not a tool result: %v", m)
	}
	if e := toolerr.FromResult(&r); e != nil {
		return "!" + string(e.Code)
	}
	return textOf(&r)
}

func errCode(m map[string]any) float64 {
	e, _ := m["error"].(map[string]any)
	c, _ := e["code"].(float64)
	return c
}

// sessionOf is the live broker session with label (the daemon's status).
func sessionOf(t *testing.T, d *daemontest.Daemon, label string) broker.SessionInfo {
	t.Helper()
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	for _, s := range st.Sessions {
		if s.Label == label && s.Ended == nil {
			return s
		}
	}
	return broker.SessionInfo{}
}

func waitSession(t *testing.T, d *daemontest.Daemon, label, what string, ok func(broker.SessionInfo) bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !ok(sessionOf(t, d, label)) {
		if time.Now().After(deadline) {
			t.Fatalf("session %q never %s: %+v", label, what, sessionOf(t, d, label))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// extensionSawText reports whether the fake extension received a call
// whose arguments contain text (it drains the provider's events).
func (e *toolsEnv) extensionSawText(text string) bool {
	for {
		select {
		case ev := <-e.p.Events():
			if ev.Method == browserlink.MethodCall && strings.Contains(string(ev.Params), text) {
				return true
			}
		default:
			return false
		}
	}
}

// A line that is not JSON, a batch and a message that is not JSON-RPC each
// get their error; the session goes on.
func TestRelayMalformedLines(t *testing.T) {
	e := newToolsEnv(t)
	r := startRaw(t, e.env, "raw")
	r.initialize()
	r.line(`this is not json`)
	if m := r.take(10*time.Second, "parse error", func(m map[string]any) bool { return m["error"] != nil }); errCode(m) != -32700 || m["id"] != nil {
		t.Fatalf("not JSON: %v", m)
	}
	r.line(`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`)
	if m := r.take(10*time.Second, "batch error", func(m map[string]any) bool { return m["error"] != nil }); errCode(m) != -32600 {
		t.Fatalf("batch: %v", m)
	}
	r.line(`{"jsonrpc":"2.0","id":2,"method":7}`)
	if m := r.reply(2); errCode(m) != -32600 {
		t.Fatalf("method not a string: %v", m)
	}
	r.line(``)
	r.send(map[string]any{"id": 3, "method": "tools/list"})
	if m := r.reply(3); m["result"] == nil {
		t.Fatalf("tools/list after bad lines: %v", m)
	}
	e.connect(tctx(t))
	r.call(4, "echo", map[string]any{"text": "still here"})
	if got := resultText(t, r.reply(4)); got != `{"text":"still here"}` {
		t.Fatalf("call after bad lines: %q", got)
	}
}

// A request id already in use is refused without running; the call that
// holds the id is untouched, and later calls are answered as their own.
func TestRelayDuplicateRequestID(t *testing.T) {
	e := newToolsEnv(t)
	e.connect(tctx(t))
	r := startRaw(t, e.env, "dup")
	r.initialize()
	r.call(10, "slow", map[string]any{})
	if _, err := e.p.WaitFor(browserlink.MethodCall, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	r.call(10, "echo", map[string]any{"text": "duplicate"})
	if m := r.take(10*time.Second, "duplicate-id error", func(m map[string]any) bool { return m["error"] != nil }); errCode(m) != -32600 || m["id"] != nil {
		t.Fatalf("duplicate id: %v", m)
	}
	if e.p.Inflight() != 1 {
		t.Fatalf("the call holding id 10 stopped: %d in flight", e.p.Inflight())
	}
	r.cancel(10)
	if _, err := e.p.WaitFor(browserlink.MethodCancel, 10*time.Second); err != nil {
		t.Fatalf("cancelling id 10 never reached the extension: %v", err)
	}
	r.call(11, "echo", map[string]any{"text": "eleven"})
	if got := resultText(t, r.reply(11)); got != `{"text":"eleven"}` {
		t.Fatalf("call after the duplicate: %q", got)
	}
	if e.extensionSawText("duplicate") {
		t.Fatal("the call with a duplicate id ran")
	}
}

// notifications/cancelled stops a call still queued (it never reaches the
// extension), one running in the extension (mcp/cancel), and is a no-op
// for one already answered.
func TestRelayCancel(t *testing.T) {
	e := newToolsEnv(t)
	e.connect(tctx(t))
	r := startRaw(t, e.env, "cancel")
	r.initialize()

	// Finished: cancelling an answered call changes nothing.
	r.call(1, "echo", map[string]any{"text": "one"})
	if got := resultText(t, r.reply(1)); got != `{"text":"one"}` {
		t.Fatalf("echo: %q", got)
	}
	r.cancel(1)

	// Running, with one queued behind it (a session's calls run in order).
	r.call(2, "slow", map[string]any{})
	if _, err := e.p.WaitForCall("slow", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	r.call(3, "echo", map[string]any{"text": "queued"})
	waitSession(t, e.d, "cancel", "had one call queued", func(s broker.SessionInfo) bool { return s.Queued == 1 && s.InFlight == 1 })
	r.cancel(3)
	waitSession(t, e.d, "cancel", "dropped the queued call", func(s broker.SessionInfo) bool {
		return s.Queued == 0 && len(s.Recent) > 0 && s.Recent[len(s.Recent)-1].Outcome == string(toolerr.Cancelled)
	})
	if e.p.Inflight() != 1 {
		t.Fatal("cancelling the queued call touched the running one")
	}
	r.cancel(2)
	if _, err := e.p.WaitFor(browserlink.MethodCancel, 10*time.Second); err != nil {
		t.Fatalf("the running call was not cancelled in the extension: %v", err)
	}
	waitSession(t, e.d, "cancel", "ended the running call", func(s broker.SessionInfo) bool { return s.InFlight == 0 })
	if e.extensionSawText("queued") {
		t.Fatal("the cancelled queued call reached the extension")
	}

	r.call(4, "echo", map[string]any{"text": "after"})
	if got := resultText(t, r.reply(4)); got != `{"text":"after"}` {
		t.Fatalf("echo after the cancels: %q", got)
	}
	st := sessionOf(t, e.d, "cancel")
	var outcomes []string
	for _, c := range st.Recent {
		outcomes = append(outcomes, c.Tool+":"+c.Outcome)
	}
	if got := strings.Join(outcomes, ","); got != "echo:ok,echo:cancelled,slow:cancelled,echo:ok" {
		t.Fatalf("outcomes %s", got)
	}
}

// Two agents pipeline 200 calls each, interleaved: each gets its own
// answers (nothing misrouted), and the extension receives each session's
// calls in the order that session sent them.
func TestRelayTwoAgentsOrder(t *testing.T) {
	d := daemontest.Start(t, func(o *daemon.Options) {
		o.Config.Broker.MaxQueuedPerSession = 512
		o.Config.Broker.QueueBudgetMs = 120_000
	})
	e := &toolsEnv{env: &env{t: t, state: d.Paths.StateDir, config: d.Paths.ConfigDir}, d: d, p: fakeExtension()}
	e.connect(tctx(t))
	const n = 200
	agents := []string{"A", "B"}
	raws := map[string]*rawMCP{}
	for _, a := range agents {
		raws[a] = startRaw(t, e.env, "order-"+a)
		raws[a].initialize()
	}
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b strings.Builder
			for i := range n {
				fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"%s-%d"}}}`+"\n", i, a, i)
			}
			io.WriteString(raws[a].in, b.String())
		}()
	}
	wg.Wait()
	for _, a := range agents {
		for i := range n {
			if got, want := resultText(t, raws[a].take(60*time.Second, fmt.Sprintf("%s reply %d", a, i), idIs(i))), fmt.Sprintf(`{"text":"%s-%d"}`, a, i); got != want {
				t.Fatalf("agent %s call %d got %s, want %s", a, i, got, want)
			}
		}
	}
	next := map[string]int{}
	for range 2 * n {
		ev, err := e.p.WaitFor(browserlink.MethodCall, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Arguments struct {
				Text string `json:"text"`
			} `json:"arguments"`
		}
		json.Unmarshal(ev.Params, &m)
		a, num, _ := strings.Cut(m.Arguments.Text, "-")
		if want := fmt.Sprint(next[a]); num != want {
			t.Fatalf("agent %s: the extension got call %s, want %s (order lost)", a, num, want)
		}
		next[a]++
	}
}

// The daemon dies mid-call: the call in flight fails with a typed error at
// once, `torii mcp` reconnects by itself (starting a daemon), and the
// agent's next call works in the same MCP session.
func TestRelaySurvivesDaemonRestart(t *testing.T) {
	e := newEnv(t)
	first, addr := e.serve()
	d := &daemontest.Daemon{URL: "ws://" + addr + "/acp", Control: e.control()}
	p := fakeExtension()
	ctx := tctx(t)
	d.Extension(t, ctx, p, map[string]any{"type": "acp", "name": "torii", "id": fakeServerID})
	changed := make(chan struct{}, 8)
	cs := mcpClientOpts(t, e, &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
		changed <- struct{}{}
	}})
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "before"}})
		if err == nil && textOf(res) == `{"text":"before"}` {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("echo before the restart: %v %+v", err, res)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for len(changed) > 0 {
		<-changed
	}
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		if err != nil {
			res = &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "protocol error: " + err.Error()}}}
		}
		done <- res
	}()
	// The events still hold the echo calls above: the daemon dies once
	// "slow" itself has reached the extension.
	if _, err := p.WaitForCall("slow", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	first.Process.Signal(syscall.SIGKILL)
	select {
	case res := <-done:
		if e := toolerr.FromResult(res); e == nil || e.Code != toolerr.DaemonRestarted || !strings.Contains(e.Message, "may have partly run") {
			t.Fatalf("the call in flight when the daemon died: %+v", res)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call in flight was never answered")
	}
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools/list_changed after reconnecting")
	}
	// The session was re-initialised against the new daemon: calls work.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "status", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("status after the restart: %v %+v", err, res)
	}
	// The new daemon has no browser: its built-in catalogue's tools say so.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "tabs", Arguments: map[string]any{}})
	if e := toolerr.FromResult(res); err != nil || e == nil || e.Code != toolerr.ExtensionNotConnected {
		t.Fatalf("a browser tool on the new daemon without a browser: %v %+v", err, res)
	}
	if st := e.status(); st.PID == first.Process.Pid || st.PID == 0 {
		t.Fatalf("no new daemon: %+v", st)
	}
}

func mcpClientOpts(t *testing.T, e *env, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "torii-test", Version: "0"}, opts)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: e.command("mcp", "--session-label", "restart")}, nil)
	if err != nil {
		t.Fatalf("connect to torii mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// `printf '…requests…' | torii mcp`: stdin ends at once, and every
// request is still answered before the relay exits.
func TestRelayPipedRequestsAnswered(t *testing.T) {
	e := newToolsEnv(t)
	e.connect(tctx(t))
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"0"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"piped"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
`
	r := e.run(in, "mcp", "--session-label", "pipe")
	if r.code != 0 {
		t.Fatalf("torii mcp exited %d: %s", r.code, r.stderr)
	}
	got := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["id"] != nil && m["result"] != nil {
			got[fmt.Sprint(m["id"])] = true
			if fmt.Sprint(m["id"]) == "2" && !strings.Contains(l, `piped`) {
				t.Errorf("echo reply: %s", l)
			}
		}
	}
	if !got["1"] || !got["2"] || !got["3"] {
		t.Fatalf("replies %v in:\n%s", got, r.stdout)
	}
}
