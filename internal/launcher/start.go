package launcher

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/osproc"
)

// exitProfileInUse is Chromium's RESULT_CODE_PROFILE_IN_USE: another browser
// process already owns --user-data-dir.
const exitProfileInUse = 21

// ProfileInUseError: the dedicated profile is held by a browser that is
// still running (usually an earlier `torii launch`).
type ProfileInUseError struct{ Profile string }

func (e *ProfileInUseError) Error() string {
	return fmt.Sprintf("the browser profile %s is in use by another browser process\n  fix: `torii stop` closes a browser torii launch started; otherwise close that browser, or pass --profile DIR", e.Profile)
}

// ExitedError: the browser ended before it was expected to.
type ExitedError struct {
	Code    int
	LogFile string
}

func (e *ExitedError) Error() string {
	s := fmt.Sprintf("the browser exited with status %d", e.Code)
	if e.LogFile != "" {
		s += "; its output is in " + e.LogFile
	}
	return s
}

// Process is a started browser.
type Process struct {
	cmd     *exec.Cmd
	profile string
	logFile string
	done    chan struct{}
	err     error
}

// Start runs the browser in its own session (so it outlives `torii launch`
// and a Ctrl-C in the launching terminal does not reach it) with stdin
// closed and output appended to o.LogFile.
func Start(o Options) (*Process, error) {
	if o.Browser == "" || o.Profile == "" || o.ExtensionDir == "" {
		return nil, errors.New("launcher: Browser, Profile and ExtensionDir are required")
	}
	if err := os.MkdirAll(o.Profile, 0o700); err != nil {
		return nil, fmt.Errorf("launcher: create profile: %w", err)
	}
	cmd := exec.Command(o.Browser, Args(o)...)
	osproc.Detach(cmd)
	if o.LogFile != "" {
		f, err := os.OpenFile(o.LogFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, fmt.Errorf("launcher: open browser log: %w", err)
		}
		defer f.Close() // the child holds its own copy
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("launcher: start %s: %w", o.Browser, err)
	}
	p := &Process{cmd: cmd, profile: o.Profile, logFile: o.LogFile, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			if ee.ExitCode() == exitProfileInUse {
				err = &ProfileInUseError{Profile: p.profile}
			} else {
				err = &ExitedError{Code: ee.ExitCode(), LogFile: p.logFile}
			}
		}
		p.err = err
		close(p.done)
	}()
	return p, nil
}

// PID is the browser's process id (also its process-group id).
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed when the browser has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err is the exit error once Done is closed: nil for status 0,
// *ProfileInUseError or *ExitedError otherwise.
func (p *Process) Err() error { <-p.done; return p.err }

// Stop asks the browser's whole process group to end (kill: at once):
// Chromium's renderers and zygote must go with it.
func (p *Process) Stop(kill bool) error {
	return osproc.Stop(p.cmd.Process.Pid, true, kill)
}

// Version runs `browser --version` and returns its trimmed output, e.g.
// "Chromium 156.0.8078.108 built on Debian GNU/Linux 12 (bookworm)".
func Version(ctx context.Context, browser string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, "--version").Output()
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", browser, err)
	}
	// Debian's wrapper script prints shell noise first; the version is the last line.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	v := strings.TrimSpace(lines[len(lines)-1])
	if v == "" {
		return "", fmt.Errorf("%s --version printed nothing", browser)
	}
	return v, nil
}
