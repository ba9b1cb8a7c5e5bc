package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/launcher"
)

func runStatus(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "status", "status [--json]")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "status takes no arguments"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, p, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var raw json.RawMessage
	if err := c.Call(ctx, "status", nil, &raw); err != nil {
		return err
	}
	var st statusResult
	if err := json.Unmarshal(raw, &st); err != nil {
		return fmt.Errorf("decode status: %w", err)
	}
	var sess struct {
		Sessions []broker.SessionInfo `json:"sessions"`
		Broker   broker.Stats         `json:"broker"`
		Browsers []browserStatus      `json:"browsers"`
	}
	_ = json.Unmarshal(raw, &sess)
	var devs devicesResult
	if err := c.Call(ctx, "devices.list", nil, &devs); err != nil {
		return err
	}
	if *asJSON {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		m["stateDir"] = p.StateDir
		m["devices"] = devs.Devices
		if recs, err := launcher.LoadRecords(p.StateDir); err == nil {
			mb := []map[string]any{}
			for _, r := range recs {
				mb = append(mb, map[string]any{"pid": r.PID, "profile": r.Profile, "headless": r.Headless,
					"running": r.Running(), "deviceId": r.DeviceID, "deviceName": r.DeviceName, "unanswerable": r.Unanswerable})
			}
			m["managedBrowsers"] = mb
		}
		return writeJSON(s.Out, m)
	}
	w := s.Out
	up := "-"
	if !st.StartedAt.IsZero() {
		up = time.Since(st.StartedAt.Time).Round(time.Second).String()
	}
	fmt.Fprintf(w, "daemon:      running (pid %d, up %s, version %s)\n", st.PID, up, st.Version)
	fmt.Fprintf(w, "listen:      http://%s  (ws://%s/acp)\n", st.Listen, st.Listen)
	fmt.Fprintf(w, "daemon id:   %s\n", st.DaemonID)
	fmt.Fprintf(w, "state:       %s\n", p.StateDir)
	extra := decodeStatusExtra(raw)
	printConfigState(w, extra.Config)
	printAudit(w, raw)
	link := "down — run `" + launchFix() + "`, or open the Torii extension popup in your Chrome"
	if st.ExtensionConnected {
		link = "up"
	}
	fmt.Fprintf(w, "extension:   %s\n", link)
	printBrowsers(w, sess.Browsers)
	fmt.Fprintf(w, "connections: %d\n", len(st.Connections))
	for _, cn := range st.Connections {
		who := cn.DeviceName
		if who == "" {
			who = cn.DeviceID
		}
		fmt.Fprintf(w, "  %s  %s  %q  %s  since %s\n", cn.ID, cn.Kind, who, cn.Origin, cn.Since.short())
	}
	printManagedBrowsers(w, p)
	printSessions(w, sess.Sessions, sess.Broker)
	printAgentSessions(w, extra.AgentSessions)
	printConfiguredAgents(w, extra)
	return nil
}

// launchFix is the launch command that works on this machine: headless without a display.
func launchFix() string {
	if hasDisplay() {
		return "torii launch"
	}
	return "torii launch --headless"
}

// printSessions shows the agent sessions: tabs, queue depth, calls in
// flight and the latest calls with outcome and duration (never arguments).
func printSessions(w io.Writer, ss []broker.SessionInfo, st broker.Stats) {
	live := 0
	for _, s := range ss {
		if s.Ended == nil {
			live++
		}
	}
	fmt.Fprintf(w, "MCP sessions: %d live (calls in flight %d/%d, queued %d)\n", live, st.InFlight, st.MaxInFlight, st.Queued)
	for _, s := range ss {
		state := "live"
		if s.Ended != nil {
			state = "ended " + time.Since(*s.Ended).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(w, "  %q  %s  %s  %s  tabs %v  queued %d  in flight %d  calls %d\n",
			s.Label, s.Kind, s.ID, state, s.Tabs, s.Queued, s.InFlight, s.Calls)
		recent := s.Recent
		if len(recent) > 5 {
			recent = recent[len(recent)-5:]
		}
		for _, r := range recent {
			fmt.Fprintf(w, "      %s  %-14s %-22s %5dms (queued %dms)\n", r.At.Local().Format("15:04:05"), r.Tool, r.Outcome, r.DurationMs, r.WaitMs)
		}
	}
}
