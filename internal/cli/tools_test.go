package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"github.com/torii-browser/torii/internal/browserlink"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

const fakeServerID = "6a0c7f8e-3c57-4a0b-9d0e-5f7f00c0ffee"

// pngBytes is a 1×1 PNG.
var pngBytes, _ = base64.StdEncoding.DecodeString("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")

// fakeExtension serves echo (R), slow (until cancelled), fail (not_found)
// and shot (a PNG).
func fakeExtension() *browserlinktest.Provider { return observedExtension(nil) }

// observedExtension is fakeExtension that sends on slowEnded (if not nil)
// each time a slow call ends because its context did.
func observedExtension(slowEnded chan struct{}) *browserlinktest.Provider {
	ro := map[string]any{"readOnlyHint": true}
	tools := []map[string]any{
		{"name": "echo", "description": "Echo the arguments.", "inputSchema": browserlinktest.Schema(map[string]any{"text": map[string]any{"type": "string"}}), "annotations": ro},
		{"name": "slow", "description": "Wait until cancelled.\nSecond line.", "inputSchema": browserlinktest.Schema(nil)},
		{"name": "fail", "description": "Always not_found.", "inputSchema": browserlinktest.Schema(nil), "annotations": map[string]any{"destructiveHint": true}},
		{"name": "shot", "description": "A screenshot.", "inputSchema": browserlinktest.Schema(nil), "annotations": ro},
	}
	return browserlinktest.New(fakeServerID, tools, func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		switch name {
		case "echo":
			return browserlinktest.TextResult(string(args)), nil
		case "slow":
			select {
			case <-ctx.Done():
				select {
				case slowEnded <- struct{}{}: // a nil channel never takes it
				default:
				}
				return browserlinktest.ErrorResult("cancelled", "cancelled by the client", "The call was cancelled."), nil
			case <-time.After(60 * time.Second):
				return browserlinktest.TextResult("late"), nil
			}
		case "fail":
			return browserlinktest.ErrorResult("not_found", "no element matches #x", "Nothing matched; take a snapshot."), nil
		case "shot":
			return map[string]any{"content": []any{
				map[string]any{"type": "text", "text": "captured 1x1"},
				map[string]any{"type": "image", "mimeType": "image/png", "data": base64.StdEncoding.EncodeToString(pngBytes)},
			}}, nil
		}
		return nil, wire.Errorf(wire.CodeInvalidParams, "unknown tool %s", name)
	})
}

// toolsEnv is a real in-process daemon (daemontest) that the torii binary
// reaches through its sockets; connect attaches the fake extension.
type toolsEnv struct {
	*env
	d *daemontest.Daemon
	p *browserlinktest.Provider
	// slowEnded gets a value each time a slow call in p ends on its context.
	slowEnded chan struct{}
}

// waitSlowEnded waits for a slow call in the extension to end on its context.
func (e *toolsEnv) waitSlowEnded(what string) {
	e.t.Helper()
	select {
	case <-e.slowEnded:
	case <-time.After(5 * time.Second):
		e.t.Fatalf("%s: the extension's call still runs", what)
	}
}

func newToolsEnv(t *testing.T) *toolsEnv {
	d := daemontest.Start(t, nil)
	ended := make(chan struct{}, 64)
	return &toolsEnv{env: &env{t: t, state: d.Paths.StateDir, config: d.Paths.ConfigDir}, d: d, p: observedExtension(ended), slowEnded: ended}
}

func (e *toolsEnv) connect(ctx context.Context) {
	e.d.Extension(e.t, ctx, e.p, map[string]any{"type": "acp", "name": "torii", "id": fakeServerID})
	e.d.WaitTools(e.t, 5)
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String()
}

