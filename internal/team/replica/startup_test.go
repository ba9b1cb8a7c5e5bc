package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

// logBuf is a replica's log, for tests that check what it says.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// readyz asks tr's /readyz once.
func readyz(t *testing.T, tr *testReplica) (int, Health, string) {
	t.Helper()
	resp, err := http.Get(tr.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var h Health
	_ = json.Unmarshal(b, &h)
	return resp.StatusCode, h, string(b)
}

// waitReadyz probes /readyz, as a kubelet would, until ok says yes; it
// returns that answer, or fails after the deadline with the last one.
func waitReadyz(t *testing.T, tr *testReplica, what string, ok func(code int, h Health) bool) (Health, string) {
	t.Helper()
	deadline := time.Now().Add(45 * time.Second)
	for {
		code, h, body := readyz(t, tr)
		if ok(code, h) {
			return h, body
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz never showed %s; last: %d %s", what, code, body)
		}
		<-time.After(100 * time.Millisecond) // a probe's period, not a wait for state
	}
}

// waitLog waits until the replica's log says want: the retry loop logs a
// problem as it meets it, which may be just after /readyz showed it.
func waitLog(t *testing.T, log *logBuf, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("the log never said %s:\n%s", want, log.String())
		}
		<-time.After(20 * time.Millisecond) // the log offers no event: polled, bounded
	}
}

// notReadyWith is a 503 /readyz naming a problem with this code.
func notReadyWith(problem string) func(int, Health) bool {
	return func(code int, h Health) bool {
		for _, p := range h.Problems {
			if p.Code == problem {
				return code == http.StatusServiceUnavailable && !h.OK
			}
		}
		return false
	}
}

func isReady(code int, h Health) bool { return code == http.StatusOK && h.OK }

// notReadyAnswers checks that the routes needing the engines answer a
// typed 503 with Retry-After while they are not open, and /healthz 200.
func notReadyAnswers(t *testing.T, c *cluster, tr *testReplica, apiCode string) {
	t.Helper()
	if resp, err := http.Get(tr.base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz while not ready: %v %v", resp, err)
	}
	resp, err := http.Post(tr.base+"/mcp", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("/mcp while not ready: %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	if code := tr.api(t, "GET", "/admin/users", c.secret, nil, &e); code != http.StatusServiceUnavailable || e.Error.Code != apiCode {
		t.Fatalf("/admin/users while not ready: %d %+v, want 503 %s", code, e, apiCode)
	}
}

// A role whose password the store URL gets wrong: the replica serves,
// /readyz is false naming the user and where to fix it (never a password),
// and once the role's password is changed to the URL's it becomes ready by
// itself and a call reaches a browser.
func TestWrongPasswordIsNotReadyUntilTheRoleIsFixed(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	url := c.pg.PasswordRole(t, "gw", "right-pass-1", "wrong-pass-9")
	var log logBuf
	start := time.Now()
	a := c.startWith("a", func(o *Options) {
		o.Team.Store = url
		o.Logger = slog.New(slog.NewJSONHandler(&log, nil))
	})
	h, body := waitReadyz(t, a, "store_auth", notReadyWith("store_auth"))
	p := h.Problems[0]
	if h.Store != "unavailable" || h.Bus != "ok" || !strings.Contains(p.Fix, "user and password in the store URL (team.store)") {
		t.Fatalf("/readyz does not say what is wrong and the fix: %s", body)
	}
	// The details are the operator's, in the log; /readyz answers anyone.
	if strings.Contains(body, "gw") || strings.Contains(body, strconv.Itoa(c.pg.Port)) {
		t.Fatalf("/readyz names the user or the port: %s", body)
	}
	waitLog(t, &log, `refused the password for user \"gw\"`)
	t.Logf("/readyz with a wrong password: %s", body)
	notReadyAnswers(t, c, a, "store_unavailable")

	c.pg.Exec(t, `ALTER ROLE gw PASSWORD 'wrong-pass-9'`)
	waitReadyz(t, a, "ready after the password was fixed", isReady)
	u := c.user(a, "ursula")
	c.browser(ctx, a, u, "laptop")
	res, err := agent(ctx, t, a, u.secret, "").CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}})
	if err != nil || res.IsError || !strings.Contains(textOf(res), `laptop:{"x":1}`) {
		t.Fatalf("call after the fix: %v %q", err, textOf(res))
	}

	out := log.String()
	for _, secret := range []string{"wrong-pass-9", "right-pass-1"} {
		if strings.Contains(body, secret) || strings.Contains(out, secret) {
			t.Fatalf("a password is in /readyz or the log:\n%s\n%s", body, out)
		}
	}
	// Logged when it started, then at most every reportEvery, however often retried.
	n := strings.Count(out, "team store unavailable")
	if most := 1 + int(time.Since(start)/reportEvery); n < 1 || n > most {
		t.Fatalf("the problem was logged %d times (want 1 to %d):\n%s", n, most, out)
	}
	t.Logf("log: %s", out)
	if !strings.Contains(out, "team store available again") {
		t.Fatalf("the recovery is not logged:\n%s", out)
	}
}

