package doctor

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/launcher"
	"github.com/torii-browser/torii/internal/osproc"
)

// --- files (SECURITY: state 0700, secrets 0600) ---

func checkStateDir(_ context.Context, e *Env) Result {
	return checkDir("state dir", e.Paths.StateDir, "it is created by `torii serve` or `torii launch`")
}

func checkConfigDir(_ context.Context, e *Env) Result {
	r := checkDir("config dir", e.Paths.ConfigDir, "")
	if r.Status == Warn { // no config dir just means defaults
		return Result{Name: r.Name, Status: OK, Detail: e.Paths.ConfigDir + " does not exist (defaults in use)"}
	}
	return r
}

func checkDir(name, dir, whenMissing string) Result {
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return Result{Name: name, Status: Warn, Detail: dir + " does not exist yet; " + whenMissing}
	}
	if err != nil {
		return Result{Name: name, Status: Fail, Detail: err.Error(), Fix: "check the permissions of " + dir}
	}
	if !fi.IsDir() {
		return Result{Name: name, Status: Fail, Detail: dir + " is not a directory", Fix: "move it away: mv " + dir + " " + dir + ".bak"}
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("%s has mode %04o; other users could read keys and reach the control socket", dir, m), Fix: "chmod 700 " + dir}
	}
	if r := checkOwner(name, dir, fi); r != nil {
		return *r
	}
	return Result{Name: name, Status: OK, Detail: dir + " (0700)"}
}

func checkDaemonKey(_ context.Context, e *Env) Result {
	return checkSecretFile("daemon key", e.Paths.DaemonKey(), "it is created on the daemon's first start")
}
func checkDevicesFile(_ context.Context, e *Env) Result {
	return checkSecretFile("devices file", e.Paths.Devices(), "no device paired yet")
}
func checkTokensFile(_ context.Context, e *Env) Result {
	return checkSecretFile("tokens file", e.Paths.Tokens(), "no token created yet")
}

func checkSecretFile(name, path, whenMissing string) Result {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Result{Name: name, Status: OK, Detail: path + " not created yet (" + whenMissing + ")"}
	}
	if err != nil {
		return Result{Name: name, Status: Fail, Detail: err.Error(), Fix: "check the permissions of " + path}
	}
	if !fi.Mode().IsRegular() {
		return Result{Name: name, Status: Fail, Detail: path + " is not a regular file", Fix: "remove it (rm " + path + ") and restart the daemon"}
	}
	if m := fi.Mode().Perm(); m&0o077 != 0 {
		return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("%s has mode %04o; it must be readable by you only", path, m), Fix: "chmod 600 " + path}
	}
	if r := checkOwner(name, path, fi); r != nil {
		return *r
	}
	return Result{Name: name, Status: OK, Detail: path + " (0600)"}
}

// checkOwner: a file owned by another user (e.g. made by `sudo torii serve`)
// breaks the daemon in confusing ways.
func checkOwner(name, path string, fi fs.FileInfo) *Result {
	uid, ok := osproc.Owner(fi)
	if !ok || uid == os.Geteuid() {
		return nil
	}
	return &Result{Name: name, Status: Fail, Detail: fmt.Sprintf("%s is owned by uid %d, not you (uid %d)", path, uid, os.Geteuid()), Fix: fmt.Sprintf("sudo chown -R %d %s", os.Geteuid(), path)}
}

// --- config ---

func checkConfig(_ context.Context, e *Env) Result {
	if e.ConfigErr != nil {
		return Result{Name: "config", Status: Fail, Detail: e.ConfigErr.Error(), Fix: "edit " + e.Paths.ConfigFile() + " (or delete it to use the defaults)"}
	}
	if _, err := os.Stat(e.Paths.ConfigFile()); errors.Is(err, fs.ErrNotExist) {
		return Result{Name: "config", Status: OK, Detail: "no config.json; defaults (listen " + e.Config.Listen + ")"}
	}
	return Result{Name: "config", Status: OK, Detail: e.Paths.ConfigFile() + " is valid (listen " + e.Config.Listen + ")"}
}

// --- daemon and port ---

