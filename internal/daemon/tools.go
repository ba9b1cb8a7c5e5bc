package daemon

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/link"
)

// ToolServerName is the name the extension declares its browser tools
// under in session/new ({"type":"acp","name":"torii",…}). The daemon then
// calls them directly on the link (internal/browserlink); foreign ACP hosts
// may reach the same tools over MCP-over-ACP.
const ToolServerName = "torii"

// ToolsListResult is the control method `tools.list`: the catalogue as MCP
// Tool objects. Calls go over MCP (the MCP socket or /mcp), never control.
type ToolsListResult struct {
	Tools              []*mcp.Tool `json:"tools"`
	ExtensionConnected bool        `json:"extensionConnected"`
}

// onSession opens the browser-tool server an authenticated extension
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
			// Not inline: session/new must be answered first, and opening
			// waits for the extension's catalogue.
			go d.connectToolServer(conn, srv)
			return
		}
	}
}

func (d *daemon) connectToolServer(conn *link.Conn, srv acp.MCPServer) {
	br, err := browserlink.Open(conn.Context(), conn, d.opts.bridgeTimeout, d.log)
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
		// Revoked while its catalogue was listed: SECURITY I-7, it never serves.
		br.Close()
		return
	}
	d.toolSrv.Store(conn.ID(), br)
	context.AfterFunc(br.Context(), func() { d.toolSrv.CompareAndDelete(conn.ID(), br) })
	d.broker.Attach(info.DeviceID, name, br)
	d.claimDiscovery(true)
}

// toolsChanged is torii/tools/changed: the extension's catalogue changed, so
// the daemon lists it again and agents hear notifications/tools/list_changed.
func (d *daemon) toolsChanged(conn *link.Conn) {
	v, ok := d.toolSrv.Load(conn.ID())
	if !ok {
		return
	}
	br := v.(*browserlink.Server)
	go func() {
		ctx, cancel := context.WithTimeout(br.Context(), browserlink.ListTimeout)
		defer cancel()
		if err := br.Refresh(ctx); err != nil {
			d.log.Warn("browser tool catalogue not refreshed", "conn", conn.ID(), "err", err)
			return
		}
		if dev, ok := d.devices.Get(conn.Info().DeviceID); ok {
			d.broker.Attach(dev.ID, dev.Name, br)
		}
	}()
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
