package cli

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/launcher"
)

// linkWait bounds how long launch waits for the extension to connect.
const linkWait = 30 * time.Second

// LinkTimeoutError: the browser started but its extension never
// authenticated to the daemon.
type LinkTimeoutError struct {
	After      time.Duration
	BrowserLog string
	DaemonLog  string
}

func (e *LinkTimeoutError) Error() string {
	return fmt.Sprintf("the browser started, but its extension did not connect within %s\n  browser output: %s\n  daemon log:     %s\n  fix: run `torii doctor`; if the extension shows an error page, close the browser and run `torii launch` again", e.After, e.BrowserLog, e.DaemonLog)
}

func runLaunch(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "launch", "launch [--browser PATH] [--headless] [--profile DIR] [--permissive] [--no-wait] [--foreground]\n\nStarts the daemon (if needed) and a browser with the Torii extension in a dedicated\nprofile, paired with no clicks through a one-time secret.")
	browserFlag := fs.String("browser", "", "browser executable (default: $"+launcher.EnvBrowser+", then Chromium/Chrome on PATH and standard locations)")
	headless := fs.Bool("headless", false, "run the browser headless (--headless=new)")
	profile := fs.String("profile", "", "browser profile directory (default: <state dir>/profile)")
	noWait := fs.Bool("no-wait", false, "do not wait for the extension to connect")
	foreground := fs.Bool("foreground", false, "stay attached: wait for the browser and pass SIGINT/SIGTERM to it")
	permissive := fs.Bool("permissive", false, "start the dedicated profile with a permissive policy: every site allowed, act mode on (code execution and passwords stay off)")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "launch takes no arguments"}
	}
	p, err := paths()
	if err != nil {
		return err
	}
	// Fail fast, before starting anything, on what the person must fix.
	browser, err := launcher.Find(*browserFlag)
	if err != nil {
		return err
	}
	if !extension.Built() {
		return extension.ErrNotBuilt
	}
	cfg, err := config.Load(p)
	if err != nil {
		return err
	}
	client, started, err := ensureDaemon(ctx, p)
	if err != nil {
		return err
	}
	defer client.Close()
	if started {
		fmt.Fprintf(s.Err, "torii: started the daemon in the background (log: %s)\n", p.LogFile())
	}
	extDir := extensionDir(p)
	if _, err := syncExtension(extDir); err != nil {
		return fmt.Errorf("write the extension to %s: %w", extDir, err)
	}
	prof := *profile
	if prof == "" {
		prof = filepath.Join(p.StateDir, "profile")
	}
	if prof, err = filepath.Abs(prof); err != nil {
		return err
	}
	if *permissive {
		fmt.Fprintf(s.Err, "torii: permissive policy for this profile: every site is allowed and act mode is on (turn it off in the extension's options)\n")
	}

	var before statusResult
	if err := client.Call(ctx, "status", nil, &before); err != nil {
		return err
	}
	var otp otpResult
	if err := client.Call(ctx, "launch.otp", nil, &otp); err != nil {
		return err
	}
	startURL, err := connectURL(otp, before.Listen, cfg.TLSCert != "", *permissive)
	if err != nil {
		return err
	}
	browserLog := filepath.Join(p.StateDir, "browser.log")
	proc, err := launcher.Start(launcher.Options{
		Browser:      browser,
		Profile:      prof,
		ExtensionDir: extDir,
		StartURL:     startURL,
		Headless:     *headless,
		Root:         os.Geteuid() == 0,
		LogFile:      browserLog,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "torii: started %s (pid %d, profile %s)\n", browser, proc.PID(), prof)

	if !*noWait {
		if err := waitForLink(ctx, client, proc, before, browserLog, p.LogFile()); err != nil {
			return err
		}
		fmt.Fprintf(s.Out, "Torii is ready: the browser's extension is connected to the daemon at http://%s.\n", before.Listen)
	} else {
		fmt.Fprintf(s.Out, "Browser started; the extension connects to the daemon at http://%s in a few seconds.\n", before.Listen)
	}
	fmt.Fprintf(s.Out, "Point an agent at it:\n  claude mcp add torii -- %s mcp\nCheck it any time with `torii status` (or `torii doctor` if something is off).\n", selfCommand())

	if !*foreground {
		return nil
	}
	return waitForeground(proc)
}

