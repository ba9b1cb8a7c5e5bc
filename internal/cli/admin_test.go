package cli

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/team/admin"
	"github.com/torii-browser/torii/internal/team/store"
)

const teamBootstrap = "bootstrap-secret-for-cli-tests"

// gateway is the real admin API over the real SQLite store, on loopback.
type gateway struct {
	t   *testing.T
	st  store.Store
	url string
}

func newGateway(t *testing.T) *gateway { t.Helper(); return newGatewayWith(t, admin.Options{}) }

func newGatewayWith(t *testing.T, opts admin.Options) *gateway {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "team.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	srv := httptest.NewServer(admin.New(st, nil, []byte(teamBootstrap), opts).Handler())
	t.Cleanup(srv.Close)
	return &gateway{t: t, st: st, url: srv.URL}
}

type teamResult struct {
	code        int
	stdout, err string
}

// run runs the command line in this process against the gateway.
func (g *gateway) run(token string, args ...string) teamResult {
	g.t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{args[0], "--server", g.url, "--token", token}, args[1:]...)
	code := Main(full, Stdio{Out: &out, Err: &errb})
	return teamResult{code, out.String(), errb.String()}
}

func (g *gateway) must(r teamResult) teamResult {
	g.t.Helper()
	if r.code != 0 {
		g.t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.err)
	}
	return r
}

func TestTeamCLIRefusesPlaintextOffLoopback(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := Main([]string{"admin", "--server", "http://gw.example:8443", "--token", "t", "user", "list"}, Stdio{Out: &out, Err: &errb})
	if code != ExitFailure || !strings.Contains(errb.String(), "use https://gw.example:8443") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	errb.Reset()
	code = Main([]string{"pair", "--server", "http://10.1.2.3", "--token", "t", "--code", "123456"}, Stdio{Out: &out, Err: &errb})
	if code != ExitFailure || !strings.Contains(errb.String(), "https://") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, u := range []string{"https://gw.example", "http://127.0.0.1:8443", "http://localhost", "http://[::1]:1"} {
		if _, err := checkServerURL(u); err != nil {
			t.Errorf("%s: %v", u, err)
		}
	}
	for _, u := range []string{"ftp://gw.example", "gw.example", "https://gw.example/?x=1"} {
		if _, err := checkServerURL(u); err == nil {
			t.Errorf("%s accepted", u)
		}
	}
}

func TestTeamAdminAndPairOverTheCLI(t *testing.T) {
	t.Parallel()
	g := newGateway(t)
	g.must(g.run(teamBootstrap, "admin", "user", "add", "alice"))
	secret := strings.TrimSpace(g.must(g.run(teamBootstrap, "admin", "token", "new", "--user", "alice", "--label", "laptop")).stdout)
	if !strings.HasPrefix(secret, "torii_") {
		t.Fatalf("secret %q", secret)
	}
	if r := g.must(g.run(teamBootstrap, "admin", "user", "list")); !strings.Contains(r.stdout, "alice") {
		t.Fatal(r.stdout)
	}
	// The server's message and hint reach the person.
	r := g.run(teamBootstrap, "admin", "user", "add", "Bob Smith")
	if r.code != ExitFailure || !strings.Contains(r.err, "a-z, 0-9") || !strings.Contains(r.err, "hint: for example alice") {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	r = g.run(secret, "admin", "user", "list")
	if r.code != ExitFailure || !strings.Contains(r.err, "needs an admin token") {
		t.Fatalf("a user token on admin: exit %d: %s", r.code, r.err)
	}
	r = g.run("torii_wrong", "admin", "user", "list")
	if r.code != ExitFailure || !strings.Contains(r.err, "not valid") {
		t.Fatalf("a wrong token: exit %d: %s", r.code, r.err)
	}

	key, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.st.CreatePairRequest(context.Background(), store.PairRequest{
		DeviceName: "Alice's Chrome", Origin: "chrome-extension://abc", DeviceKey: key.PublicKey().Bytes(), Code: "123456",
	}, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if r := g.must(g.run(teamBootstrap, "admin", "pairings")); !strings.Contains(r.stdout, formatCode(p.Code)) {
		t.Fatal(r.stdout)
	}
	wrong := "000000"
	if p.Code == wrong {
		wrong = "000001"
	}
	r = g.run(secret, "pair", "--code", wrong)
	if r.code != ExitFailure || !strings.Contains(r.err, "no pending pairing request") || !strings.Contains(r.err, "hint:") {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}
	if r := g.must(g.run(secret, "pair", "--code", p.Code)); !strings.Contains(r.stdout, "Alice's Chrome") {
		t.Fatal(r.stdout)
	}
	r = g.must(g.run(teamBootstrap, "admin", "device", "list", "--user", "alice"))
	if !strings.Contains(r.stdout, "Alice's Chrome") {
		t.Fatal(r.stdout)
	}
	ds, err := g.st.Devices(context.Background(), "")
	if err != nil || len(ds) != 1 {
		t.Fatalf("%v %v", ds, err)
	}
	g.must(g.run(teamBootstrap, "admin", "device", "revoke", ds[0].ID))
	r = g.run(teamBootstrap, "admin", "device", "revoke", ds[0].ID)
	if r.code != ExitFailure || !strings.Contains(r.err, "no such device") {
		t.Fatalf("exit %d: %s", r.code, r.err)
	}

	ts, err := g.st.Tokens(context.Background(), "")
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v %v", ts, err)
	}
	g.must(g.run(teamBootstrap, "admin", "token", "revoke", ts[0].ID))
	if r := g.run(secret, "pair", "--code", "123456"); r.code != ExitFailure || !strings.Contains(r.err, "not valid") {
		t.Fatalf("a revoked token: exit %d: %s", r.code, r.err)
	}
	if r := g.must(g.run(teamBootstrap, "admin", "audit")); r.stdout != "" {
		t.Fatalf("audit of nothing: %q", r.stdout)
	}
}

func TestTeamLaunchNeedsAGateway(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := Main([]string{"launch", "--server", "https://gw.example", "--permissive"}, Stdio{Out: &out, Err: &errb})
	if code != ExitUsage {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	u, _ := checkServerURL("https://gw.example:8443/base")
	if got, _ := gatewayACP(u); got != "wss://gw.example:8443/base/acp" {
		t.Fatal(got)
	}
	u, _ = checkServerURL("http://127.0.0.1:9")
	if got, _ := gatewayACP(u); got != "ws://127.0.0.1:9/acp" {
		t.Fatal(got)
	}
}
