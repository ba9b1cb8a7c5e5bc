package cli

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
)

// Global flags every command takes, anywhere after the command name: they
// set the dirs as TORII_CONFIG_DIR / TORII_STATE_DIR would, and the
// command line carries them where a client passes no environment.
const (
	flagConfigDir = "--config-dir"
	flagStateDir  = "--state-dir"
)

// takeDirFlags removes --config-dir/--state-dir (with a value, as
// `--x V` or `--x=V`) from args and sets the matching variables, so the
// daemon a command starts inherits them. Arguments after `--` are left.
func takeDirFlags(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(out, args[i:]...), nil
		}
		flag := a
		if strings.HasPrefix(flag, "-") && !strings.HasPrefix(flag, "--") {
			flag = "-" + flag // the flag package takes -x as --x
		}
		name, val, hasVal := strings.Cut(flag, "=")
		env := map[string]string{flagConfigDir: "TORII_CONFIG_DIR", flagStateDir: "TORII_STATE_DIR"}[name]
		if env == "" {
			out = append(out, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, &UsageError{Msg: "flag needs an argument: " + name}
			}
			i++
			val = args[i]
		}
		if val == "" {
			return nil, &UsageError{Msg: name + " needs a folder"}
		}
		abs, err := filepath.Abs(val)
		if err != nil {
			return nil, &UsageError{Msg: name + ": " + err.Error()}
		}
		os.Setenv(env, abs)
	}
	return out, nil
}

// paths are the dirs a command uses: the flags or variables when given;
// else the daemon the discovery record names, when its control socket
// answers or its state dir holds a daemon's key (a client with a clean
// environment thus reaches the daemon of the person's browser, or starts it
// in the dirs the person chose); else the defaults.
func paths() (config.Paths, error) {
	def, err := config.DefaultPaths()
	if err != nil || config.EnvOverride() {
		return def, err
	}
	if d, ok := discovered(); ok {
		return d.Paths(), nil
	}
	return def, nil
}

// discovered is the discovery record if it names a daemon to follow.
func discovered() (config.Discovery, bool) {
	file, err := config.DiscoveryFile()
	if err != nil {
		return config.Discovery{}, false
	}
	d, ok, err := config.ReadDiscovery(file)
	if err != nil || !ok {
		return config.Discovery{}, false
	}
	if control.Answers(d.Paths().Socket()) {
		return d, true
	}
	if _, err := os.Stat(d.Paths().DaemonKey()); err == nil {
		return d, true
	}
	return config.Discovery{}, false
}

// dirFlags is " --config-dir X --state-dir Y" for the dirs that are not
// the defaults, so a printed command reaches this daemon from a clean
// environment; "" when both are the defaults.
func dirFlags(p config.Paths) string {
	def, _ := config.StandardPaths()
	var b strings.Builder
	if p.ConfigDir != def.ConfigDir {
		b.WriteString(" " + flagConfigDir + " " + shellQuote(p.ConfigDir))
	}
	if p.StateDir != def.StateDir {
		b.WriteString(" " + flagStateDir + " " + shellQuote(p.StateDir))
	}
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