// connectURL builds the extension page that pairs with the one-time secret.
// SECURITY I-5: the secret travels only on the browser's command line (and
// the page drops it from its URL at once); it is never written to disk.
//
// Measured with Chromium 156: an extension page given as the start URL in the
// same launch that --load-extension's the extension is refused with
// ERR_BLOCKED_BY_CLIENT, because the tab navigates before the extension is
// enabled. The extension's service worker therefore reloads its own
// connect.html tabs when it starts (that reload works, the fragment intact).
//
// permissive asks the extension to start with its permissive policy; the extension applies it
// only after the managed pairing with this one-time secret connects (SECURITY I-14).
func connectURL(otp otpResult, listen string, tls, permissive bool) (string, error) {
	if otp.OTP == "" {
		return "", errors.New("the daemon returned an empty one-time secret")
	}
	daemonURL := otp.URL
	switch {
	case strings.HasPrefix(daemonURL, "chrome-extension://"):
		if permissive {
			return daemonURL + "&policy=permissive", nil
		}
		return daemonURL, nil
	case strings.HasPrefix(daemonURL, "ws://") || strings.HasPrefix(daemonURL, "wss://"):
	default:
		if listen == "" {
			return "", errors.New("the daemon reported no listen address")
		}
		scheme := "ws"
		if tls {
			scheme = "wss"
		}
		daemonURL = scheme + "://" + listen + "/acp"
	}
	frag := url.Values{}
	frag.Set("daemon", daemonURL)
	frag.Set("otp", otp.OTP)
	if permissive {
		frag.Set("policy", "permissive")
	}
	// url.Values sorts keys; the page parses them by name.
	return "chrome-extension://" + extension.ID + "/connect.html#" + frag.Encode(), nil
}

// waitForLink polls status until an authenticated extension connection
// appears that was not there before the browser started.
func waitForLink(ctx context.Context, c *control.Client, proc *launcher.Process, before statusResult, browserLog, daemonLog string) error {
	seen := map[string]bool{}
	for _, cn := range before.Connections {
		seen[cn.ID] = true
	}
	deadline := time.NewTimer(linkWait)
	defer deadline.Stop()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		var st statusResult
		if err := c.Call(ctx, "status", nil, &st); err != nil {
			return err
		}
		if st.ExtensionConnected {
			for _, cn := range st.Connections {
				if !seen[cn.ID] && cn.DeviceID != "" {
					return nil
				}
			}
		}
		select {
		case <-proc.Done():
			if err := proc.Err(); err != nil {
				return err
			}
			return fmt.Errorf("the browser exited before its extension connected; its output is in %s", browserLog)
		case <-deadline.C:
			return &LinkTimeoutError{After: linkWait, BrowserLog: browserLog, DaemonLog: daemonLog}
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

// waitForeground keeps launch attached to the browser, passing on the
// signals a terminal or supervisor sends, since the browser runs in its own
// session and would not get them otherwise.
func waitForeground(proc *launcher.Process) error {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	signalled := false
	for {
		select {
		case sig := <-sigs:
			signalled = true
			proc.Signal(sig.(syscall.Signal))
		case <-proc.Done():
			if signalled {
				return nil
			}
			return proc.Err()
		}
	}
}

// selfCommand is how an agent config should name this binary: "torii" when
// that resolves to us on PATH, else our absolute path.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "torii"
	}
	if onPath, err := exec.LookPath("torii"); err == nil {
		a, _ := filepath.EvalSymlinks(onPath)
		b, _ := filepath.EvalSymlinks(exe)
		if a == b {
			return "torii"
		}
	}
	return exe
}
