package daemon

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/config"
)

// configPollEvery is how often the daemon looks at config.json for a change.
const configPollEvery = time.Second

// ConfigState is the config part of control `status` and the answer of `config.reload`.
type ConfigState struct {
	File     string    `json:"file"`
	LoadedAt time.Time `json:"loadedAt"`
	// Error: the file as it is now was not applied (syntax error, unknown key, invalid value);
	// the configuration in force is the one loaded at LoadedAt.
	Error   string     `json:"error,omitempty"`
	ErrorAt *time.Time `json:"errorAt,omitempty"`
	// RestartNeeded: keys changed in the file that apply only when the daemon restarts.
	RestartNeeded []string `json:"restartNeeded,omitempty"`
}

// ReloadResult is control `config.reload`.
type ReloadResult struct {
	ConfigState
	Changed bool     `json:"changed"`           // the file differed from what was last read
	Applied []string `json:"applied,omitempty"` // keys applied now
}

// configWatch holds the configuration in force and what the file last held.
type configWatch struct {
	mu sync.Mutex
	// start is the file's configuration when the daemon started (what the restart keys hold);
	// last is the one last applied (what the live keys hold). Both are as the file says, so
	// `torii serve --listen` does not count as a change.
	start, last config.Config
	lastData    []byte // the file's bytes (or "missing") at the last look
	state       ConfigState
}

var missingConfig = []byte("\x00missing")

func readConfigBytes(path string) []byte {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return missingConfig
	}
	if err != nil {
		return []byte("\x00error: " + err.Error())
	}
	return b
}

func (d *daemon) initConfigWatch() {
	path := d.opts.Paths.ConfigFile()
	base, err := config.Load(d.opts.Paths)
	if err != nil {
		base = d.opts.Config
	}
	d.cfg = &configWatch{start: base, last: base, lastData: readConfigBytes(path),
		state: ConfigState{File: path, LoadedAt: time.Now()}}
}

// watchConfig polls config.json and reloads it when its bytes change (no file-notification
// dependency; a read of a small file each second costs nothing).
func (d *daemon) watchConfig(ctx context.Context, every time.Duration) {
	if every <= 0 {
		every = configPollEvery
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.reloadConfig(false)
		}
	}
}

// reloadConfig reads config.json; with force it does so even if the bytes did not change
// (`torii reload`). A file that does not load or validate changes nothing but the error shown.
func (d *daemon) reloadConfig(force bool) ReloadResult {
	w := d.cfg
	w.mu.Lock()
	defer w.mu.Unlock()
	data := readConfigBytes(w.state.File)
	changed := !bytes.Equal(data, w.lastData)
	if !changed && !force {
		return ReloadResult{ConfigState: w.state}
	}
	w.lastData = data
	next, err := config.Load(d.opts.Paths)
	if err == nil {
		err = next.Validate()
	}
	if err != nil {
		now := time.Now()
		if changed || w.state.Error != err.Error() {
			d.log.Warn("config not applied; the configuration in force stays", "file", w.state.File, "err", err)
		}
		w.state.Error, w.state.ErrorAt = err.Error(), &now
		return ReloadResult{ConfigState: w.state, Changed: changed}
	}
	w.state.Error, w.state.ErrorAt = "", nil
	var applied, restart []string
	for _, k := range config.ChangedKeys(w.last, next) {
		if !config.NeedsRestart(k) {
			applied = append(applied, k)
		}
	}
	for _, k := range config.ChangedKeys(w.start, next) {
		if config.NeedsRestart(k) {
			restart = append(restart, k)
		}
	}
	if len(applied) > 0 {
		d.applyConfig(next)
		w.state.LoadedAt = time.Now()
	}
	w.last = next
	w.state.RestartNeeded = restart
	if len(applied) > 0 || (changed && len(restart) > 0) {
		// Warn, the daemon's default level: a person changed the daemon's behaviour.
		d.log.Warn("config reloaded", "file", w.state.File, "applied", applied, "restartNeeded", restart)
	}
	return ReloadResult{ConfigState: w.state, Changed: changed, Applied: applied}
}

// applyConfig puts the keys that apply live into force.
func (d *daemon) applyConfig(c config.Config) {
	d.broker.SetLimits(c.Broker)
	d.broker.SetToolGroups(c.Broker.ToolGroups)
	d.gateway.Reconfigure(c.ResolvedAgents(), c.DefaultAgentName(), c.RelayLimit, c.MCPServers,
		time.Duration(c.AgentIdleTimeoutSec)*time.Second)
}

// configState is the config part of status.
func (d *daemon) configState() ConfigState {
	d.cfg.mu.Lock()
	defer d.cfg.mu.Unlock()
	s := d.cfg.state
	s.RestartNeeded = slices.Clone(s.RestartNeeded)
	return s
}
