package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/gateway"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/wire"
)

// pairDevice pairs a browser the way a managed launch does and initializes ACP on it.
func pairDevice(t *testing.T, d *daemontest.Daemon, dev *linktest.Device) (*linktest.Client, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var otp daemon.LaunchOTPResult
	d.Call(t, "launch.otp", nil, &otp)
	c, err := linktest.PairAndConnect(ctx, d.URL, dev, linktest.PairOptions{OTP: otp.OTP}, nil)
	if err != nil {
		t.Fatalf("pair: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}}, nil); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Connections []struct {
			DeviceID string `json:"deviceId"`
		} `json:"connections"`
	}
	d.Call(t, "status", nil, &st)
	for _, cn := range st.Connections {
		if cn.DeviceID != "" {
			return c, cn.DeviceID
		}
	}
	t.Fatal("no device connection in status")
	return nil, ""
}

// A revoked browser's side-panel agents stop with it, and pairing the browser again (a new
// device) does not bring them back.
func TestRevokeStopsTheDevicesAgents(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, func(o *daemon.Options) {
		o.Config.Agents = []config.Agent{{Name: "scripted", Command: agentBin}}
	})
	dev, err := linktest.NewDevice("Managed Chrome")
	if err != nil {
		t.Fatal(err)
	}
	c, devID := pairDevice(t, d, dev)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{},
		"_meta": map[string]any{"torii": map[string]any{"agent": "scripted"}}}, &res); err != nil {
		t.Fatalf("session/new: %v", err)
	}
	var gs struct {
		Sessions []gateway.SessionInfo `json:"sessions"`
	}
	d.Call(t, "gateway.sessions", nil, &gs)
	if len(gs.Sessions) != 1 || gs.Sessions[0].Pid == 0 {
		t.Fatalf("sessions before revoke: %+v", gs.Sessions)
	}
	pid := gs.Sessions[0].Pid

	var rev daemon.DevicesRevokeResult
	d.Call(t, "devices.revoke", map[string]string{"deviceId": devID}, &rev)
	if rev.AgentSessions != 1 {
		t.Errorf("revoke stopped %d agent sessions, want 1", rev.AgentSessions)
	}
	d.Call(t, "gateway.sessions", nil, &gs)
	if len(gs.Sessions) != 0 {
		t.Errorf("sessions after revoke: %+v", gs.Sessions)
	}
	// The agent process goes (reaped by the gateway once killed).
	waitGone(t, pid, 10*time.Second)

	// Re-paired, the browser is a new device: the old session is not there for it.
	c2, dev2 := pairDevice(t, d, dev)
	if dev2 == devID {
		t.Fatalf("re-pairing reused the revoked device id %s", devID)
	}
	err = c2.Call(ctx, "session/resume", map[string]any{"sessionId": res.SessionID, "cwd": "/", "mcpServers": []any{}}, nil)
	var re *wire.Error
	if !errors.As(err, &re) || re.Code != gateway.CodeUnknownSession {
		t.Fatalf("resume of the revoked device's session: %v, want unknown session", err)
	}
}

// A configured agent whose command does not exist: session/new names the config key to fix,
// and torii/agents (the side panel's roster, and `torii status`) says so before anyone tries.
func TestMissingAgentCommandNamesTheConfigKey(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, func(o *daemon.Options) {
		o.Config.Agents = []config.Agent{{Name: "scripted", Command: agentBin}, {Name: "ghost", Command: "torii-no-such-agent"},
			{Name: "gem", Preset: "gemini"}}
	})
	dev, _ := linktest.NewDevice("Chrome")
	c, _ := pairDevice(t, d, dev)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{},
		"_meta": map[string]any{"torii": map[string]any{"agent": "ghost"}}}, nil)
	var re *wire.Error
	if !errors.As(err, &re) || re.Code != wire.CodeInvalidParams {
		t.Fatalf("session/new for a missing command: %v", err)
	}
	for _, want := range []string{`agent "ghost" is not installed`, `"torii-no-such-agent"`, "agents[1].command", "config.json"} {
		if !strings.Contains(re.Message, want) {
			t.Errorf("error lacks %q: %s", want, re.Message)
		}
	}
	var data map[string]any
	if raw, ok := re.Data.(json.RawMessage); ok {
		_ = json.Unmarshal(raw, &data)
	}
	if data["code"] != gateway.CodeAgentNotInstalled || data["configKey"] != "agents[1].command" {
		t.Errorf("error data = %v", re.Data)
	}

	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	got := map[string]gateway.AgentInfo{}
	for _, a := range st.Agents.Agents {
		got[a.Name] = a
	}
	if got["scripted"].Status != "ready" || got["ghost"].Status != "not_installed" || !strings.Contains(got["ghost"].Detail, "agents[1].command") {
		t.Errorf("status agents: %+v", st.Agents.Agents)
	}
	if g := got["gem"]; g.Status == "not_installed" && !strings.Contains(g.Detail, "agents[2].preset") {
		t.Errorf("a missing preset command should name agents[2].preset: %+v", g)
	}
}
