package doctor

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/launcher"
)

func testEnv(t *testing.T) *Env {
	t.Helper()
	root := t.TempDir()
	p := config.Paths{ConfigDir: filepath.Join(root, "c"), StateDir: filepath.Join(root, "s")}
	if err := p.Ensure(); err != nil {
		t.Fatal(err)
	}
	f := launcher.Finder{Getenv: func(string) string { return "" }, LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	return Gather(context.Background(), Options{Paths: p, Finder: &f})
}

func TestLooseKeyFileFails(t *testing.T) {
	e := testEnv(t)
	if err := os.WriteFile(e.Paths.DaemonKey(), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r := checkDaemonKey(context.Background(), e); r.Status != OK {
		t.Fatalf("0600 key: %+v", r)
	}
	os.Chmod(e.Paths.DaemonKey(), 0o644)
	r := checkDaemonKey(context.Background(), e)
	if r.Status != Fail || r.Fix != "chmod 600 "+e.Paths.DaemonKey() || !strings.Contains(r.Detail, "0644") {
		t.Fatalf("0644 key: %+v", r)
	}
}

func TestLooseStateDirFails(t *testing.T) {
	e := testEnv(t)
	os.Chmod(e.Paths.StateDir, 0o755)
	r := checkStateDir(context.Background(), e)
	if r.Status != Fail || r.Fix != "chmod 700 "+e.Paths.StateDir {
		t.Fatalf("%+v", r)
	}
}

func TestNoDaemon(t *testing.T) {
	e := testEnv(t)
	r := checkDaemon(context.Background(), e)
	if r.Status != Fail || !strings.Contains(r.Fix, "torii launch") || !strings.Contains(r.Fix, "torii serve") {
		t.Fatalf("%+v", r)
	}
	if r := checkLink(context.Background(), e); r.Status != Warn || !strings.Contains(r.Detail, "skipped") {
		t.Fatalf("link: %+v", r)
	}
}

func TestBadConfigFails(t *testing.T) {
	root := t.TempDir()
	p := config.Paths{ConfigDir: root, StateDir: root}
	os.WriteFile(p.ConfigFile(), []byte(`{"listen":"0.0.0.0:80"}`), 0o600)
	e := Gather(context.Background(), Options{Paths: p})
	r := checkConfig(context.Background(), e)
	if r.Status != Fail || !strings.Contains(r.Fix, p.ConfigFile()) {
		t.Fatalf("%+v", r)
	}
}

func TestBrowserMissing(t *testing.T) {
	e := testEnv(t)
	r := checkBrowser(context.Background(), e)
	if r.Status != Fail || !strings.Contains(r.Fix, "apt install chromium") || !strings.Contains(r.Detail, "chromium (PATH)") {
		t.Fatalf("%+v", r)
	}
}

func TestClockInThePast(t *testing.T) {
	e := testEnv(t)
	e.Now = func() time.Time { return time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC) }
	if r := checkClock(context.Background(), e); r.Status != Fail || !strings.Contains(r.Fix, "timedatectl") {
		t.Fatalf("%+v", r)
	}
	e.Now = time.Now
	e.Health = &Health{Date: time.Now().Add(-time.Minute)}
	if r := checkClock(context.Background(), e); r.Status != Fail {
		t.Fatalf("skewed daemon: %+v", r)
	}
	e.Health.Date = time.Now()
	if r := checkClock(context.Background(), e); r.Status != OK {
		t.Fatalf("agreeing clocks: %+v", r)
	}
}

func TestPrint(t *testing.T) {
	var b strings.Builder
	Print(&b, []Result{{Name: "a", Status: OK, Detail: "fine"}, {Name: "b", Status: Fail, Detail: "broken", Fix: "do x"}})
	want := "ok   a: fine\nFAIL b: broken\n  fix: do x\n"
	if b.String() != want {
		t.Fatalf("got %q want %q", b.String(), want)
	}
}

// Pins that can never apply are a warning with the fix, even with no
// daemon running; none configured is fine.
func TestPinsCheckFromConfig(t *testing.T) {
	e := testEnv(t)
	if r := checkPins(context.Background(), e); r.Status != OK {
		t.Fatalf("no mcpServers: %+v", r)
	}
	e.Config.MCPServers = config.MCPServerPolicy{Allow: []string{"katashiro"}, Pins: map[string][]string{"ghost": {"x"}}}
	r := checkPins(context.Background(), e)
	if r.Status != Warn || !strings.Contains(r.Detail, `pins for "ghost"`) || !strings.Contains(r.Detail, `"katashiro" is allowed but has no pins`) ||
		!strings.Contains(r.Fix, "torii servers") {
		t.Fatalf("%+v", r)
	}
}