func checkDaemon(_ context.Context, e *Env) Result {
	switch {
	case e.DialErr != nil && isNotRunning(e.DialErr):
		return Result{Name: "daemon", Status: Fail, Detail: "not running (no control socket at " + e.Paths.Socket() + ")", Fix: e.launchCmd() + "   (starts the daemon in the background and a managed browser; `" + e.Self + " serve` runs the daemon alone in this terminal)"}
	case e.DialErr != nil:
		return Result{Name: "daemon", Status: Fail, Detail: "control socket unreachable: " + e.DialErr.Error(), Fix: e.Self + " restart   (then check " + e.Paths.LogFile() + " if it recurs)"}
	case e.StatusErr != nil:
		return Result{Name: "daemon", Status: Fail, Detail: "status failed: " + e.StatusErr.Error(), Fix: e.Self + " restart   (then check " + e.Paths.LogFile() + " if it recurs)"}
	}
	if c := e.Status.Config; c.Error != "" {
		return Result{Name: "daemon", Status: Fail, Detail: fmt.Sprintf("running, pid %d, but it did not apply the current %s: %s (the configuration loaded before stays in force)", e.Status.PID, c.File, c.Error), Fix: "correct " + c.File + "; the daemon picks it up by itself (or run `" + e.Self + " reload`)"}
	}
	if c := e.Status.Config; len(c.RestartNeeded) > 0 {
		return Result{Name: "daemon", Status: Warn, Detail: fmt.Sprintf("running, pid %d; changed in %s, waiting for a restart: %s", e.Status.PID, c.File, strings.Join(c.RestartNeeded, ", ")), Fix: e.Self + " restart"}
	}
	return Result{Name: "daemon", Status: OK, Detail: fmt.Sprintf("running, pid %d, version %s", e.Status.PID, e.Status.Version)}
}

func checkHTTP(_ context.Context, e *Env) Result {
	const name = "http port"
	if !e.daemonUp() {
		return checkPortFree(e)
	}
	h := e.Health
	if h.Err != nil {
		return Result{Name: name, Status: Fail, Detail: "GET " + h.URL + ": " + h.Err.Error(), Fix: "a firewall or proxy may block loopback; check `torii status` and " + e.Paths.LogFile()}
	}
	if h.StatusCode != http.StatusOK || !h.Torii {
		return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("GET %s: status %d, not torii's /healthz", h.URL, h.StatusCode), Fix: "another program answers on " + e.Status.Listen + "; stop it or set \"listen\" in " + e.Paths.ConfigFile()}
	}
	if h.DaemonID != e.Status.DaemonID {
		return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("%s is answered by another torii daemon (%s, not %s)", e.Status.Listen, h.DaemonID, e.Status.DaemonID), Fix: "stop the other daemon (its state dir differs), or give this one another \"listen\" in " + e.Paths.ConfigFile()}
	}
	return Result{Name: name, Status: OK, Detail: h.URL + " answers with this daemon's id"}
}

func fetchHealth(ctx context.Context, e *Env) *Health {
	scheme := "http"
	client := e.HTTP
	if e.Config.TLSCert != "" {
		scheme = "https"
		// Only daemonId is compared, and the control socket (reachable by
		// this user alone) already told us the right one.
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true}
		client = &http.Client{Timeout: e.HTTP.Timeout, Transport: tr}
	}
	h := &Health{URL: scheme + "://" + e.Status.Listen + "/healthz"}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.URL, nil)
	if err != nil {
		h.Err = err
		return h
	}
	resp, err := client.Do(req)
	if err != nil {
		h.Err = err
		return h
	}
	defer resp.Body.Close()
	h.StatusCode = resp.StatusCode
	var body struct {
		OK       bool   `json:"ok"`
		DaemonID string `json:"daemonId"`
	}
	if json.NewDecoder(resp.Body).Decode(&body) == nil && body.OK {
		h.Torii, h.DaemonID = true, body.DaemonID
	}
	if t, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		h.Date = t
	}
	return h
}

// checkPortFree: with no daemon, the useful question is whether it could bind.
func checkPortFree(e *Env) Result {
	const name = "http port"
	if e.ConfigErr != nil {
		return Result{Name: name, Status: Warn, Detail: "skipped: config invalid"}
	}
	ln, err := net.Listen("tcp", e.Config.Listen)
	if err != nil {
		if osproc.AddrInUse(err) {
			return Result{Name: name, Status: Fail, Detail: e.Config.Listen + " is in use by another program", Fix: "stop that program, or set another \"listen\" in " + e.Paths.ConfigFile()}
		}
		return Result{Name: name, Status: Fail, Detail: "cannot bind " + e.Config.Listen + ": " + err.Error(), Fix: "set a bindable loopback \"listen\" in " + e.Paths.ConfigFile()}
	}
	ln.Close()
	return Result{Name: name, Status: OK, Detail: e.Config.Listen + " is free for the daemon"}
}

// --- browser and extension ---

func checkBrowser(ctx context.Context, e *Env) Result {
	const name = "browser"
	p, err := e.Finder.Find("")
	if err != nil {
		detail, fix, _ := strings.Cut(err.Error(), "\n  fix: ")
		if fix == "" {
			fix = "install Chromium (`sudo apt install chromium`) or set " + launcher.EnvBrowser
		}
		return Result{Name: name, Status: Fail, Detail: detail, Fix: fix}
	}
	v, err := launcher.Version(ctx, p)
	if err != nil {
		return Result{Name: name, Status: Fail, Detail: p + " does not run: " + err.Error(), Fix: "reinstall it, or point " + launcher.EnvBrowser + " at a working Chromium or Chrome"}
	}
	return Result{Name: name, Status: OK, Detail: p + " (" + v + ")"}
}

