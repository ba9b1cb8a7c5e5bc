package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/gateway"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/wire"
)

// GatewaySessionsResult is the control method `gateway.sessions`.
type GatewaySessionsResult struct {
	Sessions []gateway.SessionInfo `json:"sessions"`
}

// GatewayServersResult is the control method `gateway.servers`.
type GatewayServersResult struct {
	Servers []gateway.ServerInfo `json:"servers"`
}

// linkHandler serves ACP on /acp: the gateway's chat sessions
// (docs/gateway.md) first, then the link session of docs/protocol.md.
type linkHandler struct {
	agent *acp.Agent
	gw    *gateway.Gateway
	d     *daemon
}

// DeviceRename is the link method by which a paired extension renames its
// own device (the popup's name field); the result is {name}.
const DeviceRename = "torii/device/rename"

func (h linkHandler) Handle(ctx context.Context, c *link.Conn, method string, params json.RawMessage) (any, error) {
	switch method {
	case DeviceRename:
		return h.d.renameSelf(c, params)
	case FilesPut, FilesAdopt, FilesPath:
		return h.d.handleFiles(c, method, params)
	case FilesBegin, FilesChunk, FilesCommit, FilesCancel:
		return h.d.handleTransfer(c, method, params)
	}
	if method == browserlink.MethodChanged {
		h.d.toolsChanged(c)
		return nil, nil
	}
	if method == AuditWitness {
		return h.d.auditWitness(ctx, c, params)
	}
	if res, err, ok := h.gw.Handle(ctx, c, method, params); ok {
		return res, err
	}
	return h.agent.Handle(ctx, c, method, params)
}

func (h linkHandler) Closed(c *link.Conn) {
	h.d.xfers.DropOwner(c.ID())
	h.gw.Closed(c)
	h.agent.Closed(c)
}

// renameSelf renames the device behind c; only a paired device renames
// itself, and only itself (a token client has no device).
func (d *daemon) renameSelf(c *link.Conn, params json.RawMessage) (any, error) {
	i := c.Info()
	if i.Kind != link.KindDevice {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "%s: only a paired browser renames itself", DeviceRename)
	}
	var p struct {
		Name string `json:"name"`
	}
	if len(params) == 0 || json.Unmarshal(params, &p) != nil || p.Name == "" {
		return nil, wire.Errorf(wire.CodeInvalidParams, "%s: name is required", DeviceRename)
	}
	dev, err := d.renameDevice(DevicesRenameParams{Device: i.DeviceID, Name: p.Name})
	if err != nil {
		return nil, err
	}
	return map[string]string{"name": dev.Name}, nil
}

func (d *daemon) newGateway() *gateway.Gateway {
	cfg := d.opts.Config
	idle := time.Duration(cfg.AgentIdleTimeoutSec) * time.Second
	gw := gateway.New(gateway.Options{
		Agents: cfg.ResolvedAgents(), DefaultAgent: cfg.DefaultAgentName(), RelayLimit: cfg.RelayLimit,
		Policy: cfg.MCPServers, IdleTimeout: idle, Broker: d.broker, Initialized: d.agent.Initialized,
		MCPURL: d.mcpURL, Version: d.opts.Version, Logger: d.log, BridgeTimeout: d.opts.bridgeTimeout,
		Files: d.filesMiddleware,
	})
	d.broker.OnToolsChanged(gw.BrowserToolsChanged)
	// Pins that cannot apply are said at start; those that match none of a
	// server's real tools once a client declares it (the gateway logs it).
	for _, w := range cfg.MCPServers.Warnings() {
		d.log.Warn("config: " + w)
	}
	return gw
}

// mcpURL is /mcp as a spawned agent dials it.
func (d *daemon) mcpURL() string {
	scheme := "http"
	if d.scheme == "wss" {
		scheme = "https"
	}
	return scheme + "://" + d.listen + "/mcp"
}
