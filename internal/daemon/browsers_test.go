package daemon_test

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

// browserProvider is a fake extension whose echo answers with its own tag,
// so a test sees which browser a call reached; slow waits until cancelled.
func browserProvider(tag string) *browserlinktest.Provider {
	tools := []map[string]any{
		{"name": "echo", "description": "Echo.", "inputSchema": browserlinktest.Schema(nil)},
		{"name": "slow", "description": "Wait until cancelled.", "inputSchema": browserlinktest.Schema(nil)},
	}
	return browserlinktest.New(serverID, tools, func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		if name == "slow" {
			<-ctx.Done()
			return browserlinktest.ErrorResult("cancelled", "cancelled", "The call was cancelled."), nil
		}
		return browserlinktest.TextResult("in " + tag), nil
	})
}

func daemonStatus(t *testing.T, d *daemontest.Daemon) daemon.StatusResult {
	t.Helper()
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	return st
}

// waitBrowsers waits until status shows exactly the serving browsers named.
func waitBrowsers(t *testing.T, d *daemontest.Daemon, names ...string) daemon.StatusResult {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := daemonStatus(t, d)
		var serving []string
		for _, b := range st.Browsers {
			if b.Serving {
				serving = append(serving, b.Name)
			}
		}
		if strings.Join(serving, "|") == strings.Join(names, "|") {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed serving browsers %q: %+v", names, st.Browsers)
		}
		time.Sleep(5 * time.Millisecond) // status offers no event: polled, bounded
	}
}

// mcpTo opens an /mcp session naming browser in the query (or none).
func mcpTo(t *testing.T, ctx context.Context, d *daemontest.Daemon, token, browser string) *mcp.ClientSession {
	t.Helper()
	endpoint := d.MCPURL
	if browser != "" {
		endpoint += "?browser=" + url.QueryEscape(browser)
	}
	s, err := d.MCPAt(t, ctx, endpoint, token, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func call(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string) *mcp.CallToolResult {
	t.Helper()
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return r
}

func allText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// twoBrowsers pairs two fake browsers that both ask for the same name.
func twoBrowsers(t *testing.T, ctx context.Context, d *daemontest.Daemon) (a, b *linktest.Client, nameA, nameB string) {
	t.Helper()
	a = d.ExtensionNamed(t, ctx, "Chromium on host", browserProvider("A"), genA())
	waitBrowsers(t, d, "Chromium on host")
	b = d.ExtensionNamed(t, ctx, "Chromium on host", browserProvider("B"), genA())
	// The second is told apart by a suffix; both serve, B (newest) first.
	waitBrowsers(t, d, "Chromium on host (2)", "Chromium on host")
	return a, b, "Chromium on host", "Chromium on host (2)"
}

// Two paired browsers connected at once both serve tools; a default session
// acts in the most recently used one, a named one in the one it names; when
// the default session's browser goes mid-call the call fails naming it, at
// once, and the next goes to the other with a notice; status tells the
// truth at every step.
func TestTwoBrowsersServeAndFailOver(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	_, extB, nameA, nameB := twoBrowsers(t, ctx, d)

	var devs daemon.DevicesListResult
	d.Call(t, "devices.list", nil, &devs)
	if len(devs.Devices) != 2 || devs.Devices[0].Name == devs.Devices[1].Name {
		t.Fatalf("two browsers asking for one name must get distinct names: %+v", devs.Devices)
	}

	tok := d.Token(t, "agents")
	def := mcpTo(t, ctx, d, tok, "")
	named := mcpTo(t, ctx, d, tok, nameA)
	if got := allText(call(t, ctx, def, "echo")); !strings.Contains(got, "in B") {
		t.Fatalf("default session must act in the most recently connected browser B: %q", got)
	}
	if got := allText(call(t, ctx, named, "echo")); !strings.Contains(got, "in A") {
		t.Fatalf("session naming %q must act in it: %q", nameA, got)
	}
	// Status says which browser serves which session.
	st := waitBrowsers(t, d, nameA, nameB) // A was used last now
	for _, b := range st.Browsers {
		if len(b.Sessions) != 1 {
			t.Fatalf("each browser serves one session: %+v", st.Browsers)
		}
		want := map[string]string{nameA: "named", nameB: "default"}[b.Name]
		if string(b.Sessions[0].Binding) != want {
			t.Fatalf("browser %q: binding %q, want %q", b.Name, b.Sessions[0].Binding, want)
		}
	}

	// B goes while a call of the default session runs there.
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- call(t, ctx, def, "slow") }()
	waitCalls(t, d, "slow", 1)
	extB.Close()
	select {
	case r := <-done:
		if errCode(t, r) != toolerr.ExtensionNotConnected || !strings.Contains(allText(r), nameB) {
			t.Fatalf("mid-call disconnect must fail naming %q: %q", nameB, allText(r))
		}
	case <-time.After(3 * time.Second):
		t.Fatal("the call in the browser that went hangs")
	}
	st = waitBrowsers(t, d, nameA)
	if !st.ExtensionConnected {
		t.Fatal("A is still connected")
	}
	// The next call goes to A and says so; the one after carries no notice.
	r := call(t, ctx, def, "echo")
	if got := allText(r); !strings.Contains(got, "in A") || !strings.Contains(got, `Now acting in browser "`+nameA+`": "`+nameB+`" disconnected`) {
		t.Fatalf("failover result: %q", got)
	}
	if m, _ := r.Meta["torii"].(map[string]any); m == nil || m["browserChanged"] == nil {
		t.Fatalf("failover notice must be in _meta.torii.browserChanged: %+v", r.Meta)
	}
	if got := allText(call(t, ctx, def, "echo")); strings.Contains(got, "Now acting") {
		t.Fatalf("the notice is given once: %q", got)
	}

	// The last browser goes: status says so at once, calls fail typed.
	d.Call(t, "devices.list", nil, &devs)
	for _, dv := range devs.Devices {
		if dv.Name == nameA {
			var rv daemon.DevicesRevokeResult
			d.Call(t, "devices.revoke", daemon.DevicesRevokeParams{DeviceID: dv.DeviceID}, &rv)
		}
	}
	st = waitBrowsers(t, d)
	if st.ExtensionConnected {
		t.Fatalf("no browser is connected, status says otherwise: %+v", st)
	}
	r = call(t, ctx, named, "echo")
	if errCode(t, r) != toolerr.ExtensionNotConnected || !strings.Contains(allText(r), "was revoked") {
		t.Fatalf("a session whose browser was revoked: %q", allText(r))
	}
}

// waitCalls waits until n calls of tool are running in some browser.
func waitCalls(t *testing.T, d *daemontest.Daemon, tool string, n int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := daemonStatus(t, d)
		if st.Broker.InFlight >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never reached the browser", tool)
		}
		time.Sleep(2 * time.Millisecond) // status offers no event: polled, bounded
	}
}

