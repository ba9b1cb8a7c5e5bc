package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torii-browser/torii/extension"
)

func TestUnknownCommandExits2(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "frobnicate")
	if r.code != 2 || !strings.Contains(r.stderr, `unknown command "frobnicate"`) || !strings.Contains(r.stderr, "usage: torii COMMAND") {
		t.Fatalf("got %d, stderr %q", r.code, r.stderr)
	}
	if r := e.run(""); r.code != 2 {
		t.Errorf("no command: exit %d, want 2", r.code)
	}
}

// A mistyped command or flag names the nearest real one.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"lauch"}, `unknown command "lauch" (did you mean "launch"?)`},
		{[]string{"launch", "--headles"}, "flag provided but not defined: -headles (did you mean --headless?)"},
		{[]string{"audit", "--limt", "3"}, "(did you mean --limit?)"},
	} {
		r := e.run("", c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("torii %v: exit %d, stderr %q; want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if r := e.run("", "status", "--zzzzzzzz"); strings.Contains(r.stderr, "did you mean") {
		t.Errorf("a far flag got a suggestion: %q", r.stderr)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, args := range [][]string{
		{"status", "--bogus"},
		{"status", "extra"},
		{"token"},
		{"token", "bogus"},
		{"token", "revoke"},
		{"devices", "revoke"},
		{"devices", "frob"},
		{"pair", "approve"},
		{"pair", "frob"},
		{"extension", "install"},
		{"extension"},
		{"launch", "extra"},
		{"serve", "--listen"},
		{"help", "frob"},
		{"servers", "extra"},
	} {
		r := e.run("", args...)
		if r.code != 2 {
			t.Errorf("torii %v: exit %d (stderr %q), want 2", args, r.code, r.stderr)
		}
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "help")
	if r.code != 0 || !strings.Contains(r.stdout, "launch") || !strings.Contains(r.stdout, "doctor") {
		t.Fatalf("help: %d %q", r.code, r.stdout)
	}
	r = e.run("", "launch", "-h")
	if r.code != 0 || !strings.Contains(r.stdout, "--headless") || !strings.Contains(r.stdout, "--browser") {
		t.Fatalf("launch -h: %d %q %q", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "help", "token"); r.code != 0 || !strings.Contains(r.stdout, "token new") {
		t.Fatalf("help token: %d %q", r.code, r.stdout)
	}
}

func TestStatusWithoutDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "status")
	if r.code != 1 || !strings.Contains(r.stderr, "torii daemon is not running (start it with `torii serve` or `torii launch`)") {
		t.Fatalf("got %d, %q", r.code, r.stderr)
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "torii dev\n") || !strings.Contains(r.stdout, "go: go1.") {
		t.Fatalf("got %d %q", r.code, r.stdout)
	}
}

func TestExtensionCommands(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if r := e.run("", "extension", "id"); r.code != 0 || strings.TrimSpace(r.stdout) != extension.ID {
		t.Errorf("id: %d %q", r.code, r.stdout)
	}
	if r := e.run("", "extension", "path"); r.code != 0 || strings.TrimSpace(r.stdout) != filepath.Join(e.state, "extension") {
		t.Errorf("path: %d %q", r.code, r.stdout)
	}
	if !extension.Built() {
		t.Skip("extension not built into this binary (run npm run build in extension/)")
	}
	dir := filepath.Join(e.state, "out")
	r := e.run("", "extension", "install", dir)
	if r.code != 0 {
		t.Fatalf("install: %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err != nil {
		t.Fatalf("no manifest after install: %v", err)
	}
}

func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if r := e.run("", "token", "new"); r.code != 1 || !strings.Contains(r.stderr, "not running") {
		t.Fatalf("without daemon: %d %q", r.code, r.stderr)
	}
	e.serve()
	r := e.run("", "token", "new", "--label", "side panel")
	tok := strings.TrimSpace(r.stdout)
	if r.code != 0 || tok == "" || strings.Contains(tok, "\n") || !strings.Contains(r.stderr, "shown only this once") {
		t.Fatalf("new: %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	r = e.run("", "token", "list", "--json")
	if r.code != 0 || !strings.Contains(r.stdout, `"label": "side panel"`) || strings.Contains(r.stdout, tok) {
		t.Fatalf("list: %d %q", r.code, r.stdout)
	}
	r = e.run("", "token", "list")
	fields := strings.Fields(strings.Split(r.stdout, "\n")[1])
	if len(fields) < 1 || !strings.HasPrefix(fields[0], "tok") {
		t.Fatalf("list table: %q", r.stdout)
	}
	id := fields[0]
	if r := e.run("", "token", "revoke", id); r.code != 0 {
		t.Fatalf("revoke: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "token", "revoke", id); r.code != 1 || !strings.Contains(r.stderr, "unknown token") {
		t.Fatalf("revoke twice: %d %q", r.code, r.stderr)
	}
	if r := e.run("", "token", "list", "--json"); !strings.Contains(r.stdout, `"tokens": []`) {
		t.Fatalf("after revoke: %q", r.stdout)
	}
}