func mcpSession(t *testing.T, e *env, ctx context.Context, opts *mcp.ClientOptions, sopts *mcp.ClientSessionOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "torii-test", Version: "0"}, opts)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: e.command("mcp", "--session-label", "test")}, sopts)
	if err != nil {
		t.Fatalf("connect to torii mcp: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// The stdio server lists the extension's catalogue and routes a call with
// its arguments byte for byte; an unknown name gets a typed result.
func TestMCPServesExtensionTools(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	e.connect(ctx)
	cs := mcpSession(t, e.env, ctx, nil, nil)
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := e.d.WaitTools(t, 5)
	got, _ := json.Marshal(tl.Tools)
	exp, _ := json.Marshal(want.Tools)
	if !jsonEqualSet(t, got, exp) {
		t.Fatalf("catalogue differs:\n got %s\nwant %s", got, exp)
	}
	args := json.RawMessage(`{"z":1.50,"a":{"k":[true,null,"é"]}}`)
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
	if err != nil || r.IsError || textOf(r) != string(args) {
		t.Fatalf("echo: %v %+v (text %q)", err, r, textOf(r))
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "fail"})
	if err != nil || !r.IsError || !strings.Contains(textOf(r), "not_found") {
		t.Fatalf("fail: %v %+v", err, r)
	}
	r, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch"})
	if err != nil || !r.IsError || !strings.Contains(textOf(r), "tool_not_found") {
		t.Fatalf("unknown: %v %+v", err, r)
	}
}

// jsonEqualSet compares two JSON arrays of tools regardless of order.
func jsonEqualSet(t *testing.T, a, b []byte) bool {
	var x, y []map[string]any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil || len(x) != len(y) {
		return false
	}
	idx := map[string]string{}
	for _, m := range y {
		j, _ := json.Marshal(m)
		idx[m["name"].(string)] = string(j)
	}
	for _, m := range x {
		j, _ := json.Marshal(m)
		if idx[m["name"].(string)] != string(j) {
			return false
		}
	}
	return true
}

// Before the extension connects the built-in catalogue is listed and a
// call says extension_not_connected; when the extension connects the
// client is told (notifications/tools/list_changed) and sees its tools —
// for a legacy (initialize) client and for a current go-sdk client.
func TestMCPToolsAppearLate(t *testing.T) {
	t.Parallel()
	builtin := []*mcp.Tool{{Name: "echo", Description: "Built in.", InputSchema: map[string]any{"type": "object"}}}
	d := daemontest.Start(t, func(o *daemon.Options) { o.Catalogue = builtin })
	e := &toolsEnv{env: &env{t: t, state: d.Paths.StateDir, config: d.Paths.ConfigDir}, d: d, p: fakeExtension()}
	ctx := tctx(t)
	type sess struct {
		cs      *mcp.ClientSession
		changed chan struct{}
	}
	var ss []sess
	for _, version := range []string{"2025-06-18", ""} {
		changed := make(chan struct{}, 8)
		opts := &mcp.ClientOptions{ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) {
			changed <- struct{}{}
		}}
		var so *mcp.ClientSessionOptions
		if version != "" {
			so = &mcp.ClientSessionOptions{ProtocolVersion: version}
		}
		cs := mcpSession(t, e.env, ctx, opts, so)
		tl, err := cs.ListTools(ctx, nil)
		if err != nil || len(tl.Tools) != 2 || tl.Tools[0].Name != "echo" || tl.Tools[1].Name != "status" {
			t.Fatalf("tools before the extension: %v %+v", err, tl)
		}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		if e := toolerr.FromResult(res); err != nil || e == nil || e.Code != toolerr.ExtensionNotConnected {
			t.Fatalf("a call before the extension: %v %+v", err, res)
		}
		ss = append(ss, sess{cs, changed})
	}
	e.connect(ctx)
	for i, s := range ss {
		select {
		case <-s.changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("session %d: no tools/list_changed after the extension connected", i)
		}
		tl, err := s.cs.ListTools(ctx, nil)
		if err != nil || len(tl.Tools) != 5 {
			t.Fatalf("session %d: tools after connect: %v %+v", i, err, tl)
		}
	}
}

// A call the client cancels is cancelled in the daemon (tools.cancel) and
// in the extension (mcp/cancel).
func TestMCPCancelReachesExtension(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	e.connect(ctx)
	cs := mcpSession(t, e.env, ctx, nil, nil)
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "slow", Arguments: map[string]any{}})
		done <- err
	}()
	if _, err := e.p.WaitFor(browserlink.MethodCall, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled call returned no error")
	}
	if _, err := e.p.WaitFor(browserlink.MethodCancel, 10*time.Second); err != nil {
		t.Fatalf("the extension never saw mcp/cancel: %v", err)
	}
	e.waitSlowEnded("after cancel")
	// The session still works.
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "after"}})
	if err != nil || textOf(r) != `{"text":"after"}` {
		t.Fatalf("echo after cancel: %v %+v", err, r)
	}
}