// A store URL naming a database that does not exist yet: not ready, saying
// so; once it is created the replica migrates it and becomes ready.
func TestMissingDatabaseIsNotReadyUntilCreated(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	var log logBuf
	a := c.startWith("a", func(o *Options) {
		o.Team.Store = fmt.Sprintf("postgres://torii@127.0.0.1:%d/later?sslmode=disable", c.pg.Port)
		o.Logger = slog.New(slog.NewJSONHandler(&log, nil))
	})
	h, body := waitReadyz(t, a, "store_no_database", notReadyWith("store_no_database"))
	if !strings.Contains(h.Problems[0].Fix, "create the database") || strings.Contains(body, "later") {
		t.Fatalf("/readyz does not say what is wrong and the fix, or names the database: %s", body)
	}
	waitLog(t, &log, "CREATE DATABASE later")
	c.pg.Exec(t, `CREATE DATABASE later`)
	waitReadyz(t, a, "ready after the database was created", isReady)
	c.user(a, "ursula")
}

// PostgreSQL not running at start: not ready, naming where it looked; once
// the server is up, ready without a restart. Not parallel: another test's
// server could take the stopped server's port.
func TestStoreUnreachableAtStartThenUp(t *testing.T) {
	c := newCluster(t)
	c.pg.Stop()
	var log logBuf
	a := c.startWith("a", func(o *Options) { o.Logger = slog.New(slog.NewJSONHandler(&log, nil)) })
	h, body := waitReadyz(t, a, "store_unreachable", notReadyWith("store_unreachable"))
	if !strings.Contains(h.Problems[0].Fix, "host and port in the store URL") || strings.Contains(body, strconv.Itoa(c.pg.Port)) {
		t.Fatalf("/readyz does not name the setting to check, or names the port: %s", body)
	}
	waitLog(t, &log, fmt.Sprintf("cannot reach PostgreSQL at 127.0.0.1:%d", c.pg.Port))
	notReadyAnswers(t, c, a, "store_unavailable")
	// Stopped while not ready: nothing to drain, it returns at once.
	b := c.start("b")
	b.cancel()
	select {
	case err := <-b.done:
		if err != nil {
			t.Fatalf("a replica stopped while not ready: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a replica stopped while not ready did not return in 10 s")
	}
	b.cancel = nil
	c.pg.Start(t)
	waitReadyz(t, a, "ready after PostgreSQL started", isReady)
	c.user(a, "ursula")
}

// NATS not running at start: likewise, with the store open meanwhile.
// Not parallel, for the same reason.
func TestBusUnreachableAtStartThenUp(t *testing.T) {
	c := newCluster(t)
	c.nats.Stop()
	a := c.start("a")
	h, body := waitReadyz(t, a, "bus_unreachable", notReadyWith("bus_unreachable"))
	if h.Store != "ok" || h.Bus != "unavailable" || !strings.Contains(h.Problems[0].Fix, "team.bus") {
		t.Fatalf("/readyz does not say what is wrong and the fix: %s", body)
	}
	notReadyAnswers(t, c, a, "bus_unavailable")
	c.nats.Start(t)
	waitReadyz(t, a, "ready after NATS started", isReady)
	c.user(a, "ursula")
}

// A URL that cannot be used as written refuses to start, naming the
// setting, whatever the other engine does; retrying could not fix it.
func TestMalformedURLsRefuseToStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	admin := filepath.Join(dir, "admin")
	if err := os.WriteFile(admin, []byte(strings.Repeat("s3cret", 8)), 0o600); err != nil {
		t.Fatal(err)
	}
	nothing := fmt.Sprintf("127.0.0.1:%d", teamtest.FreePort(t))
	for _, tc := range []struct {
		name, store, bus, setting string
		is                        error
	}{
		{"store syntax", "postgres://torii:pw-secret-1@127.0.0.1:notaport/torii", "nats://" + nothing, "team.store", store.ErrBadURL},
		{"store scheme", "mysql://torii:pw-secret-1@" + nothing + "/torii", "nats://" + nothing, "team.store", store.ErrBadURL},
		{"bus scheme", "postgres://torii@" + nothing + "/torii", "http://u:pw-secret-1@" + nothing, "team.bus", bus.ErrBadURL},
		{"bus port", "postgres://torii@" + nothing + "/torii", "nats://u:pw-secret-1@127.0.0.1:99999", "team.bus", bus.ErrBadURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			team := config.Team{Store: tc.store, Bus: tc.bus, Replica: "a",
				IdentityFile: filepath.Join(t.TempDir(), "key"), AdminTokenFile: admin}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			err := Run(ctx, Options{Config: config.Config{Listen: "127.0.0.1:0"}, Team: team, Catalogue: []*mcp.Tool{}})
			if !errors.Is(err, tc.is) || ctx.Err() != nil {
				t.Fatalf("Run = %v (ctx %v), want %v at once", err, ctx.Err(), tc.is)
			}
			if msg := err.Error(); strings.Contains(msg, "pw-secret-1") || !strings.Contains(msg, tc.setting) {
				t.Fatalf("%q: must name %s and hide the password", msg, tc.setting)
			}
		})
	}
}
