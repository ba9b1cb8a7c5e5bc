package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/torii-browser/torii/internal/browserlink"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/mcpserver"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

const serverID = "0b6f5c6e-2d0b-4f36-9a43-2f3f2d6f7f11"

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeTools: echo (fast), slow (until cancelled), fail (a tool error), boom
// (an inner protocol error).
func fakeProvider() *browserlinktest.Provider {
	p, _ := observedProvider()
	return p
}

// slowCalls tells when a call of the fake's "slow" tool starts, and when it
// ends because its context did (the call was cancelled or abandoned).
type slowCalls struct{ started, ended chan struct{} }

func (s *slowCalls) wait(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(5 * time.Second):
		t.Fatalf("no %s within 5 s", what)
	}
}

// signal records an event; past the buffer (a test not watching) it is dropped.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// observedProvider is fakeProvider with the events of its "slow" calls.
func observedProvider() (*browserlinktest.Provider, *slowCalls) {
	slow := &slowCalls{started: make(chan struct{}, 1024), ended: make(chan struct{}, 1024)}
	ro := map[string]any{"readOnlyHint": true}
	tools := []map[string]any{
		{"name": "echo", "description": "Echo the arguments.", "inputSchema": browserlinktest.Schema(map[string]any{"text": map[string]any{"type": "string"}}), "annotations": ro},
		{"name": "slow", "description": "Wait until cancelled.", "inputSchema": browserlinktest.Schema(nil)},
		{"name": "fail", "description": "Always not_found.", "inputSchema": browserlinktest.Schema(nil)},
		{"name": "boom", "description": "Inner protocol error.", "inputSchema": browserlinktest.Schema(nil)},
	}
	return browserlinktest.New(serverID, tools, func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		switch name {
		case "echo":
			return browserlinktest.TextResult(string(args)), nil
		case "slow":
			signal(slow.started)
			select {
			case <-ctx.Done():
				signal(slow.ended)
				return browserlinktest.ErrorResult("cancelled", "cancelled by the client", "The call was cancelled."), nil
			case <-time.After(60 * time.Second):
				return browserlinktest.TextResult("late"), nil
			}
		case "fail":
			return browserlinktest.ErrorResult("not_found", "no element matches #x", toolerr.NotFound.Hint()), nil
		case "boom":
			return nil, wire.Errorf(wire.CodeInvalidParams, "arguments: tabId must be an integer")
		}
		return nil, wire.Errorf(wire.CodeInvalidParams, "unknown tool %s", name)
	}), slow
}

func genA() map[string]any { return map[string]any{"type": "acp", "name": "torii", "id": serverID} }

func errCode(t *testing.T, r *mcp.CallToolResult) toolerr.Code {
	t.Helper()
	if r == nil || !r.IsError {
		t.Fatalf("want an isError result, got %+v", r)
	}
	e := toolerr.FromResult(r)
	if e == nil {
		t.Fatalf("isError result without structuredContent.error: %+v", r)
	}
	if e.Hint == "" || !strings.Contains(r.Content[0].(*mcp.TextContent).Text, string(e.Code)) {
		t.Fatalf("error result lacks a hint or a text code: %+v", r)
	}
	return e.Code
}

