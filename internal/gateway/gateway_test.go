package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/agents"
	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/gateway"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/wire"
)

var agentBin string

// TestMain builds the scripted agent once.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "torii-agent")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "torii-test-agent")
	out, err := exec.Command("go", "build", "-o", agentBin, "github.com/torii-browser/torii/cmd/torii-test-agent").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build scripted agent: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func start(t *testing.T) (*daemontest.Daemon, string) {
	t.Helper()
	d := daemontest.Start(t, func(o *daemon.Options) {
		o.Config.Agents = []config.Agent{{Name: "scripted", Command: agentBin}, {Name: "second", Command: agentBin}}
		o.Config.DefaultAgent = "scripted"
		o.Config.AgentIdleTimeoutSec = 1
		o.Config.MCPServers = config.MCPServerPolicy{Allow: []string{"alpha", "beta", "broken"},
			Pins: map[string][]string{"alpha": {"echo"}, "beta": {"echo", "add"}, "broken": {"echo"}}}
	})
	return d, d.Token(t, "katashiro")
}

func initialize(t *testing.T, c *fc) {
	t.Helper()
	var ini struct {
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	}
	c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, &ini)
	if !ini.AgentCapabilities.LoadSession {
		t.Fatal("initialize: loadSession should be true")
	}
}

func newSession(t *testing.T, c *fc, servers []any, meta map[string]any) string {
	t.Helper()
	if servers == nil {
		servers = []any{}
	}
	p := map[string]any{"cwd": "/", "mcpServers": servers}
	if meta != nil {
		p["_meta"] = map[string]any{"torii": meta}
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	c.mustCall("session/new", p, &res)
	if res.SessionID == "" {
		t.Fatal("session/new: no sessionId")
	}
	return res.SessionID
}

func prompt(c *fc, sid, text string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res struct {
		StopReason string `json:"stopReason"`
	}
	err := c.call(ctx, "session/prompt", map[string]any{"sessionId": sid,
		"prompt": []any{map[string]any{"type": "text", "text": text}}}, &res)
	return res.StopReason, err
}

func mustPrompt(t *testing.T, c *fc, sid, text, want string) {
	t.Helper()
	got, err := prompt(c, sid, text)
	if err != nil || got != want {
		t.Fatalf("prompt %q: stopReason %q err %v, want %q", text, got, err, want)
	}
}

func sessions(t *testing.T, d *daemontest.Daemon) map[string]daemonSession {
	var r struct {
		Sessions []daemonSession `json:"sessions"`
	}
	d.Call(t, "gateway.sessions", nil, &r)
	out := map[string]daemonSession{}
	for _, s := range r.Sessions {
		out[s.SessionID] = s
	}
	return out
}

type daemonSession struct {
	SessionID    string       `json:"sessionId"`
	ConnectionID string       `json:"connectionId"`
	Status       string       `json:"status"`
	MCPServers   []string     `json:"mcpServers"`
	Buffer       agents.Stats `json:"buffer"`
}

func rpcCode(err error) int {
	var e *wire.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// A foreign client with a token: initialize, session/new, prompt, streamed
// chunks, end_turn — over both ways of presenting the token.
func TestForeignClientChat(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	for _, sub := range []bool{false, true} {
		c := dial(t, d.URL, tok, sub)
		if sub && c.resp.Header.Get("Sec-WebSocket-Protocol") != "acp.v1" {
			t.Fatalf("subprotocol echo: %q", c.resp.Header.Get("Sec-WebSocket-Protocol"))
		}
		initialize(t, c)
		var ag struct {
			Agents []struct {
				Name      string `json:"name"`
				Available bool   `json:"available"`
			} `json:"agents"`
			DefaultAgent string `json:"defaultAgent"`
		}
		c.mustCall("torii/agents", map[string]any{}, &ag)
		if ag.DefaultAgent != "scripted" || len(ag.Agents) != 2 || !ag.Agents[0].Available {
			t.Fatalf("torii/agents: %+v", ag)
		}
		c.mustCall("openab/ping", nil, nil)
		sid := newSession(t, c, nil, nil)
		mustPrompt(t, c, sid, "hello there", "end_turn")
		want := "**Hello** from the scripted agent.\n\nYou said: `hello there`"
		if got := c.text(sid); got != want {
			t.Fatalf("reply %q, want %q", got, want)
		}
		k := c.kinds(sid)
		if k["agent_message_chunk"] < 1 || k["plan"] != 1 {
			t.Fatalf("updates: %v", k)
		}
		// An unknown agent is refused.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{},
			"_meta": map[string]any{"torii": map[string]any{"agent": "nobody"}}}, nil)
		cancel()
		if rpcCode(err) != wire.CodeInvalidParams {
			t.Fatalf("unknown agent: %v", err)
		}
	}
}

