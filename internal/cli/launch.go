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
	"runtime"
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
	return fmt.Sprintf("the browser started, but its extension did not connect within %s\n  browser output: %s\n  daemon log:     %s\n  fix: run `torii doctor`; if the extension shows an error page, run `torii stop`, then `torii launch` again", e.After, e.BrowserLog, e.DaemonLog)
}

func runLaunch(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "launch", "launch [--browser PATH] [--headless] [--window-size W,H] [--profile DIR] [--no-wait] [--foreground]\n              [--allow ORIGIN]... [--act] [--code KINDS] [--passwords] [--approve KIND=CHOICE]...\n              | [--policy FILE] | [--permissive]\n\nStarts the daemon (if needed) and a browser with the Torii extension in a dedicated\nprofile, paired with no clicks through a one-time secret. A managed browser already\nrunning on that profile is reused (exit 0), not started twice. With no display\n($DISPLAY and $WAYLAND_DISPLAY unset) the browser runs headless.\n\nThe policy of that profile (a headless browser has no window for the options page) can be\nset at start: --allow ORIGIN (repeatable; patterns as in the options page: example.com,\n*.example.com, 127.0.0.1:8080, https://example.com/path/*) with --act, --code and\n--passwords for those origins and --approve for the approval choices, or --policy FILE with\nthe whole policy as JSON in the extension's format ({\"version\":1,\"rules\":[{\"pattern\":\n\"example.com\",\"act\":true}],\"approvals\":{\"submit\":\"deny\"}}; at most 32 KiB). It replaces\nthe profile's policy once the extension has paired with the one-time secret. It is refused\nfor a profile torii did not create (the person's own Chrome never takes one) and for a\nmanaged browser that is already running (its policy stays as it is), unless --reuse says\nto reuse that browser as it is (`make run` does, so that a second run works).\n\nWith --server URL --token T (or $TORII_SERVER, $TORII_TOKEN) the browser pairs with a team gateway\nas the token's user instead, through a one-time secret the gateway issues; no local daemon runs.\nThe policy flags apply as above (default profile: <state dir>/profile-HOST, one per gateway).")
	browserFlag := fs.String("browser", "", "browser executable (default: $"+launcher.EnvBrowser+", then Chromium/Chrome on PATH and standard locations)")
	headless := fs.Bool("headless", false, "run the browser headless (--headless=new); the default with no display")
	windowSize := fs.String("window-size", "", "the agent tabs' viewport W,H in pixels (default "+launcher.DefaultHeadlessSize.String()+" headless; with a window, the browser's own)")
	profile := fs.String("profile", "", "browser profile directory (default: <state dir>/profile)")
	noWait := fs.Bool("no-wait", false, "do not wait for the extension to connect")
	foreground := fs.Bool("foreground", false, "stay attached: wait for the browser and pass SIGINT/SIGTERM to it")
	permissive := fs.Bool("permissive", false, "start the dedicated profile with a permissive policy: every site allowed, act mode on (code execution and passwords stay off)")
	reuse := fs.Bool("reuse", false, "reuse a managed browser already running on the profile even when policy flags are given (they then change nothing: its policy stays)")
	var pf launchPolicyFlags
	fs.Var(&pf.allow, "allow", "allow this origin pattern in the dedicated profile (repeatable)")
	fs.BoolVar(&pf.act, "act", false, "act mode (clicks, typing, navigation) on the --allow origins")
	fs.StringVar(&pf.code, "code", "", "code execution on the --allow origins: expression, program, fetch and/or invoke, comma-separated")
	fs.BoolVar(&pf.passwords, "passwords", false, "let calls that ask for it type into password fields on the --allow origins")
	fs.Var(&pf.approve, "approve", "approval choice KIND=allow|ask|deny for submit, destructive_click, new_origin, evaluate, upload, download (repeatable)")
	fs.StringVar(&pf.file, "policy", "", "the dedicated profile's whole policy: a JSON file in the extension's format")
	var remote remoteFlags
	remote.register(fs)
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "launch takes no arguments"}
	}
	// Fail fast, before starting anything, on what the person must fix.
	pol, err := pf.build(*permissive)
	if err != nil {
		return err
	}
	if remote.set() {
		if *reuse || *noWait {
			return &UsageError{Msg: "with --server, launch takes neither --reuse nor --no-wait: it always starts a new browser and does not wait for it to pair (see it with `torii admin device list` or GET /v1/devices)"}
		}
		return launchRemote(ctx, s, &remote, remoteLaunch{browser: *browserFlag, profile: *profile,
			windowSize: *windowSize, headless: *headless, foreground: *foreground,
			policy: pol, permissive: *permissive, policyFlag: policyFlagName(&pf)})
	}
	p, err := paths()
	if err != nil {
		return err
	}
	browser, err := launcher.Find(*browserFlag)
	if err != nil {
		return err
	}
	prof := *profile
	if prof == "" {
		prof = filepath.Join(p.StateDir, "profile")
	}
	if prof, err = filepath.Abs(prof); err != nil {
		return err
	}
	if !extension.Built() {
		return extension.ErrNotBuilt
	}
	if !*headless && !hasDisplay() {
		*headless = true
		fmt.Fprintf(s.Err, "torii: no $DISPLAY or $WAYLAND_DISPLAY: starting the browser headless\n")
	}
	size, err := launchWindowSize(*windowSize, *headless)
	if err != nil {
		return err
	}
	// A browser already on this profile is reused, not started twice (Chromium would exit
	// at once with "profile in use"). An explicit policy cannot reach it, so that stays an error.
	if pid := launcher.RunningPID(prof); pid != 0 && (*reuse || (pol == nil && !*permissive)) {
		if *windowSize != "" {
			fmt.Fprintf(s.Err, "torii: --window-size not applied: the browser was already running, and its windows stay as they are\n")
		}
		return reuseBrowser(ctx, s, p, reuseOptions{profile: prof, pid: pid, headless: *headless,
			policy: pol != nil || *permissive, noWait: *noWait, foreground: *foreground})
	}
	launch, err := launchParam(prof, *profile == "", pol, *permissive, policyFlagName(&pf))
	if err != nil {
		return err
	}
	if size != nil {
		// The extension fits each agent window's page area to it (only from this launch's connect).
		if launch == nil {
			launch = url.Values{}
		}
		launch.Set("viewport", size.Param())
	}
	var asks *askReport
	if *headless {
		// SECURITY I-80: the extension learns it runs headless from the connect page, and then
		// refuses at once what it would have to ask a person about.
		if launch == nil {
			launch = url.Values{}
		}
		launch.Set("headless", "1")
		asks = headlessAsks(pol, *permissive)
	}
	cfg, err := config.Load(p)
	if err != nil {
		return err
	}
	client, err := ensureDaemonTold(ctx, s, p)
	if err != nil {
		return err
	}
	defer client.Close()
	extDir := extensionDir(p)
	if _, err := syncExtension(extDir); err != nil {
		return fmt.Errorf("write the extension to %s: %w", extDir, err)
	}
	if *permissive {
		fmt.Fprintf(s.Err, "torii: permissive policy for this profile: every site is allowed and act mode is on (turn it off in the extension's options)\n")
	}
	if pol != nil {
		fmt.Fprintf(s.Err, "torii: launch policy for this profile: %s (applied once the extension pairs)\n", pol.summary())
	}
	if asks != nil {
		fmt.Fprintf(s.Err, "torii: %s\n", asks.line())
	}

	var before statusResult
	if err := client.Call(ctx, "status", nil, &before); err != nil {
		return err
	}
	var otp otpResult
	if err := client.Call(ctx, "launch.otp", map[string]string{"deviceName": managedDeviceName(browser, prof, *profile == "")}, &otp); err != nil {
		return err
	}
	startURL, err := connectURL(otp, before.Listen, cfg.TLSCert != "", launch)
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
		WindowSize:   size,
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Err, "torii: started %s (pid %d, profile %s)\n", browser, proc.PID(), prof)
	rec := launcher.Record{PID: proc.PID(), Profile: prof, Browser: browser, Headless: *headless,
		DefaultDir: *profile == "", StartedAt: time.Now().UTC()}
	if asks != nil {
		rec.Unanswerable = asks.line()
	}
	// Recorded at once, so that `torii stop` finds the browser even if the link never comes up.
	if err := launcher.SaveRecord(p.StateDir, rec); err != nil {
		fmt.Fprintf(s.Err, "torii: could not record the browser for `torii stop`: %v\n", err)
	}

	if !*noWait {
		cn, err := waitForLink(ctx, client, proc, before, browserLog, p.LogFile())
		if err != nil {
			return err
		}
		rec.DeviceID, rec.DeviceName = cn.DeviceID, cn.DeviceName
		_ = launcher.SaveRecord(p.StateDir, rec)
		fmt.Fprintf(s.Out, "Torii is ready: the browser's extension is connected to the daemon at http://%s, paired as %q (%s).\n", before.Listen, cn.DeviceName, cn.DeviceID)
	} else {
		fmt.Fprintf(s.Out, "Browser started; the extension connects to the daemon at http://%s in a few seconds.\n", before.Listen)
	}
	printAgentHint(s)

	if !*foreground {
		return nil
	}
	return waitForeground(proc)
}

