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

// fakeBrowser writes a script that records its pid and arguments, one per
// line, then idles like a browser would.
func fakeBrowser(t *testing.T, dir string) (exe, argsFile string) {
	t.Helper()
	exe = filepath.Join(dir, "fakebrowser")
	argsFile = filepath.Join(dir, "args")
	script := "#!/bin/sh\n{ echo $$; for a in \"$@\"; do echo \"$a\"; done; } > " + argsFile + ".tmp\nmv " + argsFile + ".tmp " + argsFile + "\nexec sleep 60\n"
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, argsFile
}

// TestLaunchPairsThroughOTP runs the real `torii launch` against a fake
// browser; the test plays the extension: it reads the start URL from the
// browser's command line and pairs with its one-time secret over the real
// link, as connect.html does. The e2e suite does the same with Chromium.
func TestLaunchPairsThroughOTP(t *testing.T) {
	t.Parallel()
	if !extension.Built() {
		t.Skip("extension not built into this binary (run npm run build in extension/)")
	}
	e := newEnv(t)
	exe, argsFile := fakeBrowser(t, e.state)
	cmd := e.command("launch", "--browser", exe, "--headless")
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
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
			cmd.Process.Kill()
			t.Fatalf("fake browser never started; launch stderr: %s", errb.String())
		}
		time.Sleep(50 * time.Millisecond) // another process's file: polled, bounded
	}
	pgid, _ := strconv.Atoi(lines[0])
	t.Cleanup(func() { syscall.Kill(-pgid, syscall.SIGKILL) })
	args := lines[1:]
	has := func(a string) bool {
		for _, x := range args {
			if x == a {
				return true
			}
		}
		return false
	}
	for _, want := range []string{"--load-extension=" + filepath.Join(e.state, "extension"), "--user-data-dir=" + filepath.Join(e.state, "profile"), "--headless=new", "--disable-quic", "--no-first-run", "--window-size=1280,720", "--screen-info={1280x720}", "--silent-debugger-extension-api"} {
		if !has(want) {
			t.Errorf("browser args lack %s: %v", want, args)
		}
	}
	if os.Geteuid() == 0 && !has("--no-sandbox") {
		t.Errorf("running as root without --no-sandbox: %v", args)
	}
	if _, err := os.Stat(filepath.Join(e.state, "extension", "manifest.json")); err != nil {
		t.Errorf("extension not installed: %v", err)
	}
	start := args[len(args)-1]
	prefix := "chrome-extension://" + extension.ID + "/connect.html#"
	if !strings.HasPrefix(start, prefix) {
		t.Fatalf("start URL %q", start)
	}
	frag, err := url.ParseQuery(strings.TrimPrefix(start, prefix))
	if err != nil || frag.Get("otp") == "" || !strings.HasPrefix(frag.Get("daemon"), "ws://127.0.0.1:") {
		t.Fatalf("fragment %q: %v", start, err)
	}
	// A headless launch's agent tabs are 1280×720 unless --window-size says otherwise.
	if frag.Get("viewport") != "1280x720" {
		t.Errorf("fragment %q: viewport %q, want 1280x720", start, frag.Get("viewport"))
	}
	// SECURITY I-5: the secret is on the command line only.
	filepath.WalkDir(e.state, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Type().IsRegular() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), frag.Get("otp")) && p != argsFile {
				t.Errorf("one-time secret written to %s", p)
			}
		}
		return nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := pairWithSecret(t, ctx, frag)
	defer c.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("launch: %v\n%s", err, errb.String())
		}
	case <-time.After(15 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("launch did not see the link come up\n%s", errb.String())
	}
	if !strings.Contains(out.String(), "claude mcp add torii -- ") || !strings.Contains(out.String(), "torii status") {
		t.Errorf("launch output lacks the agent hint: %q", out.String())
	}
	// The browser keeps running after launch returns.
	if err := syscall.Kill(pgid, 0); err != nil {
		t.Errorf("browser gone after launch exited: %v", err)
	}
}

