package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitStatus waits until `torii status` prints want (the daemon polls config.json).
func (e *env) waitStatus(want string) string {
	e.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := e.run("", "status")
		if strings.Contains(r.stdout, want) {
			return r.stdout
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("status never showed %q:\n%s%s", want, r.stdout, r.stderr)
		}
		time.Sleep(100 * time.Millisecond) // another process's status: polled, bounded
	}
}

// While the daemon runs, a broken config.json (unknown key, syntax error) is not applied:
// the old configuration stays and the error shows in `torii reload`, `torii status`, doctor
// and the log. A good change applies by itself and says what; a listen change waits for a
// restart and says so.
func TestConfigChangeWhileRunning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	logFile := filepath.Join(e.state, "serve.log")
	serve := e.command("serve", "--log-file", logFile)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { serve.Process.Kill(); serve.Wait() })
	// With --log-file the daemon's stderr goes to the file, so there is no
	// ready line to read: status is polled, bounded.
	deadline := time.Now().Add(15 * time.Second)
	for e.run("", "status").code != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not come up:\n%s", readFile(t, logFile))
		}
		time.Sleep(50 * time.Millisecond)
	}
	addr := e.status().Listen
	cfgFile := filepath.Join(e.config, "config.json")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(cfgFile, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write(`{"listen":"127.0.0.1:0","brokr":{"tabCap":3}}`)
	out := e.waitStatus("NOT APPLIED")
	if !strings.Contains(out, `unknown field "brokr"`) || !strings.Contains(out, "config.json:1:") {
		t.Errorf("status on an unknown key:\n%s", out)
	}
	r := e.run("", "reload")
	if r.code != 1 || !strings.Contains(r.stdout, `config not applied: config: `+cfgFile+`:1:`) || !strings.Contains(r.stdout, `unknown field "brokr"`) ||
		!strings.Contains(r.stdout, "the configuration in force stays") || !strings.Contains(r.stdout, "fix: correct "+cfgFile) {
		t.Errorf("reload on an unknown key: %d %q", r.code, r.stdout)
	}
	if r := e.run("", "doctor"); !strings.Contains(r.stdout, "FAIL daemon: running") || !strings.Contains(r.stdout, "did not apply") {
		t.Errorf("doctor on an unknown key:\n%s", r.stdout)
	}
	if st := e.status(); st.Listen != addr {
		t.Errorf("the daemon moved: %s, was %s", st.Listen, addr)
	}

	write(`{"listen":"127.0.0.1:0",`)
	out = e.waitStatus("config.json:1:25: unexpected EOF")
	if !strings.Contains(out, "NOT APPLIED") {
		t.Errorf("status on a syntax error:\n%s", out)
	}
	if r := e.run("", "reload"); r.code != 1 || !strings.Contains(r.stdout, "config not applied") {
		t.Errorf("reload on a syntax error: %d %q", r.code, r.stdout)
	}

	// A missing agent command, and a broker limit: both apply live.
	write(`{"listen":"127.0.0.1:0","agents":[{"name":"ghost","command":"torii-no-such-agent"}],"broker":{"tabCap":3}}`)
	out = e.waitStatus("ghost")
	if strings.Contains(out, "NOT APPLIED") || !strings.Contains(out, "not_installed") || !strings.Contains(out, "agents[0].command") {
		t.Errorf("status after a good change:\n%s", out)
	}
	log := readFile(t, logFile)
	for _, want := range []string{"config not applied", `unknown field \"brokr\"`, "config reloaded", "applied=\"[agents broker]\""} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	if r := e.run("", "doctor"); !strings.Contains(r.stdout, "warn agents: ghost: command \"torii-no-such-agent\" (agents[0].command) is not found on PATH") {
		t.Errorf("doctor on a missing agent:\n%s", r.stdout)
	}

	// listen cannot move under a running daemon: the change the daemon picks
	// up by itself applies the broker limit and says listen waits for a
	// restart, and so does a reload after it. The daemon logs before status
	// shows the change, so once status shows it the log holds it.
	write(`{"listen":"127.0.0.1:1","agents":[{"name":"ghost","command":"torii-no-such-agent"}],"broker":{"tabCap":4}}`)
	if out := e.waitStatus("applies after `torii restart`: listen"); out == "" {
		t.Error("status does not say listen waits for a restart")
	}
	if log := readFile(t, logFile); !strings.Contains(log, "applied=[broker] restartNeeded=[listen]") {
		t.Errorf("log lacks the broker applied and listen waiting:\n%s", log)
	}
	r = e.run("", "reload")
	if r.code != 0 || !strings.Contains(r.stdout, "changed, applies after `torii restart`: listen") {
		t.Errorf("reload of listen: %d %q", r.code, r.stdout)
	}
	if st := e.status(); st.Listen != addr {
		t.Errorf("listen changed under a running daemon: %s", st.Listen)
	}
}
