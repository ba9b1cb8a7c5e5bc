// Package doctor checks a Torii set-up piece by piece and says, for each
// failure, the exact command or action that fixes it. Connection failures
// are the most common complaint about browser-agent tools; every check here
// is meant to make one of them self-explaining.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/launcher"
)

// Status of one check.
type Status string

const (
	OK   Status = "ok"
	Warn Status = "warn"
	Fail Status = "FAIL"
)

// Result is one check's outcome. Fix is set for Fail (and for Warn when
// there is something to do).
type Result struct {
	Name   string `json:"name"`
	Status Status `json:"status"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Options are doctor's inputs; zero fields get real defaults.
type Options struct {
	Paths  config.Paths
	Finder *launcher.Finder // browser discovery; nil = launcher.DefaultFinder()
	HTTP   *http.Client
	Now    func() time.Time
	// BuiltExtension reports whether the binary embeds the extension.
	BuiltExtension func() bool
	// Self is how a printed fix names this program: "torii" when that is on PATH, else its
	// path, so that every fix runs as printed. "" = "torii".
	Self string
	// Getenv reads the environment (the display variables); nil = os.Getenv.
	Getenv func(string) string
}

// Env is what the checks look at, gathered once so each check stays a small
// pure function of it.
type Env struct {
	Options
	Config    config.Config
	ConfigErr error
	DialErr   error // nil when the daemon answered
	Status    *DaemonStatus
	StatusErr error
	Devices   []Device
	DevErr    error

	Health *Health // the daemon's /healthz, when the daemon runs

	// Browsers are the managed browsers `torii launch` recorded that still run.
	Browsers []launcher.Record
}

// Health is what GET /healthz on the daemon's listen address returned.
type Health struct {
	URL        string
	Err        error // transport error
	StatusCode int
	DaemonID   string
	Torii      bool      // the body was torii's {"ok":true,...}
	Date       time.Time // the response's Date header: the daemon's clock
}

// DaemonStatus is the part of the control `status` result doctor reads.
type DaemonStatus struct {
	Version            string `json:"version"`
	PID                int    `json:"pid"`
	Listen             string `json:"listen"`
	DaemonID           string `json:"daemonId"`
	ExtensionConnected bool   `json:"extensionConnected"`
	Connections        []struct {
		ID       string `json:"id"`
		DeviceID string `json:"deviceId"`
	} `json:"connections"`
	Browsers []BrowserStatus `json:"browsers"`
	Agents   struct {
		Agents []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
			Detail string `json:"detail"`
		} `json:"agents"`
	} `json:"agents"`
	Config struct {
		File          string   `json:"file"`
		Error         string   `json:"error"`
		RestartNeeded []string `json:"restartNeeded"`
	} `json:"config"`
	Audit *AuditStatus `json:"audit"`
}

// AuditStatus is the part of `status`'s audit doctor reads.
type AuditStatus struct {
	Head struct {
		Seq int64 `json:"seq"`
	} `json:"head"`
	CrossCheck *struct {
		DeviceName string `json:"deviceName"`
		Checked    int    `json:"checked"`
		OK         bool   `json:"ok"`
		Seq        int64  `json:"seq"`
		Mismatch   string `json:"mismatch"`
	} `json:"crossCheck"`
	Problem *struct {
		Problem string `json:"problem"`
		Detail  string `json:"detail"`
		Next    string `json:"next"`
	} `json:"problem"`
}

// BrowserStatus is the part of a `status` browsers entry doctor reads.
type BrowserStatus struct {
	DeviceID  string `json:"deviceId"`
	Name      string `json:"name"`
	Connected bool   `json:"connected"`
	Serving   bool   `json:"serving"`
	Default   bool   `json:"default"`
	Sessions  []struct {
		Label string `json:"label"`
	} `json:"sessions"`
}

// Device is the part of a `devices.list` entry doctor reads.
type Device struct {
	DeviceID  string `json:"deviceId"`
	Name      string `json:"name"`
	Connected bool   `json:"connected"`
}

// Check is one independent check.
type Check func(ctx context.Context, e *Env) Result

// Checks is the ordered list Run executes.
var Checks = []Check{
	checkStateDir,
	checkConfigDir,
	checkDaemonKey,
	checkDevicesFile,
	checkTokensFile,
	checkConfig,
	checkDaemon,
	checkPins,
	checkHTTP,
	checkBrowser,
	checkExtensionBuilt,
	checkLink,
	checkBrowsers,
	checkPaired,
	checkAgents,
	checkClock,
	checkAudit,
}

// Gather probes the daemon once (if it runs) for the checks to read.
func Gather(ctx context.Context, o Options) *Env {
	if o.HTTP == nil {
		o.HTTP = &http.Client{Timeout: 5 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Finder == nil {
		f := launcher.DefaultFinder()
		o.Finder = &f
	}
	if o.Self == "" {
		o.Self = "torii"
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	e := &Env{Options: o}
	recs, _ := launcher.LoadRecords(o.Paths.StateDir)
	for _, r := range recs {
		if r.Running() {
			e.Browsers = append(e.Browsers, r)
		}
	}
	e.Config, e.ConfigErr = config.Load(o.Paths)
	if e.ConfigErr == nil {
		e.ConfigErr = e.Config.Validate()
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := control.Dial(dctx, o.Paths.Socket())
	if err != nil {
		e.DialErr = err
		return e
	}
	defer c.Close()
	var st DaemonStatus
	if err := c.Call(dctx, "status", nil, &st); err != nil {
		e.StatusErr = err
	} else {
		e.Status = &st
	}
	var dl struct {
		Devices []Device `json:"devices"`
	}
	if err := c.Call(dctx, "devices.list", nil, &dl); err != nil {
		e.DevErr = err
	} else {
		e.Devices = dl.Devices
	}
	if e.Status != nil {
		e.Health = fetchHealth(ctx, e)
	}
	return e
}

// Run gathers and runs every check.
func Run(ctx context.Context, o Options) []Result {
	e := Gather(ctx, o)
	out := make([]Result, 0, len(Checks))
	for _, c := range Checks {
		out = append(out, c(ctx, e))
	}
	return out
}

// Failed reports whether any result is a Fail.
func Failed(rs []Result) bool {
	for _, r := range rs {
		if r.Status == Fail {
			return true
		}
	}
	return false
}

// Print writes one line per result, and the fix under each that has one.
func Print(w io.Writer, rs []Result) {
	for _, r := range rs {
		fmt.Fprintf(w, "%-4s %s: %s\n", r.Status, r.Name, r.Detail)
		if r.Fix != "" && r.Status != OK {
			fmt.Fprintf(w, "  fix: %s\n", r.Fix)
		}
	}
}

// PrintJSON writes {"ok": bool, "checks": [...]}.
func PrintJSON(w io.Writer, rs []Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		OK     bool     `json:"ok"`
		Checks []Result `json:"checks"`
	}{!Failed(rs), rs})
}

// daemonUp reports whether the status probe worked; dependants skip if not.
func (e *Env) daemonUp() bool { return e.DialErr == nil && e.Status != nil }

func skipped(name string, e *Env) Result {
	why := "daemon not running"
	if e.DialErr == nil && e.StatusErr != nil {
		why = "daemon status failed"
	}
	return Result{Name: name, Status: Warn, Detail: "skipped: " + why}
}

// headless reports whether a browser here must run headless: no display to open a window on.
func (e *Env) headless() bool {
	if runtime.GOOS != "linux" && !strings.HasSuffix(runtime.GOOS, "bsd") {
		return false
	}
	return e.Getenv("DISPLAY") == "" && e.Getenv("WAYLAND_DISPLAY") == ""
}

// launchCmd is the `torii launch` that works on this machine.
func (e *Env) launchCmd() string {
	if e.headless() {
		return e.Self + " launch --headless"
	}
	return e.Self + " launch"
}

// repairCmd re-pairs a managed browser whose device was revoked: stop it (and the daemon),
// then launch a fresh one, which pairs through a new one-time secret.
func (e *Env) repairCmd() string { return e.Self + " stop && " + e.launchCmd() }

// revokedBrowser is a running managed browser whose recorded device is no longer paired.
func (e *Env) revokedBrowser() *launcher.Record {
	if e.DevErr != nil || !e.daemonUp() {
		return nil
	}
	paired := map[string]bool{}
	for _, d := range e.Devices {
		paired[d.DeviceID] = true
	}
	for i, b := range e.Browsers {
		if b.DeviceID != "" && !paired[b.DeviceID] {
			return &e.Browsers[i]
		}
	}
	return nil
}

var errNotRunning = control.ErrDaemonNotRunning

func isNotRunning(err error) bool { return errors.Is(err, errNotRunning) }
