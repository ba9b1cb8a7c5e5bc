package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/torii-browser/torii/internal/atomicfile"
)

// The discovery record lets a client started with a clean environment (an
// MCP client that passes no variables to the server it spawns) find the
// daemon that serves the person's browser, even when that daemon runs with
// custom TORII_CONFIG_DIR / TORII_STATE_DIR. It always lives in the default
// state dir, whatever dirs the daemon itself uses.
//
// It stays when the daemon exits, so a client started later brings the
// daemon up again in the dirs the person chose.
//
// SECURITY I-82: it is 0600 in a 0700 folder, holds only paths, an address
// and a pid (never a secret), and a client follows it only to a control
// socket that answers: a stale or planted record can point nowhere a
// client would not go anyway, since every socket there is owner-only.

// Discovery is the record's content.
type Discovery struct {
	ConfigDir string    `json:"configDir"`
	StateDir  string    `json:"stateDir"`
	Listen    string    `json:"listen,omitempty"`
	PID       int       `json:"pid"`
	Browser   bool      `json:"browser,omitempty"` // a browser was connected when it was written
	Written   time.Time `json:"written"`
}

// ErrBadDiscovery: the record exists but cannot be used.
var ErrBadDiscovery = errors.New("config: the daemon discovery record is unreadable")

// DiscoveryFile is where the record lives: the default state dir
// ($XDG_STATE_HOME/torii or ~/.local/state/torii), ignoring TORII_STATE_DIR.
func DiscoveryFile() (string, error) {
	p, err := StandardPaths()
	if err != nil {
		return "", err
	}
	return filepath.Join(p.StateDir, "daemon.json"), nil
}

// Paths are the dirs the record names.
func (d Discovery) Paths() Paths { return Paths{ConfigDir: d.ConfigDir, StateDir: d.StateDir} }

// ReadDiscovery reads the record at path. ok is false when there is none;
// a record that is not JSON, names relative dirs or is open to other users
// is ErrBadDiscovery.
func ReadDiscovery(path string) (d Discovery, ok bool, err error) {
	raw, exists, err := atomicfile.ReadPrivate(path)
	if !exists {
		return d, false, nil
	}
	if err != nil {
		return d, false, fmt.Errorf("%w: %v", ErrBadDiscovery, err)
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		return Discovery{}, false, fmt.Errorf("%w: %s: %v", ErrBadDiscovery, path, err)
	}
	if !filepath.IsAbs(d.ConfigDir) || !filepath.IsAbs(d.StateDir) {
		return Discovery{}, false, fmt.Errorf("%w: %s: its dirs must be absolute", ErrBadDiscovery, path)
	}
	return d, true, nil
}

// WriteDiscovery writes the record at path (0600, its folder 0700).
func WriteDiscovery(path string, d Discovery) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(path, append(raw, '\n'), 0o600)
}

// EnvOverride reports whether the environment chooses the dirs
// (TORII_CONFIG_DIR or TORII_STATE_DIR set), so no record is consulted.
func EnvOverride() bool {
	return os.Getenv("TORII_CONFIG_DIR") != "" || os.Getenv("TORII_STATE_DIR") != ""
}
