package daemon

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/jsonrpc"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/mcpbridge"
)

// ToolServerName is the name the extension declares its browser-tool MCP
// server under in session/new ({"type":"acp","name":"torii",…}).
const ToolServerName = "torii"

// maxCallTimeout caps a tools.call timeoutMs.
const maxCallTimeout = mcpbridge.DefaultCallTimeout

// Control method params and results for the browser tools.
type (
	// ToolsListResult is `tools.list`: the catalogue as MCP Tool objects.
	ToolsListResult struct {
		Tools              []*mcp.Tool `json:"tools"`
		ExtensionConnected bool        `json:"extensionConnected"`
	}
	// ToolsCallParams is `tools.call`. The result is the MCP CallToolResult.
	ToolsCallParams struct {
		Name         string          `json:"name"`
		Arguments    json.RawMessage `json:"arguments,omitempty"`
		SessionLabel string          `json:"sessionLabel,omitempty"`
		// CallID, chosen by the caller, lets `tools.cancel` abort this call.
		CallID string `json:"callId,omitempty"`
		// TimeoutMs shortens the default 180 s deadline.
		TimeoutMs int64 `json:"timeoutMs,omitempty"`
	}
	// ToolsCancelParams is `tools.cancel`.
	ToolsCancelParams struct {
		CallID string `json:"callId"`
	}
	// ToolsCancelResult tells whether a running call was found.
	ToolsCancelResult struct {
		Cancelled bool `json:"cancelled"`
	}
)

// onSession connects to the browser-tool server an authenticated extension
// declares. Token clients (other side panels) may declare servers, but
// only a paired, signed-in extension provides the browser tools
// (SECURITY I-35).
func (d *daemon) onSession(s acp.Session) {
	conn := d.link.Hub().Get(s.ConnID)
	if conn == nil || conn.Info().Kind != link.KindDevice {
		return
	}
	for _, srv := range s.MCPServers {
		if srv.Name == ToolServerName {
			// Not inline: session/new must be answered first, and the
			// connector waits for the provider's replies.
			go d.connectToolServer(conn, srv)
			return
		}
	}
}

func (d *daemon) connectToolServer(conn *link.Conn, srv acp.MCPServer) {
	br, err := mcpbridge.Connect(conn.Context(), conn, srv, mcpbridge.Options{
		ClientName: "torii", ClientVersion: d.opts.Version, Logger: d.log, ConnectTimeout: d.opts.bridgeTimeout})
	if err != nil {
		// Never registered: calls keep failing with extension_not_connected.
		d.log.Warn("browser tool server not connected", "conn", conn.ID(), "err", err)
		return
	}
	info := conn.Info()
	name := info.DeviceName
	if dev, ok := d.devices.Get(info.DeviceID); ok {
		name = dev.Name
	} else {
		// Revoked while the bridge connected: SECURITY I-7, it never serves.
		br.Close()
		return
	}
	d.broker.Attach(info.DeviceID, name, br)
}

// calls tracks tools.call by callId for tools.cancel.
type calls struct {
	mu sync.Mutex
	m  map[string]context.CancelFunc
}

func (c *calls) add(id string, cancel context.CancelFunc) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]context.CancelFunc{}
	}
	if _, dup := c.m[id]; dup {
		return false
	}
	c.m[id] = cancel
	return true
}

func (c *calls) remove(id string) {
	c.mu.Lock()
	delete(c.m, id)
	c.mu.Unlock()
}

func (c *calls) cancel(id string) bool {
	c.mu.Lock()
	f := c.m[id]
	c.mu.Unlock()
	if f != nil {
		f()
	}
	return f != nil
}

func (d *daemon) handleToolsControl(ctx context.Context, method string, raw json.RawMessage) (any, error) {
	switch method {
	case "tools.list":
		return ToolsListResult{Tools: orEmpty(d.broker.Tools()), ExtensionConnected: d.broker.Connected()}, nil
	case "tools.call":
		p, err := params[ToolsCallParams](raw, method)
		if err != nil {
			return nil, err
		}
		if p.Name == "" {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools.call: name is required")
		}
		if p.TimeoutMs < 0 || time.Duration(p.TimeoutMs)*time.Millisecond > maxCallTimeout {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools.call: timeoutMs must be 0-%d", maxCallTimeout.Milliseconds())
		}
		// The control connection's context: a caller that hangs up cancels.
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		if p.CallID != "" {
			if !d.calls.add(p.CallID, cancel) {
				return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools.call: callId %q is already running", p.CallID)
			}
			defer d.calls.remove(p.CallID)
		}
		// The shared cli session of its label (`torii exec`); agents'
		// own sessions are MCP sessions (mcpserve.go).
		return d.broker.CallTool(ctx, broker.Call{Name: p.Name, Arguments: p.Arguments, Session: p.SessionLabel,
			Timeout: time.Duration(p.TimeoutMs) * time.Millisecond}), nil
	case "tools.cancel":
		p, err := params[ToolsCancelParams](raw, method)
		if err != nil {
			return nil, err
		}
		return ToolsCancelResult{Cancelled: d.calls.cancel(p.CallID)}, nil
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "control method %q not found", method)
}
