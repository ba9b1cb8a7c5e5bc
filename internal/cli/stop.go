package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/launcher"
	"github.com/torii-browser/torii/internal/osproc"
)

// defaultStopGrace is how long stop waits for a clean exit before it kills.
const defaultStopGrace = 10 * time.Second

func runStop(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "stop", "stop [--timeout DURATION]\n\nStops the daemon and the managed browsers `torii launch` started: a clean shutdown\nfirst, then a kill once the timeout has passed. With nothing running it says so and\nexits 0.")
	grace := fs.Duration("timeout", defaultStopGrace, "how long to wait for a clean exit before killing")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "stop takes no arguments"}
	}
	p, err := paths()
	if err != nil {
		return err
	}
	_, err = stopAll(ctx, s, p, *grace)
	return err
}

func runRestart(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "restart", "restart [--timeout DURATION]\n\nStops the daemon and the managed browsers (as `torii stop`), starts the daemon again in\nthe background, and launches again each managed browser that was running, on its profile.")
	grace := fs.Duration("timeout", defaultStopGrace, "how long to wait for a clean exit before killing")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "restart takes no arguments"}
	}
	p, err := paths()
	if err != nil {
		return err
	}
	browsers, err := stopAll(ctx, s, p, *grace)
	if err != nil {
		return err
	}
	c, _, err := ensureDaemon(ctx, p)
	if err != nil {
		return err
	}
	var st statusResult
	err = c.Call(ctx, "status", nil, &st)
	c.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "started the daemon (pid %d, http://%s; log: %s)\n", st.PID, st.Listen, p.LogFile())
	for _, r := range browsers {
		args := []string{"--browser", r.Browser}
		if !r.DefaultDir {
			args = append(args, "--profile", r.Profile)
		}
		if r.Headless {
			args = append(args, "--headless")
		}
		if err := runLaunch(ctx, s, args); err != nil {
			return fmt.Errorf("relaunch the browser on profile %s: %w", r.Profile, err)
		}
	}
	return nil
}

// stopAll stops the daemon, then the recorded managed browsers that still run, and returns
// those browsers' records.
func stopAll(ctx context.Context, s Stdio, p config.Paths, grace time.Duration) ([]launcher.Record, error) {
	did := false
	if pid, held := daemonHolder(p); held {
		killed, err := stopDaemon(ctx, p, pid, grace)
		if err != nil {
			return nil, err
		}
		did = true
		if killed {
			fmt.Fprintf(s.Out, "stopped the daemon (pid %d): killed, it did not exit within %s\n", pid, grace)
		} else {
			fmt.Fprintf(s.Out, "stopped the daemon (pid %d)\n", pid)
		}
	}
	recs, err := launcher.LoadRecords(p.StateDir)
	if err != nil {
		fmt.Fprintf(s.Err, "torii stop: %v\n", err)
	}
	var stopped []launcher.Record
	for _, r := range recs {
		if r.Running() {
			killed := launcher.Terminate(r.PID, grace, r.Running)
			did = true
			stopped = append(stopped, r)
			how := ""
			if killed {
				how = fmt.Sprintf(": killed, it did not exit within %s", grace)
			}
			fmt.Fprintf(s.Out, "stopped the managed browser (pid %d, profile %s)%s\n", r.PID, r.Profile, how)
		}
		_ = launcher.RemoveRecord(p.StateDir, r.Profile)
	}
	if !did {
		fmt.Fprintf(s.Out, "nothing to stop: no torii daemon and no managed browser is running (state: %s)\n", p.StateDir)
	}
	return stopped, nil
}

// daemonHolder reports whether a daemon holds the state directory's lock, and its pid. The
// lock, not the socket, is the truth: a daemon whose control socket hangs still holds it.
func daemonHolder(p config.Paths) (pid int, held bool) {
	f, err := os.OpenFile(p.LockFile(), os.O_RDWR, 0)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := osproc.TryLock(f); err == nil {
		_ = osproc.Unlock(f)
		return 0, false
	}
	b, _ := os.ReadFile(p.LockFile())
	pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, true
}

// stopDaemon asks the daemon to shut down over the control socket (SIGTERM when it does not
// answer), and kills it if it still holds its lock after grace.
func stopDaemon(ctx context.Context, p config.Paths, pid int, grace time.Duration) (killed bool, err error) {
	asked := false
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	if c, err := control.Dial(cctx, p.Socket()); err == nil {
		asked = c.Call(cctx, "shutdown", nil, nil) == nil
		c.Close()
	}
	cancel()
	if !asked && pid > 0 {
		_ = osproc.Stop(pid, false, false)
	}
	if waitUnlocked(p, grace) {
		return false, nil
	}
	if pid <= 0 {
		return false, errors.New("the daemon did not stop and its pid is unknown\n  fix: find it with `ps -ef | grep 'torii serve'` and kill it")
	}
	_ = osproc.Stop(pid, false, true)
	if !waitUnlocked(p, 5*time.Second) {
		return true, fmt.Errorf("the daemon (pid %d) did not exit even after SIGKILL", pid)
	}
	// A killed daemon leaves its sockets; the next one replaces them, but tidy up now.
	_ = os.Remove(p.Socket())
	_ = os.Remove(p.MCPSocket())
	return true, nil
}

func waitUnlocked(p config.Paths, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		if _, held := daemonHolder(p); !held {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
}