func TestExec(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	e.connect(ctx)

	r := e.run("", "exec", "echo", "text=hi there", "n=42", "ok=true", `q="7"`, `o={"a":[1]}`, "zip=007")
	if r.code != 0 || r.stdout != `{"text":"hi there","n":42,"ok":true,"q":"7","o":{"a":[1]},"zip":"007"}`+"\n" {
		t.Fatalf("exec echo: %+v", r)
	}
	r = e.run("", "exec", "--json", "echo", "text=x")
	var res mcp.CallToolResult
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &res) != nil || textOf(&res) != `{"text":"x"}` {
		t.Fatalf("exec --json: %+v", r)
	}

	// An image goes to a file, its path is printed; text is printed too.
	dir := t.TempDir()
	r = e.run("", "exec", "shot", "--out", dir)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 2 || lines[0] != "captured 1x1" {
		t.Fatalf("exec shot: %+v", r)
	}
	p := lines[1]
	if filepath.Dir(p) != dir || !strings.HasPrefix(filepath.Base(p), "torii-shot-") || !strings.HasSuffix(p, ".png") {
		t.Fatalf("image path %q", p)
	}
	if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, pngBytes) {
		t.Fatalf("saved image: %v (%d bytes)", err, len(b))
	}
	// In the current directory by default.
	cmd := e.command("exec", "shot")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), filepath.Join(dir, "torii-shot-")) {
		t.Fatalf("exec shot in cwd: %v %s", err, out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Fatalf("%d files in out dir, want 2", len(ents))
	}

	// A tool error: code, message and hint on stderr, exit 1.
	r = e.run("", "exec", "fail")
	if r.code != 1 || !strings.Contains(r.stderr, "error not_found: no element matches #x\n") || !strings.Contains(r.stderr, "hint: Nothing matched") {
		t.Fatalf("exec fail: %+v", r)
	}
	// Unknown tool: exit 1 with the close names.
	r = e.run("", "exec", "ecoh")
	if r.code != 1 || !strings.Contains(r.stderr, `no tool named "ecoh"`) || !strings.Contains(r.stderr, "did you mean: echo") {
		t.Fatalf("exec unknown: %+v", r)
	}
	// Bad key=value: usage, exit 2.
	for _, bad := range [][]string{{"echo", "text"}, {"echo", "=x"}, {"echo", "a=1", "a=2"}, {}} {
		if r := e.run("", append([]string{"exec"}, bad...)...); r.code != 2 {
			t.Errorf("exec %q: exit %d, want 2 (%s)", bad, r.code, r.stderr)
		}
	}
}

// An interrupted `torii exec` (SIGINT) exits 130 and its call is cancelled
// in the extension; a --timeout ends the call with a typed timeout; an exec
// without a daemon says how to start one.
func TestExecInterruptedAndTimedOut(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	e.connect(ctx)

	cmd := e.command("exec", "slow")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := e.p.WaitFor(browserlink.MethodCall, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 || !strings.Contains(errb.String(), "torii exec: slow cancelled") {
		t.Fatalf("interrupted exec: %v, stderr %q", err, errb.String())
	}
	if _, err := e.p.WaitFor(browserlink.MethodCancel, 10*time.Second); err != nil {
		t.Fatalf("the extension never saw mcp/cancel: %v", err)
	}
	e.waitSlowEnded("after the interrupt")
	// The session's slot frees once the extension's answer is in, which the
	// daemon offers no event for: polled, bounded.
	for deadline := time.Now().Add(5 * time.Second); e.p.Inflight() > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the extension's call still runs after the interrupt")
		}
	}

	start := time.Now()
	r := e.run("", "exec", "--timeout", "300ms", "slow")
	if r.code != 1 || !strings.Contains(r.stderr, "error timeout:") || time.Since(start) > 5*time.Second {
		t.Fatalf("exec --timeout: %+v after %s", r, time.Since(start))
	}
	for _, bad := range []string{"-1s", "181s"} {
		if r := e.run("", "exec", "--timeout", bad, "echo"); r.code != 2 {
			t.Errorf("exec --timeout %s: exit %d, want 2", bad, r.code)
		}
	}

	gone := &env{t: t, state: t.TempDir(), config: t.TempDir()}
	if r := gone.run("", "exec", "echo"); r.code == 0 || !strings.Contains(r.stderr, "not running") {
		t.Fatalf("exec without a daemon: %+v", r)
	}
}

