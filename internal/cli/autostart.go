package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/osproc"
)

// autostartTimeout bounds how long `torii mcp` / `torii launch` wait for a
// daemon they started to open its control socket.
const autostartTimeout = 10 * time.Second

// DaemonStartError: a background daemon did not come up. It carries the end
// of the daemon's log, which is where the reason is.
type DaemonStartError struct {
	Reason  string
	LogFile string
	LogTail string
}

func (e *DaemonStartError) Error() string {
	s := "could not start the torii daemon in the background: " + e.Reason
	if e.LogTail != "" {
		s += "\n--- last lines of " + e.LogFile + " ---\n" + e.LogTail
	}
	return s + "\n  fix: run `torii serve` in a terminal to see the error, or `torii doctor`"
}

// startLockFile serialises background starts, so N agents launching
// `torii mcp` at once start exactly one daemon. It is separate from the
// daemon's own lock, which the daemon holds for its whole life.
func startLockFile(p config.Paths) string { return filepath.Join(p.StateDir, "start.lock") }

// ensureDaemon returns a control connection to the daemon, starting
// `<this binary> serve` detached if none runs. started reports whether this
// call started it.
// ensureDaemonTold is ensureDaemon that tells the person, on stderr, when it started one.
func ensureDaemonTold(ctx context.Context, s Stdio, p config.Paths) (*control.Client, error) {
	c, started, err := ensureDaemon(ctx, p)
	if err == nil && started {
		fmt.Fprintf(s.Err, "torii: started the daemon in the background (log: %s)\n", p.LogFile())
	}
	return c, err
}

func ensureDaemon(ctx context.Context, p config.Paths) (c *control.Client, started bool, err error) {
	if c, err := control.Dial(ctx, p.Socket()); err == nil {
		return c, false, nil
	} else if !errors.Is(err, control.ErrDaemonNotRunning) {
		return nil, false, err
	}
	if err := p.Ensure(); err != nil {
		return nil, false, err
	}
	ctx, cancel := context.WithTimeout(ctx, autostartTimeout)
	defer cancel()

	unlock, err := lockFile(ctx, startLockFile(p))
	if err != nil {
		return nil, false, &DaemonStartError{Reason: "waiting for another torii to start the daemon: " + err.Error()}
	}
	defer unlock()

	// Whoever held the lock before us may have started it already.
	if c, err := control.Dial(ctx, p.Socket()); err == nil {
		return c, false, nil
	}

	exe, err := os.Executable()
	if err != nil {
		return nil, false, &DaemonStartError{Reason: "cannot find this program's path: " + err.Error()}
	}
	logf, err := os.OpenFile(p.LogFile(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, false, &DaemonStartError{Reason: "open log: " + err.Error()}
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, io.SeekEnd)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return nil, false, err
	}
	defer devnull.Close()

	// The daemon writes and rotates its own log; stderr also goes to the file
	// for what it prints before its logger exists.
	cmd := exec.Command(exe, "serve", "--log-file", p.LogFile())
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, logf, logf
	// The dirs this client resolved (flags, variables or the discovery
	// record), so the daemon it starts is the one it will dial.
	cmd.Env = append(os.Environ(), "TORII_CONFIG_DIR="+p.ConfigDir, "TORII_STATE_DIR="+p.StateDir)
	cmd.Dir = "/" // do not pin the caller's working directory
	// Own session: the daemon must outlive the agent that started it and not
	// get its terminal's signals.
	osproc.Detach(cmd)
	if err := cmd.Start(); err != nil {
		return nil, false, &DaemonStartError{Reason: err.Error()}
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }() // reaps it if it dies while we wait

	fail := func(reason string) (*control.Client, bool, error) {
		return nil, false, &DaemonStartError{Reason: reason, LogFile: p.LogFile(), LogTail: tailFrom(p.LogFile(), logStart, 15)}
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if c, err := control.Dial(ctx, p.Socket()); err == nil {
			return c, true, nil
		}
		select {
		case err := <-exited:
			// A daemon started by hand in the meantime makes ours exit with
			// "already running"; that one serves us just as well once its
			// socket is up, so give it a moment.
			grace := time.Now().Add(2 * time.Second)
			for time.Now().Before(grace) && ctx.Err() == nil {
				if c, derr := control.Dial(ctx, p.Socket()); derr == nil {
					return c, false, nil
				}
				time.Sleep(50 * time.Millisecond)
			}
			return fail(fmt.Sprintf("`torii serve` exited (%v)", err))
		case <-ctx.Done():
			return fail(fmt.Sprintf("the control socket did not appear within %s", autostartTimeout))
		case <-tick.C:
		}
	}
}

// lockFile takes an exclusive file lock, polling so the wait honours ctx.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := osproc.TryLock(f)
		if err == nil {
			return func() { _ = osproc.Unlock(f); f.Close() }, nil
		}
		if !errors.Is(err, osproc.ErrLocked) {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(25 * time.Millisecond):
		}
	}
}

// tailFrom returns the last n lines written to path after offset.
func tailFrom(path string, offset int64, n int) string {
	b, err := os.ReadFile(path)
	if err != nil || offset > int64(len(b)) {
		return ""
	}
	b = bytes.TrimSpace(b[offset:])
	lines := strings.Split(string(b), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
