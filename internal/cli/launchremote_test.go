package cli

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/extension"
)

// TestTeamLaunchGivesTheBrowserAOneTimeSecret runs the real `torii launch
// --server` against a fake browser and the real admin API: the browser's
// start URL names the gateway's /acp and carries a secret the store binds to
// the token's user, and no local daemon is started.
func TestTeamLaunchGivesTheBrowserAOneTimeSecret(t *testing.T) {
	t.Parallel()
	if !extension.Built() {
		t.Skip("extension not built into this binary (run npm run build in extension/)")
	}
	g := newGateway(t)
	g.must(g.run(teamBootstrap, "admin", "user", "add", "alice"))
	secret := strings.TrimSpace(g.must(g.run(teamBootstrap, "admin", "token", "new", "--user", "alice")).stdout)
	e := newEnv(t)
	exe, argsFile := fakeBrowser(t, e.state)
	out, err := e.command("launch", "--server", g.url, "--token", secret, "--browser", exe, "--headless").CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var lines []string
	deadline := time.Now().Add(15 * time.Second)
	for {
		b, err := os.ReadFile(argsFile)
		if err == nil {
			lines = strings.Split(strings.TrimSpace(string(b)), "\n")
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("fake browser never started; launch said: %s", out)
		}
		time.Sleep(50 * time.Millisecond) // another process's file: polled, bounded
	}
	pgid, _ := strconv.Atoi(lines[0])
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	var start string
	for _, a := range lines[1:] {
		if strings.HasPrefix(a, "chrome-extension://") {
			start = a
		}
		if strings.HasPrefix(a, "--user-data-dir=") && !strings.Contains(a, filepath.Join(e.state, "profile-127.0.0.1_")) {
			t.Errorf("not the gateway's own profile: %s", a)
		}
	}
	_, frag, _ := strings.Cut(start, "#")
	q, err := url.ParseQuery(frag)
	if err != nil || q.Get("daemon") != "ws"+strings.TrimPrefix(g.url, "http")+"/acp" || q.Get("otp") == "" || q.Get("headless") != "1" {
		t.Fatalf("start URL %q", start)
	}
	alice, err := g.st.UserByName(context.Background(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	uid, err := g.st.ConsumeOTP(context.Background(), q.Get("otp"))
	if err != nil || uid != alice.ID {
		t.Fatalf("the secret is %q's (%v), want alice's", uid, err)
	}
	if _, err := os.Stat(filepath.Join(e.state, "torii.sock")); err == nil {
		t.Error("a local daemon was started")
	}
}
