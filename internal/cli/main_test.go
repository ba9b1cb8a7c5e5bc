package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/control"
)

// toriiBin is the real binary, built once: commands are tested as the person
// and the agents run them, as processes.
var toriiBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "torii-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	toriiBin = filepath.Join(dir, "torii")
	build := exec.Command("go", "build", "-o", toriiBin, "github.com/torii-browser/torii/cmd/torii")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building torii:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// Daemons the tests start write their discovery record here, never in
	// the person's own state dir (config.DiscoveryFile).
	os.Setenv("XDG_STATE_HOME", filepath.Join(dir, "xdg-state"))
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one isolated Torii installation: its own state and config dirs and
// a config that binds a free port, so background daemons never collide.
type env struct {
	t        *testing.T
	state    string
	config   string
	extraEnv []string
}

func newEnv(t *testing.T) *env {
	t.Helper()
	// Short paths: the control socket path must stay under 108 bytes.
	root, err := os.MkdirTemp("", "t")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, state: filepath.Join(root, "s"), config: filepath.Join(root, "c")}
	for _, d := range []string{e.state, e.config} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(e.config, "config.json"), []byte(`{"listen":"127.0.0.1:0"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		e.shutdown()
		os.RemoveAll(root)
	})
	return e
}

func (e *env) environ() []string {
	out := []string{"TORII_STATE_DIR=" + e.state, "TORII_CONFIG_DIR=" + e.config}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TORII_") {
			out = append(out, kv)
		}
	}
	return append(out, e.extraEnv...)
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(toriiBin, args...)
	cmd.Env = e.environ()
	return cmd
}

type result struct {
	stdout, stderr string
	code           int
}

// run runs torii to completion with stdin and returns its output and exit code.
func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	cmd := e.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("torii %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

var servingRE = regexp.MustCompile(`torii: serving on http://(\S+) \(state: (.+)\)`)

// serve starts `torii serve` and waits for its ready line; it returns the
// process and the bound address.
func (e *env) serve(args ...string) (*exec.Cmd, string) {
	e.t.Helper()
	cmd := e.command(append([]string{"serve"}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				e.t.Fatal("torii serve exited before it was ready")
			}
			if m := servingRE.FindStringSubmatch(l); m != nil {
				if m[2] != e.state {
					e.t.Errorf("ready line names state %q, want %q", m[2], e.state)
				}
				go func() {
					for range lines {
					}
				}()
				return cmd, m[1]
			}
		case <-timeout:
			e.t.Fatal("torii serve did not print its ready line within 15s")
		}
	}
}

// control dials the env's daemon.
func (e *env) control() *control.Client {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, filepath.Join(e.state, "torii.sock"))
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return c
}

// shutdown stops a daemon (e.g. one started in the background) if one runs.
func (e *env) shutdown() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := control.Dial(ctx, filepath.Join(e.state, "torii.sock"))
	if err != nil {
		return
	}
	defer c.Close()
	c.Call(ctx, "shutdown", nil, nil)
	// Wait for the socket to go so the temp dir can be removed.
	for i := 0; i < 100; i++ {
		if _, err := os.Stat(filepath.Join(e.state, "torii.sock")); os.IsNotExist(err) {
			return
		}
		time.Sleep(50 * time.Millisecond) // the daemon is not our child: its socket going is polled
	}
}

func (e *env) status() statusResult {
	e.t.Helper()
	var st statusResult
	if err := e.control().Call(context.Background(), "status", nil, &st); err != nil {
		e.t.Fatal(err)
	}
	return st
}