func TestToolsCommand(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	r := e.run("", "tools")
	if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "not connected") {
		t.Fatalf("tools before the extension: %+v", r)
	}
	e.connect(ctx)
	r = e.run("", "tools")
	want := "echo    R  Echo the arguments.\n" +
		"slow    W  Wait until cancelled.\n" +
		"fail    W  Always not_found.\n" +
		"shot    R  A screenshot.\n" +
		"status  R  Your session's tabs, queued and running calls, and latest calls.\n"
	if r.code != 0 || r.stdout != want {
		t.Fatalf("tools:\n%s\nwant:\n%s(%s)", r.stdout, want, r.stderr)
	}
	r = e.run("", "tools", "--json")
	var tools []*mcp.Tool
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &tools) != nil || len(tools) != 5 || tools[0].Name != "echo" ||
		tools[0].Annotations == nil || !tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("tools --json: %+v", r)
	}
}

// No daemon: `torii tools` lists the catalogue built into the binary.
func TestToolsOffline(t *testing.T) {
	t.Parallel()
	if !extension.Built() {
		t.Skip("extension not built into this binary (make build)")
	}
	e := newEnv(t)
	want, err := extension.Catalogue()
	if err != nil || len(want) == 0 {
		t.Fatalf("built-in catalogue: %d tools, %v", len(want), err)
	}
	r := e.run("", "tools")
	if r.code != 0 || !strings.Contains(r.stderr, "the daemon is not running; listed: the catalogue built into torii") {
		t.Fatalf("tools without a daemon: %+v", r)
	}
	if n := strings.Count(r.stdout, "\n"); n != len(want) || !strings.Contains(r.stdout, "navigate ") || !strings.Contains(r.stdout, "snapshot ") {
		t.Fatalf("tools without a daemon: %d lines for %d tools:\n%s", n, len(want), r.stdout)
	}
	r = e.run("", "tools", "--json")
	var tools []*mcp.Tool
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &tools) != nil || len(tools) != len(want) {
		t.Fatalf("tools --json without a daemon: %+v", r)
	}
}

func TestParseToolArgs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want string
		bad  bool
	}{
		{nil, `{}`, false},
		{[]string{"n=1"}, `{"n":1}`, false},
		{[]string{"n=-2.5e3"}, `{"n":-2.5e3}`, false},
		{[]string{"b=true", "c=false", "z=null"}, `{"b":true,"c":false,"z":null}`, false},
		{[]string{`s="42"`}, `{"s":"42"}`, false},
		{[]string{"s=hello world"}, `{"s":"hello world"}`, false},
		{[]string{"s="}, `{"s":""}`, false},
		{[]string{"s=a=b"}, `{"s":"a=b"}`, false},
		{[]string{"s=007"}, `{"s":"007"}`, false},
		{[]string{"s=True"}, `{"s":"True"}`, false},
		{[]string{"u=https://x.test/?a=1&b=2"}, `{"u":"https://x.test/?a=1&b=2"}`, false},
		{[]string{`o={"a": [1, 2]}`}, `{"o":{"a":[1,2]}}`, false},
		{[]string{"a=[1,2"}, `{"a":"[1,2"}`, false},
		{[]string{"k=v", "a=1"}, `{"k":"v","a":1}`, false},
		{[]string{"noequals"}, "", true},
		{[]string{"=v"}, "", true},
		{[]string{"a=1", "a=2"}, "", true},
	} {
		got, err := parseToolArgs(c.in)
		if c.bad {
			if err == nil {
				t.Errorf("%q: no error, got %s", c.in, got)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%q: got %s, %v; want %s", c.in, got, err, c.want)
		}
	}
}
