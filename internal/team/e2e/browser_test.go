package e2e_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/launcher"
)

// browser is one headless Chromium with the real extension, started by
// `torii launch --server`, reaching the gateway only through its forwarder.
type browser struct {
	name     string
	agent    string // its User-Agent, so the test's web server knows which browser asked
	fwd      *forwarder
	deviceID string
	launch   *exec.Cmd     // `torii launch --server … --foreground`, attached to the browser
	done     chan struct{} // closed when launch (and so the browser) has exited
	log      string        // launch's output
	state    string        // launch's state directory, with the browser's own log
}

// browserPath is $TORII_BROWSER, else the Chromium torii launch would find.
// Without one the test is skipped, except under CI, which installs it.
func browserPath(t *testing.T) string {
	t.Helper()
	p, err := launcher.Find("")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("e2e: %v", err)
		}
		t.Skipf("e2e: %v", err)
	}
	return p
}

// startedRE is launch's line naming the browser it started.
var startedRE = regexp.MustCompile(`torii: started .* \(pid (\d+), profile `)

// launchBrowser pairs a managed browser with the gateway for user u through
// the CLI a person would use: `torii launch --server <the forwarder>
// --token … --headless --allow ORIGIN --act --approve …`. The gateway issues
// the one-time secret; the extension applies the launch policy once it has
// paired, so a call on origin succeeds only if the policy got through.
func launchBrowser(t *testing.T, u teamUser, name string, fwd *forwarder, origin string) *browser {
	t.Helper()
	dir := t.TempDir()
	b := &browser{name: name, agent: "torii-e2e-" + name, fwd: fwd, log: filepath.Join(dir, "launch.log"), state: filepath.Join(dir, "state")}
	// The browser as launch starts it, with a User-Agent of its own added.
	wrapper := filepath.Join(dir, "chromium")
	script := "#!/bin/sh\nexec " + shellQuote(browserPath(t)) + " \"$@\" " + shellQuote("--user-agent="+b.agent) + "\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"launch", "--server", "http://" + fwd.Addr(), "--token", u.Token, "--browser", wrapper,
		"--headless", "--foreground", "--allow", origin, "--act"}
	for _, k := range []string{"submit", "destructive_click", "new_origin", "evaluate", "upload", "download"} {
		args = append(args, "--approve", k+"=allow")
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"TORII_STATE_DIR=" + b.state, "TORII_CONFIG_DIR=" + filepath.Join(dir, "config")}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TORII_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	logf, err := os.Create(b.log)
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = logf
	// launch passes SIGTERM on to the browser; the test's own death sends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start torii launch: %v", err)
	}
	pid := make(chan int, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			_, _ = io.WriteString(logf, line+"\n")
			if m := startedRE.FindStringSubmatch(line); m != nil {
				n, _ := strconv.Atoi(m[1])
				pid <- n
			}
		}
	}()
	b.launch, b.done = cmd, make(chan struct{})
	go func() { <-copied; _ = cmd.Wait(); logf.Close(); close(b.done) }()
	browserPID := 0
	t.Cleanup(func() {
		if browserPID != 0 {
			_ = syscall.Kill(-browserPID, syscall.SIGKILL) // the browser's own process group
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
		if t.Failed() {
			t.Logf("torii launch for %s:\n%s\nbrowser log:\n%s", name, tailFile(b.log, 3000), tailFile(filepath.Join(b.state, "browser-team.log"), 3000))
		}
	})
	select {
	case browserPID = <-pid:
	case <-b.done:
		t.Fatalf("torii launch for %s exited before starting a browser:\n%s", name, tailFile(b.log, 3000))
	case <-time.After(60 * time.Second):
		t.Fatalf("torii launch for %s started no browser within 60 s:\n%s", name, tailFile(b.log, 3000))
	}
	// launch asked for the secret through the forwarder before starting the
	// browser; that connection ends before the browser's link is looked for.
	select {
	case <-fwd.firstDone:
	case <-time.After(30 * time.Second):
		t.Fatalf("torii launch for %s kept its connection to the gateway open", name)
	}
	return b
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
