package daemon

import "github.com/torii-browser/torii/internal/mcpserver"

// newMCPServer composes the one MCP server (internal/mcpserver) from the
// daemon's parts; relays share the control socket's connection budget.
func (d *daemon) newMCPServer(maxRelays int) *mcpserver.Server {
	s := mcpserver.New(mcpserver.Options{
		Version:   d.opts.Version,
		Log:       d.log,
		Broker:    d.broker,
		Result:    d.wrongDaemon,
		MaxRelays: maxRelays,
		HTTP: mcpserver.HTTPOptions{
			Tokens:         d.tokens,
			TokenLabel:     d.tokenLabel,
			Gateway:        d.gateway,
			Sessions:       d.mcpSess.wrap,
			NoteServer:     noteServer,
			SessionTimeout: d.mcpSess.lim.mcpIdle,
			TokenOrigins:   d.opts.Config.TokenOrigins,
			Ctx:            d.mcpCtx,
		},
	})
	// Resources are the session's files in the download sandbox (files.go).
	s.MCP().AddReceivingMiddleware(d.filesMiddleware(s.SessionOf))
	return s
}
