package daemon

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/mcpbridge"
)

// ToolServerName is the name the extension declares its browser-tool MCP
// server under in session/new ({"type":"acp","name":"torii",…}).
const ToolServerName = "torii"

// ToolsListResult is the control method `tools.list`: the catalogue as MCP
// Tool objects. Calls go over MCP (the MCP socket or /mcp), never control.
type ToolsListResult struct {
	Tools              []*mcp.Tool `json:"tools"`
	ExtensionConnected bool        `json:"extensionConnected"`
}

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
	d.claimDiscovery(true)
}

func (d *daemon) toolsList() ToolsListResult {
	return ToolsListResult{Tools: orEmpty(d.broker.Tools()), ExtensionConnected: d.broker.Connected()}
}

// seedCatalogue gives the broker the catalogue agents see before the
// browser connects.
func (d *daemon) seedCatalogue() error {
	tools := d.opts.Catalogue
	if tools == nil {
		var err error
		if tools, err = extension.Catalogue(); err != nil {
			return err
		}
	}
	d.broker.SeedCatalogue(tools)
	return nil
}