func text(r *mcp.CallToolResult) string {
	if r == nil || len(r.Content) == 0 {
		return ""
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func TestToolsServedAndRouted(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	p := fakeProvider()
	// Before any extension: a typed error, never a hang.
	if c := errCode(t, d.Exec(t, "cli", "echo", nil)); c != toolerr.ExtensionNotConnected {
		t.Fatalf("no extension: %s", c)
	}
	d.Extension(t, ctx, p, genA())
	lst := d.WaitTools(t, 5)
	if lst.Tools[0].Name != "echo" || lst.Tools[0].Annotations == nil || !lst.Tools[0].Annotations.ReadOnlyHint {
		t.Fatalf("catalogue: %+v", lst.Tools[0])
	}
	// The catalogue is asked for directly on the link: no MCP session.
	if ev, err := p.WaitFor(browserlink.MethodList, time.Second); err != nil || ev.ID == nil {
		t.Fatalf("%s: %+v %v", browserlink.MethodList, ev, err)
	}

	// A real MCP client over Streamable HTTP with a token.
	tok := d.Token(t, "agent one")
	s, err := d.MCP(t, ctx, tok, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tl, err := s.ListTools(ctx, nil)
	if err != nil || len(tl.Tools) != 5 {
		t.Fatalf("tools/list over /mcp: %v %+v", err, tl)
	}
	byName := map[string]*mcp.Tool{}
	for _, tool := range tl.Tools {
		byName[tool.Name] = tool
	}
	if e := byName["echo"]; e == nil || e.Description != "Echo the arguments." || e.Annotations == nil || !e.Annotations.ReadOnlyHint {
		t.Fatalf("echo over /mcp: %+v", e)
	}
	// Routed, arguments untouched.
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hé", "n": 1}})
	if err != nil || r.IsError || text(r) != `{"n":1,"text":"hé"}` {
		t.Fatalf("echo: %v %+v", err, r)
	}
	// A tool failure passes through with its code.
	r, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "fail"})
	if err != nil || errCode(t, r) != toolerr.NotFound {
		t.Fatalf("fail: %v %+v", err, r)
	}
	// An inner MCP protocol error becomes a typed isError result.
	r, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "boom"})
	if err != nil || errCode(t, r) != toolerr.InvalidArgument || !strings.Contains(text(r), "tabId") {
		t.Fatalf("boom: %v %+v", err, r)
	}
	// Unknown tool: typed, over /mcp and over the MCP socket; never sent to the extension.
	r, err = s.CallTool(ctx, &mcp.CallToolParams{Name: "nosuch"})
	if err != nil || errCode(t, r) != toolerr.ToolNotFound {
		t.Fatalf("unknown over /mcp: %v %+v", err, r)
	}
	if c := errCode(t, d.Exec(t, "cli", "nosuch", nil)); c != toolerr.ToolNotFound {
		t.Fatalf("unknown over the MCP socket: %s", c)
	}
	// As `torii exec` calls: the arguments pass through untouched.
	r = d.Exec(t, "cli", "echo", json.RawMessage(`{"a":[1,2]}`))
	if r.IsError || text(r) != `{"a":[1,2]}` {
		t.Fatalf("exec echo: %+v", r)
	}
	// Calls go over MCP only: the control socket has no tools.call.
	var je *wire.Error
	if err := d.Control.Call(ctx, "tools.call", map[string]any{"name": "echo"}, nil); !errors.As(err, &je) || je.Code != wire.CodeMethodNotFound {
		t.Fatalf("control tools.call: %v", err)
	}
}

