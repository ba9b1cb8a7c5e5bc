// Package cli implements the torii command line: one file per command, each
// parsed with the standard flag package.
//
// Exit codes: 0 ok, 1 failure, 2 usage error.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/suggest"
	"github.com/torii-browser/torii/internal/wire"
)

// Stdio is where a command reads and writes; tests substitute buffers.
type Stdio struct {
	In       io.Reader
	Out, Err io.Writer
}

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// UsageError is a bad command line; it exits 2 after printing the usage.
type UsageError struct {
	Cmd string // "" for the top level
	Msg string
}

func (e *UsageError) Error() string { return e.Msg }

// exitError carries an exit status for a failure already reported to the
// person (e.g. doctor's FAIL lines), so Main prints nothing more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// ErrNotRunning is what every daemon-needing command reports when no daemon
// answers on the control socket.
var ErrNotRunning = errors.New("torii daemon is not running (start it with `torii serve` or `torii launch`)")

type command struct {
	name    string
	summary string
	run     func(ctx context.Context, s Stdio, args []string) error
}

func commands() []command {
	return []command{
		{"serve", "run the daemon in the foreground", runServe},
		{"launch", "start the daemon and a managed browser with the extension, paired", runLaunch},
		{"stop", "stop the daemon and the managed browsers it launched", runStop},
		{"restart", "stop, then start the daemon and the managed browsers again", runRestart},
		{"reload", "make the daemon re-read config.json now and say what it applied", runReload},
		{"mcp", "stdio MCP server for an agent (starts the daemon if needed)", runMCP},
		{"exec", "call one browser tool from the shell: torii exec TOOL key=value…", runExec},
		{"tools", "list the browser tools the extension serves", runTools},
		{"status", "show the daemon, the extension link and live connections", runStatus},
		{"doctor", "check the set-up and print the fix for each problem", runDoctor},
		{"pair", "approve or deny a browser's pairing request", runPair},
		{"admin", "manage a team gateway: users, tokens, pairings, devices, audit", runAdmin},
		{"devices", "list or revoke paired browsers", runDevices},
		{"token", "create, list or revoke bearer tokens for token clients", runToken},
		{"servers", "list declared MCP servers, their tools as agents see them, and pins", runServers},
		{"audit", "show or export the metadata-only record of tool calls", runAudit},
		{"extension", "write out the built-in extension, or show its path or id", runExtension},
		{"version", "print the version", runVersion},
		{"help", "show help for a command", runHelp},
	}
}

// Main runs the command line and returns the exit status.
func Main(args []string, s Stdio) int {
	if s.In == nil {
		s.In = strings.NewReader("")
	}
	if len(args) == 0 {
		printUsage(s.Err)
		return ExitUsage
	}
	name := args[0]
	switch name {
	case "-h", "-help", "--help":
		printUsage(s.Out)
		return ExitOK
	}
	var cmd *command
	for _, c := range commands() {
		if c.name == name {
			cmd = &c
			break
		}
	}
	if cmd == nil {
		var names []string
		for _, c := range commands() {
			names = append(names, c.name)
		}
		if c := suggest.Closest(name, names); c != "" {
			fmt.Fprintf(s.Err, "torii: unknown command %q (did you mean %q?)\n\n", name, c)
		} else {
			fmt.Fprintf(s.Err, "torii: unknown command %q\n\n", name)
		}
		printUsage(s.Err)
		return ExitUsage
	}
	rest, err := takeDirFlags(args[1:])
	if err == nil {
		err = cmd.run(context.Background(), s, rest)
	}
	return report(s, cmd.name, err)
}

func report(s Stdio, name string, err error) int {
	var ue *UsageError
	var ee exitError
	var re *wire.Error
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(s.Err, "torii %s: %s\nRun `torii %s -h` for usage.\n", name, ue.Msg, name)
		return ExitUsage
	case errors.As(err, &re):
		// The daemon's message already names the method and the fix.
		fmt.Fprintf(s.Err, "torii %s: %s\n", name, re.Message)
		return ExitFailure
	default:
		fmt.Fprintf(s.Err, "torii %s: %v\n", name, err)
		return ExitFailure
	}
}

// newFlags makes a flag set whose parse errors become UsageErrors and whose
// -h prints the given synopsis before the flags.
func newFlags(s Stdio, name, synopsis string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(s.Err)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: torii %s\n", synopsis)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintln(fs.Output(), "\nflags:")
			fs.PrintDefaults()
		}
	}
	return fs
}

// parse parses args; -h prints usage to stdout and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, s Stdio, args []string) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	fs.SetOutput(s.Err)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(s.Out)
		fs.Usage()
		return flag.ErrHelp
	}
	if err != nil {
		return &UsageError{Cmd: fs.Name(), Msg: err.Error() + flagSuggestion(fs, err)}
	}
	return nil
}

// flagSuggestion is ` (did you mean --x?)` for an undefined flag near a
// defined one, or "".
func flagSuggestion(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if c := suggest.Closest(name, names); c != "" {
		return fmt.Sprintf(" (did you mean --%s?)", c)
	}
	return ""
}

// parseInterspersed lets flags follow positional arguments
// (`torii token list --json`, `torii pair list --json`), which the flag
// package alone stops at.
func parseInterspersed(fs *flag.FlagSet, s Stdio, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, s, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// dial connects to a running daemon; ErrNotRunning when there is none.
func dial(ctx context.Context) (*control.Client, config.Paths, error) {
	p, err := paths()
	if err != nil {
		return nil, p, err
	}
	c, err := control.Dial(ctx, p.Socket())
	if errors.Is(err, control.ErrDaemonNotRunning) {
		return nil, p, ErrNotRunning
	}
	return c, p, err
}
