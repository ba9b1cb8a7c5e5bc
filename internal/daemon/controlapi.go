package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"time"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/gateway"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/tokens"
	"github.com/torii-browser/torii/internal/wire"
)

// Control method results (docs/protocol.md, "Control socket").
type (
	StatusResult struct {
		Version            string          `json:"version"`
		PID                int             `json:"pid"`
		Listen             string          `json:"listen"`
		URL                string          `json:"url"`
		DaemonID           string          `json:"daemonId"`
		StartedAt          time.Time       `json:"startedAt"`
		Connections        []link.ConnInfo `json:"connections"`
		ExtensionConnected bool            `json:"extensionConnected"`
		// Sessions: agent sessions, live and recently ended, with their
		// tabs, queue depth, in-flight calls and latest calls (outcome and
		// duration, never arguments).
		Sessions []broker.SessionInfo `json:"sessions"`
		Broker   broker.Stats         `json:"broker"`
		// MCPSessions is the number of live /mcp sessions (bounded, SECURITY I-52).
		MCPSessions int `json:"mcpSessions"`
		// Browsers: every paired browser, connected now or not, and the
		// sessions acting in each (browsers.go).
		Browsers []BrowserStatus `json:"browsers"`
		// AgentSessions: the side-panel (gateway) chat sessions, each an agent process.
		AgentSessions []gateway.SessionInfo `json:"agentSessions"`
		// Agents: the configured agents, and whether each can start.
		Agents gateway.AgentsResult `json:"agents"`
		// Config: the file in force, and why a change to it was not applied.
		Config ConfigState `json:"config"`
		// Audit: the audit chain's head and the last cross-check with a browser.
		Audit *AuditStatus `json:"audit,omitempty"`
	}
	PairPendingResult struct {
		Requests []PendingPair `json:"requests"`
	}
	PairDecideParams struct {
		RequestID string `json:"requestId"`
		Approve   *bool  `json:"approve"`
	}
	PairDecideResult struct {
		DeviceID string `json:"deviceId,omitempty"`
	}
	DeviceInfo struct {
		DeviceID  string    `json:"deviceId"`
		Name      string    `json:"name"`
		Origin    string    `json:"origin"`
		CreatedAt time.Time `json:"createdAt"`
		LastSeen  time.Time `json:"lastSeen"`
		Connected bool      `json:"connected"`
	}
	DevicesListResult struct {
		Devices []DeviceInfo `json:"devices"`
	}
	DevicesRevokeParams struct {
		DeviceID string `json:"deviceId"`
	}
	DevicesRevokeResult struct {
		Closed        int `json:"closed"`
		AgentSessions int `json:"agentSessions"` // side-panel agents of the device that were stopped
	}
	TokensCreateParams struct {
		Label string `json:"label"`
	}
	TokensCreateResult struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	TokensListResult struct {
		Tokens []tokens.Token `json:"tokens"`
	}
	TokensRevokeParams struct {
		ID string `json:"id"`
	}
	// LaunchOTPParams: deviceName, if set, is the name the browser paired
	// with the secret gets (torii launch names its managed profile).
	LaunchOTPParams struct {
		DeviceName string `json:"deviceName,omitempty"`
	}
	// SessionsEndParams name the named session to end (`torii exec --session NAME --end`).
	SessionsEndParams struct {
		Name string `json:"name"`
	}
	LaunchOTPResult struct {
		OTP       string    `json:"otp"`
		ExpiresAt time.Time `json:"expiresAt"`
		URL       string    `json:"url"`
	}
)

func params[T any](raw json.RawMessage, method string) (T, error) {
	var v T
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, wire.Errorf(wire.CodeInvalidParams, "%s: %v", method, err)
	}
	return v, nil
}

