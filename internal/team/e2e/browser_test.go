package e2e_test

import (
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/launcher"
)

// extDir is the extension written out of the binary once, as `torii
// launch` does, shared by both browsers.
var (
	extOnce sync.Once
	extDir  string
	extErr  error
)

func installExtension(t *testing.T) string {
	t.Helper()
	extOnce.Do(func() {
		dir, err := os.MkdirTemp("", "torii-e2e-ext-")
		if err != nil {
			extErr = err
			return
		}
		extDir = filepath.Join(dir, "extension")
		out, err := exec.Command(bin, "extension", "install", extDir).CombinedOutput()
		if err != nil {
			extErr = &cmdError{"torii extension install", err, string(out)}
		}
	})
	if extErr != nil {
		t.Fatal(extErr)
	}
	return extDir
}

type cmdError struct {
	what string
	err  error
	out  string
}

func (e *cmdError) Error() string { return e.what + ": " + e.err.Error() + ": " + e.out }

// browser is one headless Chromium with the real extension, reaching the
// gateway only through its forwarder.
type browser struct {
	name     string
	agent    string // its User-Agent, so the test's web server knows which browser asked
	fwd      *forwarder
	deviceID string
	cmd      *exec.Cmd
	done     chan struct{}
	log      string
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

// launchBrowser pairs a managed browser with the gateway for user u the way
// `torii launch --server` does: a one-time secret from /v1/otp (asked of
// replica i with the user's token), then Chromium started on the connect
// page with the gateway's address (the forwarder) and that secret.
func launchBrowser(t *testing.T, c *cluster, i int, u teamUser, name string, fwd *forwarder) *browser {
	t.Helper()
	var otp struct {
		Secret    string    `json:"secret"`
		ExpiresAt time.Time `json:"expiresAt"`
	}
	c.mustAPI(i, u.Token, http.MethodPost, "/v1/otp", map[string]any{"deviceName": name}, &otp)
	if otp.Secret == "" {
		t.Fatal("POST /v1/otp gave no secret")
	}
	frag := url.Values{}
	frag.Set("daemon", "ws://"+fwd.Addr()+"/acp")
	frag.Set("otp", otp.Secret)
	// What `torii launch --headless --permissive` gives a dedicated profile:
	// every site allowed, act mode on, nobody to ask.
	frag.Set("policy", "permissive")
	frag.Set("headless", "1")
	start := "chrome-extension://" + extension.ID + "/connect.html#" + frag.Encode()

	dir := t.TempDir()
	prof := filepath.Join(dir, "profile")
	if _, err := launcher.PrepareProfile(prof); err != nil {
		t.Fatal(err)
	}
	b := &browser{name: name, agent: "torii-e2e-" + name, fwd: fwd, log: filepath.Join(dir, "browser.log")}
	args := launcher.Args(launcher.Options{
		Profile: prof, ExtensionDir: installExtension(t), StartURL: start, Headless: true, Root: true,
		WindowSize: &launcher.DefaultHeadlessSize,
		ExtraArgs:  []string{"--user-agent=" + b.agent},
	})
	cmd := exec.Command(browserPath(t), args...)
	logf, err := os.Create(b.log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s: %v (set %s to a Chromium)", cmd.Path, err, launcher.EnvBrowser)
	}
	b.cmd, b.done = cmd, make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(b.done) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-b.done
		if t.Failed() {
			t.Logf("browser %s log:\n%s", name, tailFile(b.log, 3000))
		}
	})
	return b
}