func checkExtensionBuilt(_ context.Context, e *Env) Result {
	const name = "extension build"
	if e.BuiltExtension != nil && !e.BuiltExtension() {
		return Result{Name: name, Status: Fail, Detail: "this torii binary was built without the extension", Fix: "make build   (npm run build in extension/, then go build ./cmd/torii)"}
	}
	return Result{Name: name, Status: OK, Detail: "the extension is embedded in this binary (`torii extension install DIR` writes it out)"}
}

func checkLink(_ context.Context, e *Env) Result {
	const name = "extension link"
	if !e.daemonUp() {
		return skipped(name, e)
	}
	if !e.Status.ExtensionConnected {
		if b := e.revokedBrowser(); b != nil {
			return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("the managed browser (pid %d, profile %s) paired as %s, which was revoked; it cannot connect until it pairs anew", b.PID, b.Profile, b.DeviceID), Fix: e.repairCmd()}
		}
		if len(e.Browsers) > 0 {
			b := e.Browsers[0]
			return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("the managed browser (pid %d, profile %s) runs, but its extension is not connected (it retries on its own every few seconds)", b.PID, b.Profile), Fix: e.Self + " restart   (stops and starts the daemon and that browser)"}
		}
		return Result{Name: name, Status: Fail, Detail: "no extension is connected to the daemon", Fix: e.launchCmd() + "   (or, in your own Chrome, open the Torii extension popup and check it shows the daemon address " + e.Status.Listen + ")"}
	}
	return Result{Name: name, Status: OK, Detail: "an extension is connected and authenticated"}
}

func checkPaired(_ context.Context, e *Env) Result {
	const name = "paired devices"
	if !e.daemonUp() {
		return skipped(name, e)
	}
	if e.DevErr != nil {
		return Result{Name: name, Status: Fail, Detail: "devices.list failed: " + e.DevErr.Error(), Fix: "check " + e.Paths.LogFile()}
	}
	if b := e.revokedBrowser(); b != nil {
		return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("%d paired; the managed browser's device %s was revoked", len(e.Devices), b.DeviceID), Fix: e.repairCmd() + "   (your own Chrome: press Pair in the Torii popup, then run `" + e.Self + " pair`)"}
	}
	if len(e.Devices) == 0 {
		return Result{Name: name, Status: Fail, Detail: "no browser is paired", Fix: e.launchCmd() + "   (pairs a managed browser with no clicks), or press Pair in the extension popup and run `" + e.Self + " pair`"}
	}
	return Result{Name: name, Status: OK, Detail: fmt.Sprintf("%d paired", len(e.Devices))}
}

// --- agents ---

// checkAgents: a configured agent whose command is missing fails when the side panel starts it.
func checkAgents(_ context.Context, e *Env) Result {
	const name = "agents"
	if !e.daemonUp() {
		return skipped(name, e)
	}
	var bad []string
	n := len(e.Status.Agents.Agents)
	for _, a := range e.Status.Agents.Agents {
		if a.Status != "ready" {
			bad = append(bad, a.Name+": "+a.Detail)
		}
	}
	if len(bad) > 0 {
		return Result{Name: name, Status: Warn, Detail: strings.Join(bad, "; "), Fix: "edit " + e.Paths.ConfigFile() + " as said (the daemon applies it by itself), or install the agent"}
	}
	if n == 0 {
		return Result{Name: name, Status: OK, Detail: "none configured (the side panel needs \"agents\" in config.json)"}
	}
	return Result{Name: name, Status: OK, Detail: fmt.Sprintf("%d configured, all found", n)}
}

// --- clock ---

// maxSkew between this process and the daemon; they share a machine, so any
// real difference means a container or VM with its own clock.
const maxSkew = 5 * time.Second

func checkClock(_ context.Context, e *Env) Result {
	const name = "clock"
	now := e.Now()
	if now.Year() <= 2024 {
		return Result{Name: name, Status: Fail, Detail: "system time is " + now.Format(time.RFC3339) + ", which is in the past", Fix: "set the clock: sudo timedatectl set-ntp true   (or sudo date -s 'YYYY-MM-DD HH:MM:SS')"}
	}
	if e.Health == nil || e.Health.Date.IsZero() {
		return Result{Name: name, Status: OK, Detail: "system time " + now.Format(time.RFC3339)}
	}
	skew := now.Sub(e.Health.Date)
	if skew < 0 {
		skew = -skew
	}
	// The HTTP Date header has 1 s resolution.
	if skew > maxSkew+time.Second {
		return Result{Name: name, Status: Fail, Detail: fmt.Sprintf("the daemon's clock differs from this one by %s", skew.Round(time.Second)), Fix: "sync both clocks (sudo timedatectl set-ntp true) and restart the daemon"}
	}
	return Result{Name: name, Status: OK, Detail: "system time " + now.Format(time.RFC3339) + ", daemon agrees"}
}
