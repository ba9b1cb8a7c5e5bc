package cli

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/link/linktest"
)

// lockingBrowser is a fake browser that, like Chromium, holds its profile through a
// SingletonLock symlink to HOST-PID, records its pid and arguments, then idles. With
// stubborn it ignores SIGTERM, as a hung browser would.
func lockingBrowser(t *testing.T, dir string, stubborn bool) (exe, argsFile string) {
	t.Helper()
	host, _ := os.Hostname()
	exe = filepath.Join(dir, "lockbrowser")
	argsFile = filepath.Join(dir, "args")
	trap := ""
	if stubborn {
		trap = "trap '' TERM\n"
	}
	script := "#!/bin/sh\n[ \"$1\" = --version ] && { echo 'Chromium 999.0 (fake)'; exit 0; }\n" + trap + "prof=\nfor a in \"$@\"; do case \"$a\" in --user-data-dir=*) prof=\"${a#--user-data-dir=}\";; esac; done\n" +
		"ln -sfn '" + host + "'-$$ \"$prof/SingletonLock\"\n" +
		"{ echo $$; for a in \"$@\"; do echo \"$a\"; done; } > " + argsFile + ".tmp\nmv " + argsFile + ".tmp " + argsFile + "\nexec sleep 120\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, argsFile
}

// launchedBrowser is a fake browser whose extension the test plays of a fake browser: paired through the
// one-time secret on the browser's command line, as connect.html does.
type launchedBrowser struct {
	pid    int
	client *linktest.Client
}

// pairStarted waits for a browser started after notPID to write its arguments, and pairs.
func pairStarted(t *testing.T, argsFile string, notPID int, launch *exec.Cmd, stderr *strings.Builder) launchedBrowser {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	var lines []string
	for {
		if b, err := os.ReadFile(argsFile); err == nil {
			lines = strings.Split(strings.TrimSpace(string(b)), "\n")
			if pid, _ := strconv.Atoi(lines[0]); pid != notPID && pid != 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("fake browser never started; launch stderr: %s", stderr.String())
		}
		time.Sleep(50 * time.Millisecond) // another process's file: polled, bounded
	}
	pid, _ := strconv.Atoi(lines[0])
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	start := lines[len(lines)-1]
	frag, err := url.ParseQuery(strings.TrimPrefix(start, "chrome-extension://"+extension.ID+"/connect.html#"))
	if err != nil || frag.Get("otp") == "" {
		t.Fatalf("start URL %q", start)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := pairWithSecret(t, ctx, frag)
	t.Cleanup(func() { c.Close() })
	return launchedBrowser{pid: pid, client: c}
}

// pairWithSecret plays the managed browser's extension: it dials the daemon the start URL's
// fragment names, pairs with its one-time secret, authenticates and attaches its tools.
func pairWithSecret(t *testing.T, ctx context.Context, frag url.Values) *linktest.Client {
	t.Helper()
	prov := fakeExtension()
	c, err := linktest.Dial(ctx, frag.Get("daemon"), &linktest.Options{Handler: prov.Handle})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SayHello(ctx, ""); err != nil {
		t.Fatal(err)
	}
	d, _ := linktest.NewDevice("Managed Chrome")
	if err := c.Pair(ctx, d, linktest.PairOptions{OTP: frag.Get("otp")}); err != nil {
		t.Fatalf("OTP pairing: %v", err)
	}
	if _, err := c.Auth(ctx, d); err != nil {
		t.Fatalf("auth: %v", err)
	}
	attachTools(t, ctx, c)
	return c
}

// launchPaired runs a command line that launches a browser (`torii launch …`, or a fix
// doctor printed, through sh), plays the extension, and waits for the command to succeed.
func launchPaired(t *testing.T, cmd *exec.Cmd, argsFile string, notPID int) (launchedBrowser, string) {
	t.Helper()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	fx := pairStarted(t, argsFile, notPID, cmd, &errb)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%v: %v\nstdout: %s\nstderr: %s", cmd.Args, err, out.String(), errb.String())
		}
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v did not see the link come up\n%s", cmd.Args, errb.String())
	}
	return fx, out.String() + errb.String()
}

// noDisplay drops the display variables, as on a server.
func (e *env) noDisplay() {
	e.extraEnv = append(e.extraEnv, "DISPLAY=", "WAYLAND_DISPLAY=")
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil && !zombie(pid) }

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// attachTools does what the extension does once authenticated: ACP initialize, then a
// session/new declaring its tool server. `torii launch` reports ready only after this.
func attachTools(t *testing.T, ctx context.Context, c *linktest.Client) {
	t.Helper()
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fake-extension", "version": "0"}}, nil); err != nil {
		t.Fatal(err)
	}
	decl := map[string]any{"type": "acp", "name": "torii", "id": fakeServerID}
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{decl}}, nil); err != nil {
		t.Fatal(err)
	}
}
