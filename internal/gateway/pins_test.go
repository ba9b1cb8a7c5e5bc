package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/cli"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/doctor"
	"github.com/torii-browser/torii/internal/gateway"
)

// A server that namespaces its own tools (katashiro.snapshot), pinned as
// docs/clients.md shows: a bare pin and a prefixed one both expose the
// tool under the name the server gave it, a pin that matches nothing is
// reported with the real names by `torii servers` and `torii doctor`.
//
// Not parallel: `torii servers` finds the daemon through the environment.
func TestNamespacedPins(t *testing.T) {
	policy := config.MCPServerPolicy{Allow: []string{"katashiro"},
		Pins: map[string][]string{"katashiro": {"snapshot", "katashiro.click", "read_page"}, "ghost": {"x"}}}
	d := daemontest.Start(t, func(o *daemon.Options) {
		o.Config.Agents = []config.Agent{{Name: "scripted", Command: agentBin}}
		o.Config.MCPServers = policy
	})
	// doctor reads config.json; write the same policy there.
	writeConfig(t, d, policy)
	tok := d.Token(t, "katashiro")
	c := dial(t, d.URL, tok, false)
	p := newProvider(&fakeServer{name: "katashiro", id: "id-k", tools: []map[string]any{
		{"name": "katashiro.snapshot", "inputSchema": schema()}, {"name": "katashiro.click", "inputSchema": schema()},
		{"name": "katashiro.navigate", "inputSchema": schema()}}})
	c.handle(p.handle)
	initialize(t, c)
	sid := newSession(t, c, []any{map[string]any{"type": "acp", "name": "katashiro", "id": "id-k"},
		map[string]any{"type": "acp", "name": "gamma", "id": "id-g"}}, nil)
	waitServers(t, d, sid, "katashiro")

	mustPrompt(t, c, sid, "/tools", "end_turn")
	c.waitText(sid, "tools: katashiro.click,katashiro.snapshot")
	mustPrompt(t, c, sid, `/tool katashiro.snapshot {"text":"page"}`, "end_turn")
	c.waitText(sid, "tool result: katashiro katashiro.snapshot: page")
	// The server is called by its own name for the tool.
	p.waitEvent(t, 5*time.Second, func(e provEvent) bool { return e.inner == "tools/call" && e.tool == "katashiro.snapshot" })
	mustPrompt(t, c, sid, `/tool katashiro.navigate {"text":"x"}`, "end_turn")
	c.waitText(sid, "tool failed: tool_not_pinned:")

	// gamma's refusal runs beside katashiro's connection: wait for it to be noted.
	waitNoted(t, d, "gamma")
	byName := map[string]gateway.ServerInfo{}
	var r daemon.GatewayServersResult
	d.Call(t, "gateway.servers", nil, &r)
	for _, s := range r.Servers {
		byName[s.Name] = s
	}
	k := byName["katashiro"]
	pins := map[string]string{}
	for _, tl := range k.Tools {
		pins[tl.Name] = tl.Pin
	}
	if !k.Allowed || !k.Declared || k.Sessions != 1 || pins["katashiro.snapshot"] != "snapshot" ||
		pins["katashiro.click"] != "katashiro.click" || pins["katashiro.navigate"] != "" || len(pins) != 3 ||
		!slices.Equal(k.UnmatchedPins, []string{"read_page"}) {
		t.Fatalf("katashiro: %+v", k)
	}
	if g := byName["ghost"]; g.Allowed || len(g.Warnings) != 1 || !strings.Contains(g.Warnings[0], "not in mcpServers.allow") {
		t.Fatalf("ghost: %+v", g)
	}

	// torii servers, over the control socket, as a person runs it.
	t.Setenv("TORII_STATE_DIR", d.Paths.StateDir)
	t.Setenv("TORII_CONFIG_DIR", d.Paths.ConfigDir)
	var out, errb bytes.Buffer
	if code := cli.Main([]string{"servers"}, cli.Stdio{Out: &out, Err: &errb}); code != 0 {
		t.Fatalf("torii servers: exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"katashiro  yes", "katashiro.snapshot", "snapshot\n", "katashiro.navigate",
		"not pinned", `warning: pin "read_page" of MCP server "katashiro" matches none of its tools (its tools are katashiro.snapshot, katashiro.click, katashiro.navigate)`,
		`pins for "ghost"`, "gamma      no       0         (declared, not connected: not in mcpServers.allow)",
		"a client declared gamma, but it is not in mcpServers.allow"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("torii servers lacks %q:\n%s", want, out.String())
		}
	}

	// torii doctor: the same warning, with the fix.
	var res *doctor.Result
	for _, x := range doctor.Run(context.Background(), doctor.Options{Paths: d.Paths}) {
		if x.Name == "MCP server pins" {
			res = &x
		}
	}
	if res == nil || res.Status != doctor.Warn || !strings.Contains(res.Detail, `pin "read_page"`) ||
		!strings.Contains(res.Detail, "katashiro.navigate") || !strings.Contains(res.Fix, "torii servers") {
		t.Fatalf("doctor: %+v", res)
	}
}

func writeConfig(t *testing.T, d *daemontest.Daemon, p config.MCPServerPolicy) {
	t.Helper()
	if err := os.MkdirAll(d.Paths.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]any{"mcpServers": p})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(d.Paths.ConfigDir, "config.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
}
