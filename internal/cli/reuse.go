package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/launcher"
	"github.com/torii-browser/torii/internal/osproc"
)

// RevokedBrowserError: the managed browser on the profile runs, but the device it paired as
// was revoked, so its extension can no longer connect.
type RevokedBrowserError struct {
	Profile  string
	PID      int
	DeviceID string
	Fix      string
}

func (e *RevokedBrowserError) Error() string {
	return fmt.Sprintf("the managed browser on profile %s is running (pid %d), but the device it paired as (%s) was revoked, so it cannot connect\n  fix: %s", e.Profile, e.PID, e.DeviceID, e.Fix)
}

// repairFix is the command line that re-pairs a managed browser: close it with the daemon,
// then launch a fresh one, which pairs through a new one-time secret.
func repairFix(headless bool) string {
	self := selfCommand()
	if headless || !hasDisplay() {
		return self + " stop && " + self + " launch --headless"
	}
	return self + " stop && " + self + " launch"
}

type reuseOptions struct {
	profile            string
	pid                int
	headless, policy   bool
	noWait, foreground bool
}

// reuseBrowser is a second `torii launch` on a profile whose browser runs: the daemon is
// started if it is not (the extension reconnects by itself), and the browser is reported.
func reuseBrowser(ctx context.Context, s Stdio, p config.Paths, o reuseOptions) error {
	rec := findRecord(p, o.profile, o.pid)
	client, err := ensureDaemonTold(ctx, s, p)
	if err != nil {
		return err
	}
	defer client.Close()
	if o.policy {
		fmt.Fprintf(s.Err, "torii: launch policy not applied (--reuse): the browser was already running, and its policy stays as it is\n")
	}
	headless := o.headless
	if rec != nil {
		headless = rec.Headless
	}
	var st statusResult
	if err := client.Call(ctx, "status", nil, &st); err != nil {
		return err
	}
	if rec == nil || rec.DeviceID == "" {
		// Not started by a torii launch that saw it pair: its device is unknown.
		fmt.Fprintf(s.Out, "Torii: a browser is already running on profile %s (pid %d); the daemon is at http://%s.\n", o.profile, o.pid, st.Listen)
		printAgentHint(s)
		return waitReused(o)
	}
	var devs devicesResult
	if err := client.Call(ctx, "devices.list", nil, &devs); err != nil {
		return err
	}
	var dev *device
	for i := range devs.Devices {
		if devs.Devices[i].DeviceID == rec.DeviceID {
			dev = &devs.Devices[i]
		}
	}
	if dev == nil {
		return &RevokedBrowserError{Profile: o.profile, PID: o.pid, DeviceID: rec.DeviceID, Fix: repairFix(headless)}
	}
	fmt.Fprintf(s.Err, "torii: the managed browser on profile %s is already running (pid %d); reusing it\n", o.profile, o.pid)
	if !dev.Connected && !o.noWait {
		// A daemon that just started: the extension reconnects on its own backoff.
		if err := waitDevice(ctx, client, rec.DeviceID); err != nil {
			return fmt.Errorf("the managed browser on profile %s (pid %d) runs, but its extension did not reconnect within %s\n  fix: %s", o.profile, o.pid, linkWait, repairFix(headless))
		}
	}
	fmt.Fprintf(s.Out, "Torii is ready: the managed browser is already running (pid %d, profile %s), paired as %q (%s); the daemon is at http://%s.\n",
		o.pid, o.profile, dev.Name, dev.DeviceID, st.Listen)
	printAgentHint(s)
	return waitReused(o)
}

// findRecord returns the launch record of the browser that holds the profile.
func findRecord(p config.Paths, profile string, pid int) *launcher.Record {
	rs, _ := launcher.LoadRecords(p.StateDir)
	for i := range rs {
		if rs[i].Profile == profile && rs[i].PID == pid {
			return &rs[i]
		}
	}
	return nil
}

// waitDevice waits for the device's extension to connect.
func waitDevice(ctx context.Context, c *control.Client, deviceID string) error {
	deadline := time.Now().Add(linkWait)
	for time.Now().Before(deadline) {
		var devs devicesResult
		if err := c.Call(ctx, "devices.list", nil, &devs); err != nil {
			return err
		}
		for _, d := range devs.Devices {
			if d.DeviceID == deviceID && d.Connected {
				if ok, err := toolsAttached(ctx, c); err != nil || ok {
					return err
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
	return fmt.Errorf("device %s did not connect", deviceID)
}

// waitReused: --foreground on a reused browser waits for it to exit (it is not our child).
func waitReused(o reuseOptions) error {
	if !o.foreground {
		return nil
	}
	for {
		if !osproc.Alive(o.pid) {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
}
