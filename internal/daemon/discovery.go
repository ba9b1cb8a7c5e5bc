package daemon

import (
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/toolerr"
)

// The discovery record (config/discovery.go) names the daemon a client with
// a clean environment should use: the one that serves the person's browser.
// A daemon claims it when it starts and no other daemon holds it, and
// always when a browser attaches; a daemon without a browser whose record
// names another, live daemon answers wrong_daemon instead of
// extension_not_connected (SECURITY I-82).

// claimDiscovery writes the record for this daemon; with browser false it
// leaves a record that names another daemon that answers.
func (d *daemon) claimDiscovery(browser bool) {
	file := d.opts.DiscoveryFile
	if file == "" {
		return
	}
	if !browser {
		if other, ok := d.otherDaemon(); ok {
			d.log.Info("discovery: another daemon holds the record; left as it is", "stateDir", other.StateDir)
			return
		}
	}
	rec := config.Discovery{ConfigDir: d.opts.Paths.ConfigDir, StateDir: d.opts.Paths.StateDir, Listen: d.listen,
		PID: os.Getpid(), Browser: browser, Written: time.Now().UTC()}
	if err := config.WriteDiscovery(file, rec); err != nil {
		d.log.Warn("discovery: record not written", "file", file, "err", err)
	}
}

// otherDaemon is the record when it names another daemon whose control
// socket answers.
func (d *daemon) otherDaemon() (config.Discovery, bool) {
	if d.opts.DiscoveryFile == "" {
		return config.Discovery{}, false
	}
	rec, ok, err := config.ReadDiscovery(d.opts.DiscoveryFile)
	if err != nil || !ok || rec.StateDir == d.opts.Paths.StateDir || !control.Answers(rec.Paths().Socket()) {
		return config.Discovery{}, false
	}
	return rec, true
}

// wrongDaemon turns an extension_not_connected answer into wrong_daemon
// when this daemon has no browser and the record names another daemon
// that had one: the client is talking to the wrong daemon, and opening
// Chrome would not help.
func (d *daemon) wrongDaemon(res *mcp.CallToolResult) *mcp.CallToolResult {
	e := toolerr.FromResult(res)
	if e == nil || e.Code != toolerr.ExtensionNotConnected || d.broker.Connected() {
		return res
	}
	other, ok := d.otherDaemon()
	if !ok || !other.Browser {
		return res
	}
	return toolerr.Result(toolerr.WrongDaemon,
		"this daemon (state dir %s) has no browser; the daemon serving the browser (pid %d, %s) uses other dirs. "+
			"Start the client as `torii mcp%s` (or with no TORII_CONFIG_DIR/TORII_STATE_DIR set: it finds that daemon), then stop this one: `torii stop --state-dir %s`",
		d.opts.Paths.StateDir, other.PID, other.Listen, fmt.Sprintf(" --config-dir %s --state-dir %s", other.ConfigDir, other.StateDir), d.opts.Paths.StateDir)
}
