// Package config locates Torii's config and state directories and loads
// config.json.
package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Paths holds the two directories Torii uses: ConfigDir for what the person
// edits, StateDir for what the daemon owns (keys, devices, tokens, socket).
type Paths struct{ ConfigDir, StateDir string }

// ErrNoHome is returned when neither an override nor a home directory is known.
var ErrNoHome = errors.New("config: cannot determine home directory; set TORII_CONFIG_DIR and TORII_STATE_DIR")

// DefaultPaths: TORII_CONFIG_DIR / TORII_STATE_DIR env override; else
// os.UserConfigDir()/torii and $XDG_STATE_HOME/torii or ~/.local/state/torii.
func DefaultPaths() (Paths, error) { return defaultPaths(true) }

// StandardPaths are the dirs without the TORII_* overrides: where a client
// with a clean environment looks first.
func StandardPaths() (Paths, error) { return defaultPaths(false) }

func defaultPaths(useEnv bool) (Paths, error) {
	var p Paths
	if d := os.Getenv("TORII_CONFIG_DIR"); d != "" && useEnv {
		p.ConfigDir = d
	} else {
		base, err := os.UserConfigDir()
		if err != nil {
			return Paths{}, fmt.Errorf("%w: %v", ErrNoHome, err)
		}
		p.ConfigDir = filepath.Join(base, "torii")
	}
	if d := os.Getenv("TORII_STATE_DIR"); d != "" && useEnv {
		p.StateDir = d
	} else if x := os.Getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		// The XDG spec says relative values must be ignored.
		p.StateDir = filepath.Join(x, "torii")
	} else {
		home, err := os.UserHomeDir()
		if err != nil {
			return Paths{}, fmt.Errorf("%w: %v", ErrNoHome, err)
		}
		p.StateDir = filepath.Join(home, ".local", "state", "torii")
	}
	// Absolute paths so a daemon started from another cwd agrees with the CLI.
	var err error
	if p.ConfigDir, err = filepath.Abs(p.ConfigDir); err != nil {
		return Paths{}, err
	}
	if p.StateDir, err = filepath.Abs(p.StateDir); err != nil {
		return Paths{}, err
	}
	return p, nil
}

// Ensure creates both directories with mode 0700 and tightens them if looser.
//
// SECURITY I-9: the state dir holds keys and the control socket; 0700 keeps
// other users out even if a file inside were created with a loose mode.
func (p Paths) Ensure() error {
	for _, d := range []string{p.ConfigDir, p.StateDir} {
		if d == "" {
			return errors.New("config: empty directory in Paths")
		}
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("config: create %s: %w", d, err)
		}
		fi, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("config: stat %s: %w", d, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("config: %s is not a directory", d)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(d, fi.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("config: tighten %s to 0700: %w", d, err)
			}
		}
	}
	return nil
}

func (p Paths) ConfigFile() string { return filepath.Join(p.ConfigDir, "config.json") }
func (p Paths) Socket() string     { return filepath.Join(p.StateDir, "torii.sock") }
func (p Paths) MCPSocket() string  { return filepath.Join(p.StateDir, "mcp.sock") }
func (p Paths) LockFile() string   { return filepath.Join(p.StateDir, "torii.lock") }
func (p Paths) DaemonKey() string  { return filepath.Join(p.StateDir, "daemon.key") }
func (p Paths) Devices() string    { return filepath.Join(p.StateDir, "devices.json") }
func (p Paths) Tokens() string     { return filepath.Join(p.StateDir, "tokens.json") }
func (p Paths) Tickets() string    { return filepath.Join(p.StateDir, "tickets.json") }
func (p Paths) LogFile() string    { return filepath.Join(p.StateDir, "torii.log") }