func (d *daemon) handleControl(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	switch method {
	case "status":
		return StatusResult{Version: d.opts.Version, PID: os.Getpid(), Listen: d.listen, URL: d.wsURL(),
			DaemonID: d.identity.ID(), StartedAt: d.startedAt, Connections: d.link.Hub().Connections(),
			ExtensionConnected: d.link.Hub().ExtensionConnected(), Sessions: d.broker.Sessions(), Broker: d.broker.Stats(),
			MCPSessions: d.mcpSess.count(), Browsers: d.browsersStatus(), AgentSessions: d.gateway.Sessions(), Agents: d.gateway.Agents(),
			Config: d.configState(), Audit: d.auditStatus(ctx)}, nil
	case "config.reload":
		return d.reloadConfig(true), nil
	case "sessions.end":
		p, err := params[SessionsEndParams](raw, method)
		if err != nil {
			return nil, err
		}
		if p.Name == "" || !d.broker.EndNamed(broker.ClipLabel(p.Name)) {
			return nil, wire.Errorf(wire.CodeInvalidParams, "no named session %q (see `torii status`)", p.Name)
		}
		return struct{}{}, nil
	case "gateway.sessions":
		return GatewaySessionsResult{Sessions: d.gateway.Sessions()}, nil
	case "gateway.servers":
		return GatewayServersResult{Servers: d.gateway.Servers()}, nil
	case "pair.pending":
		return PairPendingResult{Requests: d.pairs.list()}, nil
	case "pair.decide":
		p, err := params[PairDecideParams](raw, method)
		if err != nil {
			return nil, err
		}
		if p.RequestID == "" || p.Approve == nil {
			return nil, wire.Errorf(wire.CodeInvalidParams, "pair.decide: requestId and approve are required")
		}
		id, err := d.pairs.decide(p.RequestID, *p.Approve)
		if err != nil {
			return nil, err
		}
		return PairDecideResult{DeviceID: id}, nil
	case "devices.list":
		live := d.link.Hub().ConnectedDevices()
		out := []DeviceInfo{}
		for _, dev := range d.devices.List() {
			out = append(out, DeviceInfo{DeviceID: dev.ID, Name: dev.Name, Origin: dev.Origin,
				CreatedAt: dev.CreatedAt, LastSeen: dev.LastSeen, Connected: live[dev.ID]})
		}
		return DevicesListResult{Devices: out}, nil
	case "devices.revoke":
		p, err := params[DevicesRevokeParams](raw, method)
		if err != nil {
			return nil, err
		}
		if err := d.devices.Revoke(p.DeviceID); err != nil {
			if errors.Is(err, pairing.ErrUnknownDevice) {
				return nil, wire.Errorf(wire.CodeInvalidParams, "devices.revoke: no device %q; see `torii devices`", p.DeviceID)
			}
			return nil, err
		}
		// SECURITY I-7: removed from the store first, then every live
		// connection of the device is closed at once.
		n := d.link.Hub().CloseDevice(p.DeviceID)
		d.broker.RevokeBrowser(p.DeviceID)
		// SECURITY I-61: the chat sessions the device opened end with it.
		m := d.gateway.CloseDevice(p.DeviceID)
		d.log.Info("device revoked", "device", p.DeviceID, "closed", n, "agentSessions", m)
		return DevicesRevokeResult{Closed: n, AgentSessions: m}, nil
	case "devices.rename":
		p, err := params[DevicesRenameParams](raw, method)
		if err != nil {
			return nil, err
		}
		if p.Device == "" || p.Name == "" {
			return nil, wire.Errorf(wire.CodeInvalidParams, "devices.rename: device and name are required")
		}
		return d.renameDevice(p)
	case "tokens.create":
		p, err := params[TokensCreateParams](raw, method)
		if err != nil {
			return nil, err
		}
		id, tok, err := d.tokens.Create(p.Label)
		if err != nil {
			return nil, wire.Errorf(wire.CodeInvalidParams, "tokens.create: %v", err)
		}
		return TokensCreateResult{ID: id, Token: tok}, nil
	case "tokens.list":
		return TokensListResult{Tokens: orEmpty(d.tokens.List())}, nil
	case "tokens.revoke":
		p, err := params[TokensRevokeParams](raw, method)
		if err != nil {
			return nil, err
		}
		if err := d.tokens.Revoke(p.ID); err != nil {
			return nil, wire.Errorf(wire.CodeInvalidParams, "tokens.revoke: %v", err)
		}
		// SECURITY I-35, I-52: the token's live link connections and /mcp
		// sessions end now, with their calls.
		n := d.link.Hub().CloseToken(p.ID)
		m := d.revokeHTTP(p.ID)
		d.log.Info("token revoked", "token", p.ID, "connections", n, "mcpSessions", m)
		return struct{}{}, nil
	case "launch.otp":
		p, err := params[LaunchOTPParams](raw, method)
		if err != nil {
			return nil, err
		}
		if p.DeviceName != "" && !pairing.ValidName(p.DeviceName) {
			return nil, wire.Errorf(wire.CodeInvalidParams, "launch.otp: deviceName must be 1-%d printable characters", pairing.MaxDeviceName)
		}
		otp, exp := d.otps.IssueNamed(p.DeviceName)
		// SECURITY I-10: the secret is returned to the (same-user) caller
		// only; it is never logged.
		frag := url.Values{"daemon": {d.wsURL()}, "otp": {otp}}.Encode()
		return LaunchOTPResult{OTP: otp, ExpiresAt: exp,
			URL: "chrome-extension://" + link.ExtensionID + "/connect.html#" + frag}, nil
	case "audit.query":
		return d.handleAuditQuery(ctx, raw)
	case "audit.tip":
		return d.handleAuditTip(ctx)
	case "tools.list":
		return d.toolsList(), nil
	case "shutdown":
		d.log.Info("shutdown requested over the control socket")
		d.stop()
		return struct{}{}, nil
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "control method %q not found", method)
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