// TestLaunchBadWindowSize: a --window-size that is not W,H in bounds is refused before anything
// starts, naming the fix.
func TestLaunchBadWindowSize(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	exe, argsFile := fakeBrowser(t, e.state)
	r := e.run("", "launch", "--browser", exe, "--headless", "--window-size", "1280x720")
	if r.code != 1 || !strings.Contains(r.stderr, `--window-size "1280x720": not WIDTH,HEIGHT`) || !strings.Contains(r.stderr, "fix: did you mean --window-size 1280,720?") {
		t.Fatalf("got %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(argsFile); err == nil {
		t.Errorf("the browser was started")
	}
}

func TestLaunchNoBrowser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.extraEnv = []string{"PATH=" + e.state}
	r := e.run("", "launch", "--browser", filepath.Join(e.state, "nope"))
	if r.code != 1 || !strings.Contains(r.stderr, "does not exist") || !strings.Contains(r.stderr, "fix:") {
		t.Fatalf("got %d %q", r.code, r.stderr)
	}
	// Nothing was started for a launch that could not find its browser.
	if r := e.run("", "status"); r.code != 1 {
		t.Errorf("daemon started although the browser was missing")
	}
}

func TestLaunchBrowserExitsEarly(t *testing.T) {
	t.Parallel()
	if !extension.Built() {
		t.Skip("extension not built into this binary (run npm run build in extension/)")
	}
	e := newEnv(t)
	exe := filepath.Join(e.state, "busybrowser")
	// Chromium's exit status when another process owns the profile.
	os.WriteFile(exe, []byte("#!/bin/sh\nexit 21\n"), 0o755)
	r := e.run("", "launch", "--browser", exe)
	if r.code != 1 || !strings.Contains(r.stderr, "is in use by another browser process") {
		t.Fatalf("got %d %q", r.code, r.stderr)
	}
}

func TestConnectURL(t *testing.T) {
	t.Parallel()
	u, err := connectURL(otpResult{OTP: "s3cr&t"}, "127.0.0.1:7317", false, nil)
	want := "chrome-extension://" + extension.ID + "/connect.html#daemon=ws%3A%2F%2F127.0.0.1%3A7317%2Facp&otp=s3cr%26t"
	if err != nil || u != want {
		t.Errorf("got %q, %v\nwant %q", u, err, want)
	}
	full := "chrome-extension://" + extension.ID + "/connect.html#daemon=x&otp=y"
	if u, _ := connectURL(otpResult{OTP: "y", URL: full}, "", false, nil); u != full {
		t.Errorf("daemon's URL not used: %q", u)
	}
	if u, _ := connectURL(otpResult{OTP: "y"}, "h:1", true, nil); !strings.Contains(u, "wss%3A%2F%2Fh%3A1") {
		t.Errorf("tls: %q", u)
	}
	if u, _ := connectURL(otpResult{OTP: "y"}, "h:1", false, url.Values{"policy": {"permissive"}}); !strings.HasSuffix(u, "&policy=permissive") {
		t.Errorf("permissive: %q", u)
	}
	if u, _ := connectURL(otpResult{OTP: "y"}, "h:1", false, url.Values{"launch": {"eyJ2ZXJzaW9uIjoxfQ"}}); !strings.Contains(u, "launch=eyJ2ZXJzaW9uIjoxfQ&otp=y") {
		t.Errorf("launch policy: %q", u)
	}
	if u, _ := connectURL(otpResult{OTP: "y", URL: full}, "", false, url.Values{"launch": {"abc"}}); u != full+"&launch=abc" {
		t.Errorf("launch policy on the daemon's URL: %q", u)
	}
	if _, err := connectURL(otpResult{}, "h:1", false, nil); err == nil {
		t.Error("empty secret accepted")
	}
}

func TestDoctorLooseKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	key := filepath.Join(e.state, "daemon.key")
	os.WriteFile(key, []byte("x"), 0o644)
	r := e.run("", "doctor")
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL daemon key: ") || !strings.Contains(r.stdout, "  fix: chmod 600 "+key+"\n") {
		t.Fatalf("got %d %q", r.code, r.stdout)
	}
	r = e.run("", "doctor", "--json")
	if r.code != 1 || !strings.Contains(r.stdout, `"ok": false`) || !strings.Contains(r.stdout, `"fix": "chmod 600 `) {
		t.Fatalf("json: %d %q", r.code, r.stdout)
	}
}

func TestDoctorWithDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.serve()
	r := e.run("", "doctor")
	for _, want := range []string{"ok   daemon: running", "ok   http port: ", "FAIL extension link: ", "FAIL paired devices: "} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, r.stdout)
		}
	}
}