// A session naming a browser that is not paired, or paired but not
// connected, gets a typed error listing the connected ones, never another
// browser; a default session whose browser was revoked moves on and says so.
func TestNamedBrowserErrorsAndRevokedFailover(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	_, extB, nameA, nameB := twoBrowsers(t, ctx, d)
	tok := d.Token(t, "agents")

	unknown := mcpTo(t, ctx, d, tok, "Firefox on Mars")
	r := call(t, ctx, unknown, "echo")
	if errCode(t, r) != toolerr.ExtensionNotConnected || !strings.Contains(allText(r), `no paired browser is named "Firefox on Mars"`) ||
		!strings.Contains(allText(r), `"`+nameA+`"`) || !strings.Contains(allText(r), `"`+nameB+`"`) {
		t.Fatalf("unknown --browser: %q", allText(r))
	}

	onB := mcpTo(t, ctx, d, tok, nameB)
	if got := allText(call(t, ctx, onB, "echo")); !strings.Contains(got, "in B") {
		t.Fatalf("named B: %q", got)
	}
	extB.Close()
	waitBrowsers(t, d, nameA)
	r = call(t, ctx, onB, "echo")
	if errCode(t, r) != toolerr.ExtensionNotConnected || !strings.Contains(allText(r), `browser "`+nameB+`"`) ||
		!strings.Contains(allText(r), `connected: "`+nameA+`"`) || strings.Contains(allText(r), "in A") {
		t.Fatalf("named browser disconnected must fail, listing the connected ones: %q", allText(r))
	}
	// Named by device ID works too, and a disconnected one from the start errors the same way.
	var devs daemon.DevicesListResult
	d.Call(t, "devices.list", nil, &devs)
	ids := map[string]string{}
	for _, dv := range devs.Devices {
		ids[dv.Name] = dv.DeviceID
	}
	late := mcpTo(t, ctx, d, tok, ids[nameB])
	if r := call(t, ctx, late, "echo"); errCode(t, r) != toolerr.ExtensionNotConnected || !strings.Contains(allText(r), "is not connected") {
		t.Fatalf("named by ID while disconnected: %q", allText(r))
	}

	// A third browser; a default session bound to it; it is revoked.
	d.ExtensionNamed(t, ctx, "Chrome (profile Work) on host", browserProvider("C"), genA())
	waitBrowsers(t, d, "Chrome (profile Work) on host", nameA)
	def := mcpTo(t, ctx, d, tok, "")
	if got := allText(call(t, ctx, def, "echo")); !strings.Contains(got, "in C") {
		t.Fatalf("default goes to the newest: %q", got)
	}
	d.Call(t, "devices.list", nil, &devs)
	for _, dv := range devs.Devices {
		if dv.Name == "Chrome (profile Work) on host" {
			d.Call(t, "devices.revoke", daemon.DevicesRevokeParams{DeviceID: dv.DeviceID}, nil)
		}
	}
	if got := allText(call(t, ctx, def, "echo")); !strings.Contains(got, "in A") || !strings.Contains(got, `"Chrome (profile Work) on host" was revoked`) {
		t.Fatalf("revoked browser's default session must move with a notice: %q", got)
	}
}

