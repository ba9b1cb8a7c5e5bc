package cli

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
)

func taggedExtension(tag string) *browserlinktest.Provider {
	tools := []map[string]any{{"name": "echo", "description": "Echo.", "inputSchema": browserlinktest.Schema(nil)}}
	return browserlinktest.New(fakeServerID, tools, func(context.Context, string, json.RawMessage) (any, error) {
		return browserlinktest.TextResult("in " + tag), nil
	})
}

// Two browsers that ask for the same name: status lists both as serving,
// with distinct names; `torii mcp --browser` refuses an unknown name at
// once, listing the paired ones, and acts in the one named (after a rename).
func TestMCPBrowserFlagAndStatus(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	decl := map[string]any{"type": "acp", "name": "torii", "id": fakeServerID}
	e.d.ExtensionNamed(t, ctx, "Chromium on host", taggedExtension("A"), decl)
	e.d.ExtensionNamed(t, ctx, "Chromium on host", taggedExtension("B"), decl)
	deadline := time.Now().Add(10 * time.Second)
	var out string
	for {
		r := e.run("", "status")
		out = r.stdout
		if strings.Contains(out, "browsers:    2 connected") || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // another process's status: polled, bounded
	}
	for _, want := range []string{"browsers:    2 connected, serving tools (2 paired)", `"Chromium on host"`, `"Chromium on host (2)"`, "(new sessions act here)"} {
		if !strings.Contains(out, want) {
			t.Fatalf("status lacks %q:\n%s", want, out)
		}
	}

	r := e.run("", "mcp", "--browser", "Safari")
	if r.code != 1 || !strings.Contains(r.stderr, `--browser "Safari": no paired browser has that name or ID; paired: "Chromium on host" (connected), "Chromium on host (2)" (connected)`) {
		t.Fatalf("mcp --browser unknown: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "devices", "rename", "Chromium on host (2)", "chromium on HOST"); r.code != 1 || !strings.Contains(r.stderr, "already named") {
		t.Fatalf("rename to a taken name: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "devices", "rename", "Chromium on host", "Personal"); r.code != 0 || !strings.Contains(r.stdout, `to "Personal"`) {
		t.Fatalf("rename: %d %q %q", r.code, r.stdout, r.stderr)
	}
	c := mcp.NewClient(&mcp.Implementation{Name: "torii-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: e.command("mcp", "--session-label", "pinned", "--browser", "personal")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
	if err != nil || !strings.Contains(textOf(res), "in A") {
		t.Fatalf("--browser personal must act in A (newest is B): %v %q", err, textOf(res))
	}
	r = e.run("", "status")
	if !strings.Contains(r.stdout, `sessions: "pinned" (stdio, named)`) {
		t.Fatalf("status must say which browser serves the session:\n%s", r.stdout)
	}
}

func TestManagedDeviceName(t *testing.T) {
	t.Parallel()
	host, _ := os.Hostname()
	for _, c := range []struct {
		browser, profile string
		torii            bool
		want             string
	}{
		{"/usr/bin/chromium", "/home/p/.local/state/torii/profile", true, "Chromium (Torii profile) on " + host},
		{"/opt/google/chrome/google-chrome", "/home/p/work", false, "Chrome (profile work) on " + host},
	} {
		if got := managedDeviceName(c.browser, c.profile, c.torii); got != c.want {
			t.Errorf("%s %s: %q, want %q", c.browser, c.profile, got, c.want)
		}
	}
}
