package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/launcher"
	"github.com/torii-browser/torii/internal/team/admin"
)

// runRemoteLaunch runs the real `torii launch --server` against a fake browser
// and returns the connect page's fragment from the browser's command line,
// the rest of that command line, and what launch printed.
func runRemoteLaunch(t *testing.T, g *gateway, e *env, secret string, extra ...string) (url.Values, []string, string) {
	t.Helper()
	if !extension.Built() {
		t.Skip("extension not built into this binary (run npm run build in extension/)")
	}
	exe, argsFile := fakeBrowser(t, e.state)
	args := append([]string{"launch", "--server", g.url, "--token", secret, "--browser", exe}, extra...)
	out, err := e.command(args...).CombinedOutput()
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
	}
	_, frag, _ := strings.Cut(start, "#")
	q, err := url.ParseQuery(frag)
	if err != nil {
		t.Fatalf("start URL %q: %v", start, err)
	}
	return q, lines[1:], string(out)
}

func newTeamUser(g *gateway, name string) string {
	g.must(g.run(teamBootstrap, "admin", "user", "add", name))
	return strings.TrimSpace(g.must(g.run(teamBootstrap, "admin", "token", "new", "--user", name)).stdout)
}

// TestTeamLaunchGivesTheBrowserAOneTimeSecret runs the real `torii launch
// --server` against a fake browser and the real admin API: the browser's
// start URL names the gateway's /acp and carries a secret the store binds to
// the token's user, and no local daemon is started.
func TestTeamLaunchGivesTheBrowserAOneTimeSecret(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	secret := newTeamUser(g, "alice")
	e := newEnv(t)
	q, args, _ := runRemoteLaunch(t, g, e, secret, "--headless")
	for _, a := range args {
		if strings.HasPrefix(a, "--user-data-dir=") && !strings.Contains(a, filepath.Join(e.state, "profile-127.0.0.1_")) {
			t.Errorf("not the gateway's own profile: %s", a)
		}
	}
	if q.Get("daemon") != "ws"+strings.TrimPrefix(g.url, "http")+"/acp" || q.Get("otp") == "" || q.Get("headless") != "1" {
		t.Fatalf("start URL fragment %v", q)
	}
	if q.Has("launch") || q.Has("policy") {
		t.Errorf("a policy without policy flags: %v", q)
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

// The policy flags of a local launch reach a team launch's browser the same
// way: in the connect page's fragment, next to the one-time secret, for the
// extension to apply once that pairing connects.
func TestTeamLaunchCarriesThePolicy(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	secret := newTeamUser(g, "alice")

	q, _, out := runRemoteLaunch(t, g, newEnv(t), secret, "--headless", "--allow", "example.com", "--act", "--approve", "submit=deny")
	raw, err := base64.RawURLEncoding.DecodeString(q.Get("launch"))
	if err != nil {
		t.Fatalf("launch=%q: %v", q.Get("launch"), err)
	}
	var pol launchPolicy
	if err := json.Unmarshal(raw, &pol); err != nil {
		t.Fatal(err)
	}
	if len(pol.Rules) != 1 || pol.Rules[0].Pattern != "example.com" || pol.Rules[0].Act == nil || !*pol.Rules[0].Act || pol.Approvals["submit"] != "deny" {
		t.Errorf("policy %s", raw)
	}
	if q.Get("otp") == "" || q.Get("headless") != "1" {
		t.Errorf("fragment %v", q)
	}
	for _, w := range []string{"launch policy for this profile: 1 origin(s) allowed (example.com)", "approval_unanswerable"} {
		if !strings.Contains(out, w) {
			t.Errorf("launch did not say %q:\n%s", w, out)
		}
	}

	q, _, _ = runRemoteLaunch(t, g, newEnv(t), secret, "--headless", "--permissive")
	if q.Get("policy") != "permissive" || q.Has("launch") {
		t.Errorf("--permissive: fragment %v", q)
	}
}

// With a team.publicURL, token new and launch point the person at the
// gateway's public address; the browser keeps the address launch was given,
// which reached the gateway.
func TestTeamLaunchNamesThePublicAddress(t *testing.T) {
	t.Parallel()
	g := newGatewayWith(t, admin.Options{Public: config.TeamURLs{URL: "https://torii.example.com",
		ACP: "wss://torii.example.com/acp", MCP: "https://torii.example.com/mcp"}})
	g.must(g.run(teamBootstrap, "admin", "user", "add", "alice"))
	r := g.must(g.run(teamBootstrap, "admin", "token", "new", "--user", "alice"))
	secret := strings.TrimSpace(r.stdout)
	for _, w := range []string{"agents: https://torii.example.com/mcp", "torii launch --server https://torii.example.com --token", "from the popup at wss://torii.example.com/acp"} {
		if !strings.Contains(r.err, w) {
			t.Errorf("token new did not say %q:\n%s", w, r.err)
		}
	}
	q, _, out := runRemoteLaunch(t, g, newEnv(t), secret, "--headless")
	if q.Get("daemon") != "ws"+strings.TrimPrefix(g.url, "http")+"/acp" {
		t.Errorf("the browser was sent to %q", q.Get("daemon"))
	}
	for _, w := range []string{"mcp --server https://torii.example.com --token", "https://torii.example.com/mcp with the header", "public address is https://torii.example.com"} {
		if !strings.Contains(out, w) {
			t.Errorf("launch did not say %q:\n%s", w, out)
		}
	}
}

// A team launch's policy is refused for a profile torii did not create, as a
// local one is, before any secret is asked for or a browser started.
func TestTeamLaunchPolicyOnlyInAProfileToriiMade(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	secret := newTeamUser(g, "alice")
	e := newEnv(t)
	own := filepath.Join(e.state, "own-chrome")
	if err := os.Mkdir(own, 0o700); err != nil {
		t.Fatal(err)
	}
	exe, argsFile := fakeBrowser(t, e.state)
	r := e.run("", "launch", "--server", g.url, "--token", secret, "--browser", exe, "--headless", "--profile", own, "--allow", "example.com")
	if r.code == 0 || !strings.Contains(r.stderr, "--allow applies only to a profile that torii launch created") || !strings.Contains(r.stderr, "fix: ") {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(own, launcher.MarkerFile)); err == nil {
		t.Error("launch --server marked a profile torii did not create")
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Error("a browser was started")
	}
	// Without a policy the same profile is used as it is, and stays unmarked.
	runRemoteLaunch(t, g, e, secret, "--headless", "--profile", own)
	if _, err := os.Stat(filepath.Join(own, launcher.MarkerFile)); err == nil {
		t.Error("launch --server marked a profile torii did not create")
	}
}

// Bad inputs to `launch --server` are typed errors naming the fix, found
// before anything starts or the gateway is asked (it is not reachable here).
func TestTeamLaunchBadInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(notJSON, []byte(`{"version":1,`), 0o600); err != nil {
		t.Fatal(err)
	}
	const gw = "https://127.0.0.1:1"
	run := func(args ...string) (int, error) {
		var out, errb bytes.Buffer
		code := Main(args, Stdio{Out: &out, Err: &errb})
		return code, runLaunch(context.Background(), Stdio{Out: &out, Err: &errb}, args[1:])
	}
	for _, c := range []struct {
		name string
		args []string
		is   func(error) bool
		says []string
	}{
		{"bad --policy JSON", []string{"launch", "--server", gw, "--token", "t", "--policy", notJSON},
			func(err error) bool { var pe *PolicyError; return errors.As(err, &pe) && pe.Fix != "" }, []string{"not JSON", "fix: the file holds one JSON object"}},
		{"bad --allow", []string{"launch", "--server", gw, "--token", "t", "--allow", "http://"},
			func(err error) bool { var pe *PolicyError; return errors.As(err, &pe) }, []string{"--allow"}},
		{"--act without --allow", []string{"launch", "--server", gw, "--token", "t", "--act"},
			func(err error) bool { var ue *UsageError; return errors.As(err, &ue) }, []string{"--allow ORIGIN"}},
		{"--permissive with --allow", []string{"launch", "--server", gw, "--token", "t", "--permissive", "--allow", "example.com"},
			func(err error) bool { var ue *UsageError; return errors.As(err, &ue) }, []string{"pick one way"}},
		{"--reuse", []string{"launch", "--server", gw, "--token", "t", "--reuse"},
			func(err error) bool { var ue *UsageError; return errors.As(err, &ue) }, []string{"--reuse"}},
		{"ws:// off loopback", []string{"launch", "--server", "ws://gw.example/acp", "--token", "t", "--allow", "example.com"},
			func(err error) bool { var se *ServerURLError; return errors.As(err, &se) }, []string{"plaintext", "fix: give the gateway's address: --server https://gw.example"}},
		{"wss://", []string{"launch", "--server", "wss://gw.example:8443/acp", "--token", "t"},
			func(err error) bool { var se *ServerURLError; return errors.As(err, &se) }, []string{"fix: give the gateway's address: --server https://gw.example:8443"}},
		{"ws:// on loopback", []string{"launch", "--server", "ws://127.0.0.1:8443/acp", "--token", "t"},
			func(err error) bool { var se *ServerURLError; return errors.As(err, &se) }, []string{"--server http://127.0.0.1:8443"}},
		{"http:// off loopback", []string{"launch", "--server", "http://gw.example", "--token", "t", "--permissive"},
			func(err error) bool { var se *ServerURLError; return errors.As(err, &se) }, []string{"fix: use https://gw.example"}},
		{"no token", []string{"launch", "--server", gw, "--permissive"},
			func(err error) bool { var ue *UsageError; return errors.As(err, &ue) }, []string{"--token"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "no token" && os.Getenv(EnvToken) != "" {
				t.Skip("$" + EnvToken + " is set")
			}
			code, err := run(c.args...)
			if code == ExitOK || err == nil || !c.is(err) {
				t.Fatalf("exit %d, error %T %v", code, err, err)
			}
			for _, w := range c.says {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%q does not say %q", err, w)
				}
			}
		})
	}
}