// launchWindowSize is the agent tabs' viewport: the one asked for, else 1280×720 headless, else
// none (a browser with a window keeps the sizes the person gives its windows).
func launchWindowSize(v string, headless bool) (*launcher.WindowSize, error) {
	if v == "" {
		if !headless {
			return nil, nil
		}
		d := launcher.DefaultHeadlessSize
		return &d, nil
	}
	w, err := launcher.ParseWindowSize(v)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// printAgentHint tells the person how to point an agent at the browser.
// The commands carry the dirs when they are not the defaults (dirFlags), so
// an MCP client that starts servers with a clean environment reaches this
// daemon; a one-shot client names its session so its calls share tabs.
func printAgentHint(s Stdio) {
	self := selfCommand()
	p, _ := paths()
	mcp := self + " mcp" + dirFlags(p)
	fmt.Fprintf(s.Out, "Point an agent at it:\n  claude mcp add torii -- %s\nOne-shot clients (one process per call, e.g. the MCP Inspector CLI) name a session to keep their tabs:\n  %s --session NAME\nCheck it any time with `%s status` (or `%s doctor` if something is off).\n", mcp, mcp, self, self)
}

// hasDisplay reports whether a browser window could open here. Only X11 and Wayland
// systems need a display variable; elsewhere there is always a desktop.
func hasDisplay() bool {
	if runtime.GOOS != "linux" && !strings.HasSuffix(runtime.GOOS, "bsd") {
		return true
	}
	return os.Getenv("DISPLAY") != "" || os.Getenv("WAYLAND_DISPLAY") != ""
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
// launch is the policy the profile starts with, as fragment parameters (launchParam): the
// extension applies it only after the managed pairing with this one-time secret connects, and
// only in a profile Torii created (SECURITY I-14, I-47).
func connectURL(otp otpResult, listen string, tls bool, launch url.Values) (string, error) {
	if otp.OTP == "" {
		return "", errors.New("the daemon returned an empty one-time secret")
	}
	daemonURL := otp.URL
	switch {
	case strings.HasPrefix(daemonURL, "chrome-extension://"):
		if len(launch) > 0 {
			return daemonURL + "&" + launch.Encode(), nil
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
	for k, v := range launch {
		frag[k] = v
	}
	// url.Values sorts keys; the page parses them by name.
	return "chrome-extension://" + extension.ID + "/connect.html#" + frag.Encode(), nil
}

// launchParam checks that the profile may take the policy asked for and returns it as the connect
// page's fragment parameters: policy=permissive, or launch=<base64url JSON>. Without one it
// still creates (and marks) a missing profile, so a later launch may give it a policy.
// SECURITY I-47: only a profile Torii created takes one, and only when its browser is not running.
func launchParam(dir string, isDefault bool, pol *launchPolicy, permissive bool, flag string) (url.Values, error) {
	prof, err := launcher.PrepareProfile(dir)
	if err != nil {
		return nil, err
	}
	if isDefault && !prof.Managed {
		// The default profile lives in Torii's own state directory: only torii launch made it
		// (a launch from before the marker existed); it is marked now.
		if err := launcher.MarkProfile(dir); err != nil {
			return nil, err
		}
		prof.Managed = true
	}
	if pol == nil && !permissive {
		return nil, nil
	}
	if !prof.Managed {
		return nil, &launcher.NotManagedError{Dir: dir, Flag: flag}
	}
	if prof.RunningPID != 0 {
		return nil, &launcher.RunningError{Dir: dir, PID: prof.RunningPID, Flag: flag}
	}
	if permissive {
		return url.Values{"policy": {"permissive"}}, nil
	}
	enc, err := pol.encode()
	if err != nil {
		return nil, err
	}
	return url.Values{"launch": {enc}}, nil
}

// policyFlagName names the flag a refusal is about.
func policyFlagName(f *launchPolicyFlags) string {
	switch {
	case f.file != "":
		return "--policy"
	case f.any():
		return "--allow"
	}
	return "--permissive"
}

// summary is one line for the person: what the launch policy allows.
func (p *launchPolicy) summary() string {
	pats := make([]string, 0, len(p.Rules))
	for _, r := range p.Rules {
		pats = append(pats, r.Pattern)
	}
	s := fmt.Sprintf("%d origin(s) allowed", len(p.Rules))
	if len(pats) > 0 {
		s += " (" + strings.Join(pats, ", ") + ")"
	}
	act := 0
	for _, r := range p.Rules {
		if r.Act != nil && *r.Act {
			act++
		}
	}
	switch {
	case p.ActMode:
		s += ", act mode on for all of them"
	case act > 0:
		s += fmt.Sprintf(", act mode on for %d", act)
	default:
		s += ", act mode off"
	}
	return s
}

// waitForLink polls status until an authenticated extension connection
// appears that was not there before the browser started.
func waitForLink(ctx context.Context, c *control.Client, proc *launcher.Process, before statusResult, browserLog, daemonLog string) (connection, error) {
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
			return connection{}, err
		}
		if st.ExtensionConnected {
			for _, cn := range st.Connections {
				if !seen[cn.ID] && cn.DeviceID != "" {
					// Ready means an agent's first call runs: the extension's tool server is
					// attached, not only its link authenticated.
					if ok, err := toolsAttached(ctx, c); err != nil {
						return connection{}, err
					} else if ok {
						return cn, nil
					}
				}
			}
		}
		select {
		case <-proc.Done():
			if err := proc.Err(); err != nil {
				return connection{}, err
			}
			return connection{}, fmt.Errorf("the browser exited before its extension connected; its output is in %s", browserLog)
		case <-deadline.C:
			return connection{}, &LinkTimeoutError{After: linkWait, BrowserLog: browserLog, DaemonLog: daemonLog}
		case <-ctx.Done():
			return connection{}, ctx.Err()
		case <-tick.C:
		}
	}
}

// toolsAttached reports whether the daemon has the extension's tool server, so tool calls run.
func toolsAttached(ctx context.Context, c *control.Client) (bool, error) {
	var r struct {
		ExtensionConnected bool `json:"extensionConnected"`
	}
	if err := c.Call(ctx, "tools.list", nil, &r); err != nil {
		return false, err
	}
	return r.ExtensionConnected, nil
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
		case <-sigs:
			signalled = true
			_ = proc.Stop(false)
		case <-proc.Done():
			if signalled {
				return nil
			}
			return proc.Err()
		}
	}
}

// SelfCommandEnv, when set, is the command that runs this binary, as the npm
// package's launcher sets it (e.g. "npx -y @torii-browser/torii").
const SelfCommandEnv = "TORII_SELF_COMMAND"

// selfCommand is how an agent config should name this binary: TORII_SELF_COMMAND
// when set, "torii" when that resolves to us on PATH, else our absolute path.
func selfCommand() string {
	// The npm package's launcher knows how it was started (from npx's cache,
	// from PATH, or by a path), which this binary, deep in node_modules, cannot.
	if c := strings.TrimSpace(os.Getenv(SelfCommandEnv)); c != "" {
		return c
	}
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
