package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/mcpbridge/mcpbridgetest"
)

const orderServerID = "0f1e2d3c-4b5a-4968-8776-655443322110"

// orderEnv is a real daemon with a fake extension that records the k of
// every `work` call in arrival order, and one `torii mcp` session (the
// in-process server over pipes, i.e. its stdio transport) wired to it.
type orderEnv struct {
	t     *testing.T
	in    *io.PipeWriter
	lines chan map[string]json.RawMessage

	mu   sync.Mutex
	seen []int
}

func newOrderEnv(t *testing.T, n int) *orderEnv {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	d := daemontest.Start(t, func(o *daemon.Options) { o.Config.Broker.MaxQueuedPerSession = n + 4 })
	e := &orderEnv{t: t, lines: make(chan map[string]json.RawMessage, 4*n)}
	tools := []map[string]any{
		{"name": "work", "description": "Record k.", "inputSchema": mcpbridgetest.Schema(map[string]any{"k": map[string]any{"type": "integer"}})},
		{"name": "block", "description": "Wait until cancelled.", "inputSchema": mcpbridgetest.Schema(nil)},
	}
	p := mcpbridgetest.New(orderServerID, tools, func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		if name == "block" {
			<-ctx.Done()
			return mcpbridgetest.TextResult("stopped"), nil
		}
		var a struct{ K int }
		json.Unmarshal(args, &a)
		e.mu.Lock()
		e.seen = append(e.seen, a.K)
		e.mu.Unlock()
		return mcpbridgetest.TextResult(fmt.Sprint(a.K)), nil
	})
	d.Extension(t, ctx, p, map[string]any{"type": "acp", "name": "torii", "id": orderServerID})
	d.WaitTools(t, 3)
	ctl, err := control.Dial(ctx, d.Paths.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ctl.Close() })

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	e.in = inW
	s := New(Options{Version: "t", SessionLabel: "order", Control: ctl})
	served := make(chan struct{})
	go func() { defer close(served); s.Serve(ctx, inR, outW) }()
	t.Cleanup(func() { inW.Close(); outR.Close(); <-served })
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				e.lines <- m
			}
		}
	}()
	e.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
	e.reply(`"init"`)
	return e
}

func (e *orderEnv) send(s string) {
	e.t.Helper()
	if _, err := io.WriteString(e.in, s); err != nil {
		e.t.Fatal(err)
	}
}

// reply waits for the response with the given raw id, skipping others.
func (e *orderEnv) reply(id string) map[string]json.RawMessage {
	e.t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case m := <-e.lines:
			if string(m["id"]) == id && m["method"] == nil {
				return m
			}
		case <-deadline:
			e.t.Fatalf("no reply to %s", id)
		}
	}
}

func workCall(id, k int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"work","arguments":{"k":%d}}}`+"\n", id, k)
}

// Calls an agent pipelines with no delay at all reach the daemon (and run)
// in the order sent, although go-sdk handles each on its own goroutine.
func TestPipelinedCallsKeepOrder(t *testing.T) {
	const n = 24
	e := newOrderEnv(t, n)
	var b strings.Builder
	for k := 0; k < n; k++ {
		b.WriteString(workCall(100+k, k))
	}
	e.send(b.String()) // one write: as back-to-back as a client can be
	got := map[string]bool{}
	for len(got) < n {
		select {
		case m := <-e.lines:
			if m["result"] != nil && !strings.Contains(string(m["result"]), `"isError":true`) {
				got[string(m["id"])] = true
			} else if m["method"] == nil {
				t.Fatalf("a call failed: %s / %s", m["result"], m["error"])
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d of %d answers", len(got), n)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, v := range e.seen {
		if k != v {
			t.Fatalf("the extension saw the calls in order %v", e.seen)
		}
	}
	if len(e.seen) != n {
		t.Fatalf("the extension saw %d calls", len(e.seen))
	}
}

// A call cancelled before it was sent releases its turn: the next one goes.
// So does a call the SDK answers without running the tool handler.
func TestCancelledCallDoesNotBlockLater(t *testing.T) {
	o := newOrder()
	n1, _ := o.stamp("1")
	n2, _ := o.stamp("2")
	n3, _ := o.stamp("3")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- o.wait(ctx, n2) }() // 2 waits for 1, which never goes
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("wait ignored its ctx")
	}
	o.release(n2) // the cancelled call's handler returns
	o.releaseID(`1`)
	start := time.Now()
	if err := o.wait(context.Background(), n3); err != nil || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("call 3 waited %s (err %v) for released turns", time.Since(start), err)
	}
	_ = n1

	// End to end: the first call blocks in the extension; the second is
	// pipelined right behind it and cancelled; a third still runs.
	e := newOrderEnv(t, 4)
	e.send(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"block"}}` + "\n" +
		workCall(2, 2) +
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":2}}` + "\n" +
		workCall(3, 3))
	done := make(chan struct{})
	go func() {
		defer close(done)
		// 3 queues behind 1 in the broker (a session runs one call at a
		// time); cancelling 1 lets it through.
		time.Sleep(200 * time.Millisecond)
		e.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}` + "\n")
	}()
	m := e.reply("3")
	<-done
	if !strings.Contains(string(m["result"]), `"text":"3"`) {
		t.Fatalf("call 3: %s %s", m["result"], m["error"])
	}
}

// A missing number (stamped, never released) holds later calls back for
// orderWaitMax at most, and only once.
func TestMissingTurnIsBounded(t *testing.T) {
	o := newOrder()
	o.stamp("lost")
	n, _ := o.stamp("next")
	n2, _ := o.stamp("after")
	start := time.Now()
	if err := o.wait(context.Background(), n); err != nil || time.Since(start) > orderWaitMax+time.Second {
		t.Fatalf("wait: %v after %s", err, time.Since(start))
	}
	o.release(n)
	start = time.Now()
	if err := o.wait(context.Background(), n2); err != nil || time.Since(start) > 100*time.Millisecond {
		t.Fatalf("the lost turn held back a later call again (%s)", time.Since(start))
	}
}

// The stamp reaches the handler in params._meta and is stripped there;
// arguments and other _meta pass untouched.
func TestStampLine(t *testing.T) {
	o := newOrder()
	line := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2]},"_meta":{"progressToken":"p"}}}` + "\n")
	var m struct {
		Params struct {
			Arguments json.RawMessage
			Meta      map[string]any `json:"_meta"`
		}
	}
	if err := json.Unmarshal(o.stampLine(line), &m); err != nil {
		t.Fatal(err)
	}
	if string(m.Params.Arguments) != `{"a":[1,2]}` || m.Params.Meta["progressToken"] != "p" || m.Params.Meta[metaSeq] != float64(1) {
		t.Fatalf("stamped: %+v", m.Params)
	}
	for _, s := range []string{`{"jsonrpc":"2.0","id":8,"method":"tools/list"}`, `[{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x"}}]`, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"x"}}`} {
		if got := string(o.stampLine([]byte(s))); got != s {
			t.Errorf("changed %s → %s", s, got)
		}
	}
}