func TestLinkDropFailsPendingCallsAtOnce(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	p, slow := observedProvider()
	ext := d.Extension(t, ctx, p, genA())
	d.WaitTools(t, 5)
	s, err := d.MCP(t, ctx, d.Token(t, "a"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	type out struct {
		r   *mcp.CallToolResult
		err error
	}
	viaMCP, viaCtl := make(chan out, 1), make(chan out, 1)
	go func() {
		r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		viaMCP <- out{r, err}
	}()
	ex := d.Relay(t, ctx, mcpserver.RelayHelloParams{SessionLabel: "cli", Shared: true})
	go func() {
		r, err := ex.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		viaCtl <- out{r, err}
	}()
	slow.wait(t, slow.started, "first call in the extension")
	slow.wait(t, slow.started, "second call in the extension")
	start := time.Now()
	ext.Close()
	for _, ch := range []chan out{viaMCP, viaCtl} {
		select {
		case o := <-ch:
			if o.err != nil || errCode(t, o.r) != toolerr.ExtensionNotConnected {
				t.Fatalf("pending call after link drop: %v %+v", o.err, o.r)
			}
		case <-time.After(3 * time.Second):
			t.Fatal("pending call hangs after the link dropped")
		}
	}
	if el := time.Since(start); el > 2*time.Second {
		t.Fatalf("link drop took %s to fail the calls", el)
	}
	// The catalogue stays listed; calls now fail fast with the same code.
	var lst daemon.ToolsListResult
	d.Call(t, "tools.list", nil, &lst)
	if lst.ExtensionConnected || len(lst.Tools) != 5 {
		t.Fatalf("after drop: %+v", lst)
	}
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if err != nil || errCode(t, r) != toolerr.ExtensionNotConnected {
		t.Fatalf("call after drop: %v %+v", err, r)
	}
}

func TestCancellationReachesTheExtension(t *testing.T) {
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	p, slow := observedProvider()
	d.Extension(t, ctx, p, genA())
	d.WaitTools(t, 5)
	s, err := d.MCP(t, ctx, d.Token(t, "a"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	drain := func() {
		for {
			select {
			case <-p.Events():
			default:
				return
			}
		}
	}
	checkCancel := func(what string) {
		t.Helper()
		call, err := p.WaitFor(browserlink.MethodCall, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		cancel, err := p.WaitFor(browserlink.MethodCancel, 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		var cp browserlink.CancelParams
		var cc browserlink.CallParams
		json.Unmarshal(cancel.Params, &cp)
		json.Unmarshal(call.Params, &cc)
		if cp.CallID == "" || cp.CallID != cc.CallID || string(call.ID) != `"`+cc.CallID+`"` || cancel.ID != nil {
			t.Fatalf("%s: cancel %s does not name the call %s (id %s)", what, cancel.Params, call.Params, call.ID)
		}
		slow.wait(t, slow.ended, what+": the extension's call aborted")
	}

	// 1. The MCP client cancels its context: notifications/cancelled reaches
	// the daemon, which sends mcp/cancel naming the call's outer id.
	drain()
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(cctx, &mcp.CallToolParams{Name: "slow"})
		done <- err
	}()
	slow.wait(t, slow.started, "the call in the extension")
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("client CallTool after cancel: %v", err)
	}
	checkCancel("mcp client")

	// 2. `torii exec` interrupted: the call's context ends and the process
	// closes its connection at once; the call is cancelled all the same.
	drain()
	ex := d.Relay(t, ctx, mcpserver.RelayHelloParams{SessionLabel: "cli", Shared: true})
	xctx, xcancel := context.WithCancel(ctx)
	exDone := make(chan error, 1)
	go func() {
		_, err := ex.CallTool(xctx, &mcp.CallToolParams{Name: "slow"})
		exDone <- err
	}()
	slow.wait(t, slow.started, "the call in the extension")
	xcancel()
	if err := <-exDone; !errors.Is(err, context.Canceled) {
		t.Fatalf("exec CallTool after cancel: %v", err)
	}
	ex.Close()
	checkCancel("exec interrupted")

	// 3. A deadline from the hello (`torii exec --timeout`): `timeout` (it
	// may have run) and mcp/cancel.
	drain()
	start := time.Now()
	// A session of its own: the call must not queue behind the interrupted one
	// above, whose slot frees only once its cancellation has been answered.
	short := d.Relay(t, ctx, mcpserver.RelayHelloParams{SessionLabel: "cli-deadline", Shared: true, TimeoutMs: 150})
	r, err := short.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
	if err != nil {
		t.Fatal(err)
	}
	if c := errCode(t, r); c != toolerr.Timeout || time.Since(start) > 2*time.Second {
		t.Fatalf("deadline: %s after %s", c, time.Since(start))
	}
	checkCancel("deadline")
}

func TestMCPHTTPChecks(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, func(o *daemon.Options) { o.Config.TokenOrigins = []string{"https://panel.example"} })
	ctx := tctx(t)
	tok := d.Token(t, "a")
	post := func(hdr http.Header, host string) int {
		body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"0"}}}`
		req, _ := http.NewRequestWithContext(ctx, "POST", d.MCPURL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range hdr {
			req.Header[k] = v
		}
		if host != "" {
			req.Host = host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	auth := http.Header{"Authorization": {"Bearer " + tok}}
	with := func(k, v string) http.Header {
		h := http.Header{"Authorization": {"Bearer " + tok}}
		h.Set(k, v)
		return h
	}
	for name, tc := range map[string]struct {
		hdr  http.Header
		host string
		want int
	}{
		"no token":         {nil, "", 401},
		"wrong token":      {http.Header{"Authorization": {"Bearer torii_nope"}}, "", 401},
		"basic auth":       {http.Header{"Authorization": {"Basic eDp5"}}, "", 401},
		"foreign origin":   {with("Origin", "https://evil.example"), "", 403},
		"extension origin": {with("Origin", "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "", 403},
		"rebinding host":   {auth, "evil.example:7317", 403},
		"token origin":     {with("Origin", "https://panel.example"), "", 200},
		"no origin":        {auth, "", 200},
		"localhost host":   {auth, "localhost:1", 200},
	} {
		t.Run(name, func(t *testing.T) {
			if got := post(tc.hdr, tc.host); got != tc.want {
				t.Fatalf("status %d, want %d", got, tc.want)
			}
		})
	}
	// The go-sdk client is refused without a token, too.
	if _, err := d.MCP(t, ctx, "", nil, nil); err == nil {
		t.Fatal("MCP client connected without a token")
	}
	// A revoked token stops working at once.
	var lst daemon.TokensListResult
	d.Call(t, "tokens.list", nil, &lst)
	d.Call(t, "tokens.revoke", map[string]string{"id": lst.Tokens[0].ID}, nil)
	if got := post(auth, ""); got != 401 {
		t.Fatalf("revoked token: %d", got)
	}
}

func TestGenBAndFailedInitialize(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)

	// An extension that refuses torii/tools/list is never registered.
	bad := fakeProvider()
	bad.FailList = true
	d.Extension(t, ctx, bad, genA())
	if _, err := bad.WaitFor(browserlink.MethodList, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	var lst daemon.ToolsListResult
	d.Call(t, "tools.list", nil, &lst)
	if lst.ExtensionConnected || len(lst.Tools) != 0 {
		t.Fatalf("an extension that refused its catalogue was registered: %+v", lst)
	}
	if c := errCode(t, d.Exec(t, "cli", "echo", nil)); c != toolerr.ExtensionNotConnected {
		t.Fatalf("call with no registered server: %s", c)
	}

	// Gen B's declaration serves the same way.
	p := fakeProvider()
	ext := d.Extension(t, ctx, p, map[string]any{"type": "acp", "name": "torii", "serverId": serverID})
	d.WaitTools(t, 5)
	if r := d.Exec(t, "cli", "echo", json.RawMessage(`{}`)); r.IsError {
		t.Fatalf("Gen B call: %+v", r)
	}

	// A second session on the same link re-declares: last attach wins,
	// with the catalogue listed again.
	if _, err := p.WaitFor(browserlink.MethodList, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := ext.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{genA()}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitFor(browserlink.MethodList, 5*time.Second); err != nil {
		t.Fatalf("re-declared server not listed again: %v", err)
	}
	// The list answer reaches the daemon a moment after the fake saw the
	// request, and the swap fails a call that raced it (typed, "it
	// reconnected"); the daemon offers no event for the swap, so the call
	// is repeated, bounded, until the re-attached server answers it.
	for deadline := time.Now().Add(5 * time.Second); ; {
		r := d.Exec(t, "cli", "echo", json.RawMessage(`{"x":1}`))
		if !r.IsError && text(r) == `{"x":1}` {
			break
		}
		if !r.IsError || errCode(t, r) != toolerr.ExtensionNotConnected || !strings.Contains(text(r), "reconnected") || time.Now().After(deadline) {
			t.Fatalf("call after re-attach: %+v", r)
		}
	}
}

// torii/tools/changed from the paired extension: the daemon lists the
// catalogue again and serves the new one.
func TestCatalogueChanged(t *testing.T) {
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	p := fakeProvider()
	ext := d.Extension(t, ctx, p, genA())
	d.WaitTools(t, 5)
	if _, err := p.WaitFor(browserlink.MethodList, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	p.SetTools(append(slices.Clone(p.Tools), map[string]any{"name": "more", "description": "New.", "inputSchema": browserlinktest.Schema(nil)}))
	if err := ext.Notify(ctx, browserlink.MethodChanged, struct{}{}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.WaitFor(browserlink.MethodList, 5*time.Second); err != nil {
		t.Fatalf("the catalogue was not listed again: %v", err)
	}
	lst := d.WaitTools(t, 6)
	if !slices.ContainsFunc(lst.Tools, func(tool *mcp.Tool) bool { return tool.Name == "more" }) {
		t.Fatalf("the new tool is not served: %+v", lst.Tools)
	}
}

func must(e browserlinktest.Event, err error) browserlinktest.Event {
	if err != nil {
		panic(err)
	}
	return e
}

// A hello the daemon cannot use loses nothing: params of the wrong types are ignored (the
// connection is an agent session of its own, labelled "mcp"), and a timeoutMs below zero or past
// the default leaves the default deadline.
func TestRelayHelloBadParams(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	d.Extension(t, ctx, fakeProvider(), genA())
	d.WaitTools(t, 5)
	c, err := control.DialSocket(ctx, d.Paths.MCPSocket())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write([]byte(`{"jsonrpc":"2.0","method":"torii/relay","params":{"sessionLabel":7,"shared":"yes","timeoutMs":"soon"}}` + "\n")); err != nil {
		t.Fatal(err)
	}
	bad, err := mcp.NewClient(&mcp.Implementation{Name: "bad-hello"}, nil).Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bad.Close()
	if r, err := bad.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil || r.IsError {
		t.Fatalf("echo after a malformed hello: %v %+v", err, r)
	}
	found := false
	for _, s := range status(t, d).Sessions {
		found = found || (s.Label == "mcp" && s.Kind == "stdio" && s.Calls == 1)
	}
	if !found {
		t.Fatalf("no stdio session labelled mcp: %+v", status(t, d).Sessions)
	}
	for _, ms := range []int64{-5, 1 << 40} {
		r := d.Relay(t, ctx, mcpserver.RelayHelloParams{SessionLabel: "t", Shared: true, TimeoutMs: ms})
		if res, err := r.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}}); err != nil || res.IsError {
			t.Fatalf("timeoutMs %d: %v %+v", ms, err, res)
		}
	}
}