// session/cancel mid-turn ends the prompt cancelled; a pending permission
// request is answered cancelled.
func TestCancel(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	sid := newSession(t, c, nil, nil)

	res := make(chan string, 1)
	go func() {
		r, err := prompt(c, sid, "/slow")
		if err != nil {
			r = err.Error()
		}
		res <- r
	}()
	c.waitText(sid, "slow 1 ")
	c.notify("session/cancel", map[string]string{"sessionId": sid})
	select {
	case r := <-res:
		if r != "cancelled" {
			t.Fatalf("stopReason %q", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("prompt did not end after session/cancel")
	}

	// The client never answers the permission request; cancel answers it.
	asked := make(chan struct{}, 1)
	c.handle(func(method string, _ json.RawMessage) (any, error) {
		if method == "session/request_permission" {
			asked <- struct{}{}
			select {} // a person who never decides
		}
		return nil, wire.Errorf(wire.CodeMethodNotFound, "no")
	})
	go func() {
		r, err := prompt(c, sid, "/permission")
		if err != nil {
			r = err.Error()
		}
		res <- r
	}()
	select {
	case <-asked:
	case <-time.After(10 * time.Second):
		t.Fatal("permission was never relayed")
	}
	c.notify("session/cancel", map[string]string{"sessionId": sid})
	select {
	case r := <-res:
		if r != "cancelled" {
			t.Fatalf("stopReason %q", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("prompt with a pending permission did not end after session/cancel")
	}
	// The session keeps working.
	mustPrompt(t, c, sid, "again", "end_turn")
}

// Permission relay: approve lets the agent proceed; -32601 makes the
// daemon deny and the turn goes on.
func TestPermissionRelay(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	sid := newSession(t, c, nil, nil)
	c.handle(func(method string, params json.RawMessage) (any, error) {
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(params, &p)
		if method != "session/request_permission" || p.SessionID != sid {
			return nil, fmt.Errorf("unexpected %s %s", method, params)
		}
		return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": "allow"}}, nil
	})
	mustPrompt(t, c, sid, "/permission", "end_turn")
	if !strings.Contains(c.text(sid), "permission granted") {
		t.Fatalf("reply %q", c.text(sid))
	}
	if k := c.kinds(sid); k["tool_call"] != 1 || k["tool_call_update"] != 1 {
		t.Fatalf("tool call updates: %v", k)
	}
	c.handle(func(string, json.RawMessage) (any, error) {
		return nil, wire.Errorf(wire.CodeMethodNotFound, "method not found")
	})
	mustPrompt(t, c, sid, "/permission", "end_turn")
	if !strings.Contains(c.text(sid), "permission denied") {
		t.Fatalf("reply %q", c.text(sid))
	}
}

func foreignServers() (*provider, []any) {
	p := newProvider(
		&fakeServer{name: "alpha", id: "id-alpha", tools: []map[string]any{
			{"name": "echo", "inputSchema": schema()}, {"name": "secret", "inputSchema": schema()}}},
		&fakeServer{name: "beta", id: "id-beta", tools: []map[string]any{
			{"name": "echo", "inputSchema": schema()}, {"name": "add", "inputSchema": schema()}}},
		&fakeServer{name: "broken", id: "id-broken", failInitialize: true, tools: []map[string]any{
			{"name": "echo", "inputSchema": schema()}}},
		&fakeServer{name: "gamma", id: "id-gamma", never: true, tools: []map[string]any{{"name": "echo", "inputSchema": schema()}}},
	)
	decl := []any{
		map[string]any{"type": "acp", "name": "alpha", "id": "id-alpha"},       // Gen A
		map[string]any{"type": "acp", "name": "beta", "serverId": "id-beta"},   // Gen B
		map[string]any{"type": "acp", "name": "broken", "id": "id-broken"},     // fails initialize
		map[string]any{"type": "acp", "name": "gamma", "serverId": "id-gamma"}, // not allowed
	}
	return p, decl
}

func waitServers(t *testing.T, d *daemontest.Daemon, sid string, want ...string) {
	t.Helper()
	var got []string
	waitState(t, fmt.Sprintf("registered servers %v", want), func() bool {
		got = slices.Clone(sessions(t, d)[sid].MCPServers)
		slices.Sort(got)
		return slices.Equal(got, want)
	})
}

// waitNoted waits until `torii servers` knows the declared server name
// (noted once the daemon decided whether to connect it).
func waitNoted(t *testing.T, d *daemontest.Daemon, name string) gateway.ServerInfo {
	t.Helper()
	var got gateway.ServerInfo
	waitState(t, "server "+name+" noted", func() bool {
		var r daemon.GatewayServersResult
		d.Call(t, "gateway.servers", nil, &r)
		for _, s := range r.Servers {
			if s.Name == name && s.Declared {
				got = s
				return true
			}
		}
		return false
	})
	return got
}

// The client's own MCP servers: allowlist, pins, Gen A and B, a failing
// initialize never registered, calls routed back over mcp/message.
func TestForeignMCPServers(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c := dial(t, d.URL, tok, false)
	p, decl := foreignServers()
	c.handle(p.handle)
	initialize(t, c)
	sid := newSession(t, c, decl, nil)
	waitServers(t, d, sid, "alpha", "beta")
	// broken answered initialize with an error and was let go, never
	// registered; gamma (not allowed) was noted and never asked.
	p.waitEvent(t, 10*time.Second, func(e provEvent) bool { return e.method == "mcp/disconnect" && e.server == "broken" })
	waitServers(t, d, sid, "alpha", "beta")
	if g := waitNoted(t, d, "gamma"); g.Allowed {
		t.Fatalf("gamma: %+v", g)
	}
	p.untouched(t)

	mustPrompt(t, c, sid, "/tools", "end_turn")
	c.waitText(sid, "tools: alpha.echo,beta.add,beta.echo")
	if strings.Contains(c.text(sid), "secret") || strings.Contains(c.text(sid), "broken") {
		t.Fatalf("unpinned or unregistered tools listed: %q", c.text(sid))
	}
	mustPrompt(t, c, sid, `/tool alpha.echo {"text":"hi"}`, "end_turn")
	c.waitText(sid, "tool result: alpha echo: hi")
	mustPrompt(t, c, sid, `/tool beta.add {"text":"2"}`, "end_turn")
	c.waitText(sid, "tool result: beta add: 2")
	// The provider saw the pinned calls, routed back over mcp/message.
	p.waitEvent(t, 5*time.Second, func(e provEvent) bool { return e.inner == "tools/call" && e.server == "alpha" && e.tool == "echo" })
	p.waitEvent(t, 5*time.Second, func(e provEvent) bool { return e.inner == "tools/call" && e.server == "beta" && e.tool == "add" })
	// A tool outside the pins is a pin refusal, and is never sent: the
	// next pinned call reaches the server with nothing before it.
	mustPrompt(t, c, sid, `/tool alpha.secret {"text":"x"}`, "end_turn")
	c.waitText(sid, "tool failed: tool_not_pinned:")
	mustPrompt(t, c, sid, `/tool alpha.echo {"text":"after"}`, "end_turn")
	p.waitEventBefore(t, 5*time.Second,
		func(e provEvent) bool { return e.inner == "tools/call" && e.server == "alpha" && e.tool == "echo" },
		func(e provEvent) bool { return e.tool == "secret" })
	// A name the server does not have is unknown, not a missing pin.
	mustPrompt(t, c, sid, `/tool alpha.nosuch {"text":"x"}`, "end_turn")
	c.waitText(sid, "tool failed: tool_not_found: MCP server alpha has no tool alpha.nosuch")

	// They bypass the broker, and are audited all the same: under the full
	// name, the agent session's label, the refusal with its code.
	var page daemon.AuditQueryResult
	d.Call(t, "audit.query", daemon.AuditQueryParams{Session: "agent:scripted:" + sid[:8]}, &page)
	got := map[string]string{}
	for _, r := range page.Records {
		got[r.Tool] = r.Outcome + "/" + r.Code
	}
	want := map[string]string{"alpha.echo": "ok/", "beta.add": "ok/", "alpha.secret": "error/tool_not_pinned", "alpha.nosuch": "error/tool_not_found"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("audit of declared servers' tools: %v, want %v", got, want)
	}
}

// Last attach wins: a resume on a new socket moves the session and its
// tunnels; the replaced connection gets mcp/disconnect; a rejected resume
// opens no tunnel; session/load replays the history.
func TestResumeLastAttachWins(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c1 := dial(t, d.URL, tok, false)
	p1, _ := foreignServers()
	c1.handle(p1.handle)
	initialize(t, c1)
	alpha := []any{map[string]any{"type": "acp", "name": "alpha", "id": "id-alpha"}}
	sid := newSession(t, c1, alpha, nil)
	first := p1.waitEvent(t, 10*time.Second, func(e provEvent) bool { return e.method == "mcp/connect" && e.server == "alpha" })
	waitServers(t, d, sid, "alpha")
	mustPrompt(t, c1, sid, "first", "end_turn")
	attached := sessions(t, d)[sid].ConnectionID

	// A rejected resume (unknown session) opens no tunnel.
	c3 := dial(t, d.URL, tok, false)
	p3, _ := foreignServers()
	c3.handle(p3.handle)
	initialize(t, c3)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := c3.call(ctx, "session/resume", map[string]any{"sessionId": "no-such-session", "cwd": "/", "mcpServers": alpha}, nil)
	if rpcCode(err) != gateway_CodeUnknownSession {
		t.Fatalf("resume of an unknown session: %v", err)
	}
	// Nor does a resume with bad declarations of a real session.
	err = c3.call(ctx, "session/resume", map[string]any{"sessionId": sid, "mcpServers": []any{
		map[string]any{"type": "acp", "name": "alpha"}}}, nil)
	if rpcCode(err) != wire.CodeInvalidParams {
		t.Fatalf("resume with a bad declaration: %v", err)
	}
	// Tunnels open only on attach, and an answered resume has attached or
	// not: the session is still c1's.
	if got := sessions(t, d)[sid].ConnectionID; got != attached || attached == "" {
		t.Fatalf("after rejected resumes the session is attached to %q, want %q", got, attached)
	}
	waitServers(t, d, sid, "alpha")

	// The real resume on a new socket.
	c2 := dial(t, d.URL, tok, true)
	p2, _ := foreignServers()
	c2.handle(p2.handle)
	initialize(t, c2)
	c2.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": "/", "mcpServers": alpha}, nil)
	gone := p1.waitEvent(t, 10*time.Second, func(e provEvent) bool { return e.method == "mcp/disconnect" })
	if gone.connID != first.connID {
		t.Fatalf("mcp/disconnect named %q, want the replaced %q", gone.connID, first.connID)
	}
	p2.waitEvent(t, 10*time.Second, func(e provEvent) bool { return e.method == "mcp/connect" && e.server == "alpha" })
	waitServers(t, d, sid, "alpha")
	mustPrompt(t, c2, sid, `/tool alpha.echo {"text":"via c2"}`, "end_turn")
	c2.waitText(sid, "tool result: alpha echo: via c2")
	// The replaced connection can no longer prompt.
	if _, err := prompt(c1, sid, "late"); rpcCode(err) != wire.CodeInvalidRequest {
		t.Fatalf("prompt from the replaced connection: %v", err)
	}

	// session/load replays the stored updates first.
	c4 := dial(t, d.URL, tok, false)
	initialize(t, c4)
	c4.mustCall("session/load", map[string]any{"sessionId": sid, "cwd": "/", "mcpServers": []any{}}, nil)
	if got := c4.text(sid); !strings.Contains(got, "You said: `first`") || !strings.Contains(got, "via c2") {
		t.Fatalf("replayed history: %q", got)
	}
}

const gateway_CodeUnknownSession = -32002

// An agent that never answers is reported not_responding; other sessions
// keep working.
func TestHungAgent(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	hung := newSession(t, c, nil, nil)
	other := newSession(t, c, nil, map[string]any{"agent": "second"})
	res := make(chan string, 1)
	go func() { r, _ := prompt(c, hung, "/hang"); res <- r }()
	st := c.waitStatus(hung, "not_responding")
	if st.Agent != "scripted" || st.Detail == "" {
		t.Fatalf("status %+v", st)
	}
	mustPrompt(t, c, other, "still here?", "end_turn")
	if s := sessions(t, d)[hung].Status; s != "not_responding" {
		t.Fatalf("gateway.sessions status %q", s)
	}
	c.notify("session/cancel", map[string]string{"sessionId": hung})
	select {
	case r := <-res:
		if r != "cancelled" {
			t.Fatalf("stopReason %q", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("hung prompt did not end after cancel")
	}
}

// A flooding agent: bounded buffers, coalesced chunks, nothing lost for a
// client that keeps reading, and the other session unaffected.
func TestFlood(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	sid := newSession(t, c, nil, nil)
	other := newSession(t, c, nil, nil)
	const n = 20000
	done := make(chan error, 1)
	go func() {
		r, err := prompt(c, sid, fmt.Sprintf("/flood %d", n))
		if err == nil && r != "end_turn" {
			err = fmt.Errorf("stopReason %q", r)
		}
		done <- err
	}()
	mustPrompt(t, c, other, "meanwhile", "end_turn")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	text := c.text(sid)
	var want strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&want, "flood %06d\n", i)
	}
	want.WriteString("flood done")
	if text != want.String() {
		t.Fatalf("flood text: %d bytes, want %d", len(text), want.Len())
	}
	st := sessions(t, d)[sid].Buffer
	if st.Received != n+n/100+1 {
		t.Fatalf("received %d", st.Received)
	}
	if st.OutboxPeak > agents.OutboxMax || st.OutboxPeakBytes > agents.OutboxBytes || st.History > agents.HistoryMax ||
		st.HistoryBytes > agents.HistoryBytes {
		t.Fatalf("buffers over bounds: %+v", st)
	}
	k := c.kinds(sid)
	if got := k["agent_message_chunk"] + k["plan"]; int64(got)+st.Coalesced != st.Received || st.Dropped != 0 {
		t.Fatalf("frames %d + coalesced %d != received %d (dropped %d)", got, st.Coalesced, st.Received, st.Dropped)
	}
	t.Logf("flood: %d updates as %d frames (coalesced %d), outbox peak %d entries / %d bytes, history %d",
		st.Received, k["agent_message_chunk"]+k["plan"], st.Coalesced, st.OutboxPeak, st.OutboxPeakBytes, st.History)
}

// A prompt over 1 MiB gets -32600; the connection stays.
func TestPromptTooLarge(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	sid := newSession(t, c, nil, nil)
	_, err := prompt(c, sid, strings.Repeat("x", 1<<20+10))
	if rpcCode(err) != wire.CodeInvalidRequest {
		t.Fatalf("big prompt: %v", err)
	}
	mustPrompt(t, c, sid, "small", "end_turn")
}

// A crashed agent is reported; restart brings it back with its session.
func TestCrashRestart(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	sid := newSession(t, c, nil, nil)
	mustPrompt(t, c, sid, "/echo-session", "end_turn")
	before := c.text(sid)
	_, err := prompt(c, sid, "/crash")
	if err == nil {
		t.Fatal("a crashing prompt should fail")
	}
	// The word arrives before the failed prompt's answer, and nothing later
	// (the turn ending) says otherwise: a client showing the last word shows
	// crashed.
	if last := c.lastStatus(sid); last.Status != "crashed" {
		t.Fatalf("last status when the crashed prompt answered: %+v (all %+v) err %v", last, c.statuses, err)
	}
	st := c.waitStatus(sid, "crashed")
	if st.Detail == "" {
		t.Fatalf("crashed status without detail: %+v", st)
	}
	if _, err = prompt(c, sid, "hello"); err == nil || !strings.Contains(err.Error(), "restart") {
		t.Fatalf("prompt to a crashed agent: %v", err)
	}
	c.mustCall("torii/session/restart", map[string]string{"sessionId": sid}, nil)
	c.waitStatus(sid, "ready")
	mustPrompt(t, c, sid, "/echo-session", "end_turn")
	// session/load re-created the agent session under its old id.
	after := strings.TrimPrefix(c.text(sid), before+"about to crash")
	if !strings.Contains(after, strings.TrimSpace(before)) {
		t.Fatalf("agent session after restart: %q, before %q", after, before)
	}
	c.mustCall("torii/session/close", map[string]string{"sessionId": sid}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.call(ctx, "torii/session/restart", map[string]string{"sessionId": sid}, nil); rpcCode(err) != gateway_CodeUnknownSession {
		t.Fatalf("restart after close: %v", err)
	}
}

// fakeBrowser connects an extension serving these tools (snapshot read-only),
// each answering "browser <name> ok", and waits until the daemon serves them.
func fakeBrowser(t *testing.T, ctx context.Context, d *daemontest.Daemon, names ...string) *linktest.Client {
	t.Helper()
	var tools []map[string]any
	for _, n := range names {
		tl := map[string]any{"name": n, "inputSchema": browserlinktest.Schema(nil)}
		if n == "snapshot" {
			tl["annotations"] = map[string]any{"readOnlyHint": true}
		}
		tools = append(tools, tl)
	}
	ext := browserlinktest.New("ext-1", tools, func(_ context.Context, name string, _ json.RawMessage) (any, error) {
		return browserlinktest.TextResult("browser " + name + " ok"), nil
	})
	c := d.Extension(t, ctx, ext, map[string]any{"type": "acp", "name": "torii", "id": "ext-1"})
	// The extension's tools, whatever the broker adds of its own.
	waitState(t, "the extension's tools", func() bool {
		var r daemon.ToolsListResult
		d.Call(t, "tools.list", nil, &r)
		n := 0
		for _, tl := range r.Tools {
			if slices.Contains(names, tl.Name) {
				n++
			}
		}
		return r.ExtensionConnected && n == len(names)
	})
	return c
}

// The agent calls a browser tool through its per-session token on /mcp,
// within the session's browser access; after a restart the new token
// works.
func TestAgentBrowserTool(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	fakeBrowser(t, ctx, d, "snapshot", "click")

	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	sid := newSession(t, c, nil, map[string]any{"browserAccess": "read"})
	mustPrompt(t, c, sid, "/tools", "end_turn")
	c.waitText(sid, "tools: ")
	if txt := c.text(sid); !strings.Contains(txt, "click") || !strings.Contains(txt, "snapshot") {
		t.Fatalf("the agent's tools: %q", txt)
	}
	mustPrompt(t, c, sid, "/tool snapshot {}", "end_turn")
	c.waitText(sid, "tool result: browser snapshot ok")
	mustPrompt(t, c, sid, "/tool click {}", "end_turn")
	// What the agent reads names the true cause and the next step, not a pause.
	c.waitText(sid, "tool failed: tab_not_owned: this agent has read-only browser access and click may change the page; nothing was sent\nhint: Ask the person to widen this agent's browser access in the Torii side panel")
	if strings.Contains(c.text(sid), "paused") {
		t.Fatalf("a read-only refusal says paused: %q", c.text(sid))
	}
	c.mustCall("torii/session/set_access", map[string]string{"sessionId": sid, "browserAccess": "act"}, nil)
	mustPrompt(t, c, sid, "/tool click {}", "end_turn")
	c.waitText(sid, "tool result: browser click ok")
	c.mustCall("torii/session/restart", map[string]string{"sessionId": sid}, nil)
	mustPrompt(t, c, sid, `/tool snapshot {}`, "end_turn")
	if strings.Count(c.text(sid), "tool result: browser snapshot ok") != 2 {
		t.Fatalf("after restart: %q", c.text(sid))
	}
	c.mustCall("torii/session/set_access", map[string]string{"sessionId": sid, "browserAccess": "none"}, nil)
	mustPrompt(t, c, sid, "/tool snapshot {}", "end_turn")
	c.waitText(sid, "tool failed: tab_not_owned: this agent has no browser access")
	if strings.Contains(c.text(sid), "paused") {
		t.Fatalf("access none says paused: %q", c.text(sid))
	}

	// Every refusal is in the audit, as `torii audit` lists it: tool,
	// session, outcome, code.
	var page daemon.AuditQueryResult
	d.Call(t, "audit.query", daemon.AuditQueryParams{Session: "agent:scripted:" + sid[:8]}, &page)
	var got []string
	for _, r := range page.Records {
		got = append(got, r.Tool+" "+r.Outcome+"/"+r.Code)
	}
	slices.Reverse(got) // newest first
	want := []string{"snapshot ok/", "click error/tab_not_owned", "click ok/", "snapshot ok/", "snapshot error/tab_not_owned"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("audit of the agent's browser calls: %v, want %v", got, want)
	}
}

// A chat session's agent reads back what a tool saved for it (a PDF, a
// capture's export) as an MCP resource, as every other agent does; another
// chat's agent sees none of it (SECURITY I-66).
func TestChatSessionFiles(t *testing.T) {
	t.Parallel()
	d, tok := start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	extc := fakeBrowser(t, ctx, d, "snapshot")

	c := dial(t, d.URL, tok, false)
	initialize(t, c)
	sid := newSession(t, c, nil, map[string]any{"browserAccess": "read"})
	other := newSession(t, c, nil, map[string]any{"browserAccess": "read"})
	mustPrompt(t, c, sid, "/resources", "end_turn")
	c.waitText(sid, "resources: 0")
	// Its first call binds the session to the browser that files bytes for it.
	mustPrompt(t, c, sid, "/tool snapshot {}", "end_turn")
	c.waitText(sid, "tool result: browser snapshot ok")
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	bsid := ""
	for _, s := range st.Sessions {
		if s.Label == "agent:scripted:"+sid[:8] && s.Ended == nil {
			bsid = s.ID
		}
	}
	if bsid == "" {
		t.Fatalf("no broker session for the chat: %+v", st.Sessions)
	}
	var l struct {
		URI string `json:"uri"`
	}
	if err := extc.Call(ctx, daemon.FilesPut, map[string]any{"sessionId": bsid, "name": "notes", "mimeType": "text/plain", "text": "saved for the chat"}, &l); err != nil {
		t.Fatal(err)
	}
	mustPrompt(t, c, sid, "/resources", "end_turn")
	c.waitText(sid, "resources: 1\nresource notes.txt: saved for the chat")
	mustPrompt(t, c, other, "/resources", "end_turn")
	c.waitText(other, "resources: 0")
	if strings.Contains(c.text(other), "saved for the chat") {
		t.Fatalf("another chat read the file: %q", c.text(other))
	}
}
