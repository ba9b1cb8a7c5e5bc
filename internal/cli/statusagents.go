package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/launcher"
)

// statusExtra is the part of the daemon's status these sections read.
type statusExtra struct {
	AgentSessions []agentSession `json:"agentSessions"`
	Agents        struct {
		Agents       []configuredAgent `json:"agents"`
		DefaultAgent string            `json:"defaultAgent"`
	} `json:"agents"`
	Config configState `json:"config"`
}

type agentSession struct {
	SessionID     string `json:"sessionId"`
	Agent         string `json:"agent"`
	Status        string `json:"status"`
	Detail        string `json:"detail"`
	BrowserAccess string `json:"browserAccess"`
	Attached      bool   `json:"attached"`
	Pid           int    `json:"pid"`
}

type configuredAgent struct {
	Name    string `json:"name"`
	Preset  string `json:"preset"`
	Command string `json:"command"`
	Status  string `json:"status"`
	Detail  string `json:"detail"`
}

func decodeStatusExtra(raw json.RawMessage) statusExtra {
	var x statusExtra
	_ = json.Unmarshal(raw, &x)
	return x
}

// printConfigState: the file in force, a change that was refused, keys waiting for a restart.
func printConfigState(w io.Writer, c configState) {
	if c.File == "" {
		return
	}
	fmt.Fprintf(w, "config:      %s (in force since %s)\n", c.File, c.LoadedAt.short())
	if c.Error != "" {
		fmt.Fprintf(w, "  NOT APPLIED: %s\n  fix: correct the file; the daemon picks it up by itself (or run `torii reload`)\n", c.Error)
	}
	if len(c.RestartNeeded) > 0 {
		fmt.Fprintf(w, "  changed, applies after `torii restart`: %s\n", strings.Join(c.RestartNeeded, ", "))
	}
}

// printConfiguredAgents lists config.json's agents and whether each can start.
func printConfiguredAgents(w io.Writer, x statusExtra) {
	fmt.Fprintf(w, "agents:      %d configured", len(x.Agents.Agents))
	if len(x.Agents.Agents) == 0 {
		fmt.Fprintf(w, " (add \"agents\" to config.json to chat from the side panel; docs/gateway.md)\n")
		return
	}
	fmt.Fprintf(w, ", default %q\n", x.Agents.DefaultAgent)
	for _, a := range x.Agents.Agents {
		line := fmt.Sprintf("  %-16s %-14s %s", a.Name, a.Status, a.Command)
		if a.Detail != "" {
			line += "\n      " + a.Detail
		}
		fmt.Fprintln(w, line)
	}
}

// printAgentSessions lists the side-panel agents: each a process the daemon spawned.
func printAgentSessions(w io.Writer, ss []agentSession) {
	fmt.Fprintf(w, "side-panel agents: %d running\n", len(ss))
	for _, s := range ss {
		att := "detached"
		if s.Attached {
			att = "attached"
		}
		line := fmt.Sprintf("  %s  %q  %s  %s  access %s  pid %d", s.SessionID, s.Agent, s.Status, att, s.BrowserAccess, s.Pid)
		if s.Detail != "" {
			line += "  (" + s.Detail + ")"
		}
		fmt.Fprintln(w, line)
	}
}

// printManagedBrowsers lists the browsers `torii launch` started and whether they still run.
func printManagedBrowsers(w io.Writer, p config.Paths) {
	rs, err := launcher.LoadRecords(p.StateDir)
	if err != nil {
		fmt.Fprintf(w, "managed browsers: %v\n", err)
		return
	}
	running := 0
	for _, r := range rs {
		if r.Running() {
			running++
		}
	}
	fmt.Fprintf(w, "managed browsers: %d running\n", running)
	for _, r := range rs {
		state := "not running"
		if r.Running() {
			state = "running"
		}
		paired := ""
		if r.DeviceID != "" {
			paired = fmt.Sprintf("  paired as %q (%s)", r.DeviceName, r.DeviceID)
		}
		mode := ""
		if r.Headless {
			mode = " headless"
		}
		fmt.Fprintf(w, "  pid %d  %s%s  profile %s%s\n", r.PID, state, mode, r.Profile, paired)
		if r.Headless && r.Unanswerable != "" && r.Running() {
			// SECURITY I-80: what this browser's calls cannot wait for.
			fmt.Fprintf(w, "      %s\n", r.Unanswerable)
		}
	}
}