// Renaming a device: distinct names only, by ID or current name, and the
// new name is what --browser and status use.
func TestDeviceRename(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	extA, _, nameA, nameB := twoBrowsers(t, ctx, d)
	// The popup renames its own device over the link; a taken name is refused there too.
	var self struct {
		Name string `json:"name"`
	}
	if err := extA.Call(ctx, daemon.DeviceRename, map[string]string{"name": nameB}, &self); err == nil || !strings.Contains(err.Error(), "already named") {
		t.Fatalf("self-rename to a taken name: %v", err)
	}
	if err := extA.Call(ctx, daemon.DeviceRename, map[string]string{"name": "Personal"}, &self); err != nil || self.Name != "Personal" {
		t.Fatalf("self-rename: %v %+v", err, self)
	}
	waitBrowsers(t, d, nameB, "Personal")
	nameA = "Personal"
	err := d.Control.Call(ctx, "devices.rename", daemon.DevicesRenameParams{Device: nameB, Name: strings.ToUpper(nameA)}, nil)
	if re, ok := err.(*wire.Error); !ok || re.Code != wire.CodeInvalidParams || !strings.Contains(re.Message, "already named") {
		t.Fatalf("rename to a taken name: %v", err)
	}
	if err := d.Control.Call(ctx, "devices.rename", daemon.DevicesRenameParams{Device: "nope", Name: "x"}, nil); err == nil || !strings.Contains(err.Error(), "torii devices") {
		t.Fatalf("rename of an unknown device: %v", err)
	}
	var got daemon.DeviceInfo
	d.Call(t, "devices.rename", daemon.DevicesRenameParams{Device: nameB, Name: "Work browser"}, &got)
	if got.Name != "Work browser" || !got.Connected {
		t.Fatalf("renamed: %+v", got)
	}
	waitBrowsers(t, d, "Work browser", nameA)
	s := mcpTo(t, ctx, d, d.Token(t, "a"), "work browser")
	if txt := allText(call(t, ctx, s, "echo")); !strings.Contains(txt, "in B") {
		t.Fatalf("--browser by the new name (any case): %q", txt)
	}
}

// `torii launch` names the browser it starts: the device paired with that
// one-time secret takes the name, made distinct like any other.
func TestLaunchOTPNamesTheDevice(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	for range 2 {
		var otp daemon.LaunchOTPResult
		d.Call(t, "launch.otp", daemon.LaunchOTPParams{DeviceName: "Chromium (profile work) on host"}, &otp)
		dev, err := linktest.NewDevice("Chrome on Linux")
		if err != nil {
			t.Fatal(err)
		}
		c, err := linktest.PairAndConnect(ctx, d.URL, dev, linktest.PairOptions{OTP: otp.OTP}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
	}
	var devs daemon.DevicesListResult
	d.Call(t, "devices.list", nil, &devs)
	if len(devs.Devices) != 2 || devs.Devices[0].Name != "Chromium (profile work) on host" || devs.Devices[1].Name != "Chromium (profile work) on host (2)" {
		t.Fatalf("launch-named devices: %+v", devs.Devices)
	}
	if err := d.Control.Call(ctx, "launch.otp", daemon.LaunchOTPParams{DeviceName: "bad\x00name"}, nil); err == nil {
		t.Fatal("a control character in deviceName must be refused")
	}
}
