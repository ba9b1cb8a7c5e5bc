package gateway

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/wire"
)

// attach makes c the session's connection (last attach wins): the
// replaced connection's tunnels get mcp/disconnect, and c's declared
// servers are connected in the background.
func (s *Session) attach(c *link.Conn, servers []acp.MCPServer) {
	s.mu.Lock()
	s.conn = c
	s.attachGen++
	gen := s.attachGen
	old := s.bridges
	s.bridges = map[string]*mcpbridge.Bridge{}
	if s.reaper != nil {
		s.reaper.Stop()
		s.reaper = nil
	}
	s.mu.Unlock()
	s.buf.SetLive(true)
	for _, b := range old {
		go b.Close()
	}
	if len(old) > 0 {
		s.refreshTools()
	}
	for _, srv := range servers {
		go s.connectServer(c, gen, srv)
	}
}

func (s *Session) detach(c *link.Conn) {
	s.mu.Lock()
	if s.conn != c || s.closed {
		s.mu.Unlock()
		return
	}
	s.conn = nil
	s.attachGen++
	old := s.bridges
	s.bridges = map[string]*mcpbridge.Bridge{}
	s.reaper = time.AfterFunc(DetachedTTL, func() { s.close("no client attached for " + DetachedTTL.String()) })
	s.mu.Unlock()
	s.buf.SetLive(false)
	for _, b := range old {
		go b.Close()
	}
	if len(old) > 0 {
		s.refreshTools()
	}
}

func (s *Session) reattach(c *link.Conn, method string, params json.RawMessage) (any, error) {
	// Every check comes before attach: a rejected resume opens no tunnel.
	if s.g.opts.Initialized != nil && !s.g.opts.Initialized(c.ID()) {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "%s: call initialize first", method)
	}
	var p struct {
		MCPServers []json.RawMessage `json:"mcpServers"`
	}
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "%s: %v", method, err)
	}
	servers, perr := acp.ParseServers(p.MCPServers)
	if perr != nil {
		return nil, wire.Errorf(perr.Code, "%s: %s", method, strings.TrimPrefix(perr.Message, "session/new: "))
	}
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, wire.Errorf(CodeUnknownSession, "%s: the session is closed", method)
	}
	if method == "session/load" {
		// Replay the kept updates to this connection before it goes live.
		for _, u := range s.buf.History() {
			_ = c.Notify(c.Context(), "session/update", map[string]any{"sessionId": s.ID, "update": u})
		}
	}
	s.attach(c, servers)
	s.notifyStatus()
	s.g.log.Info("gateway: session re-attached", "session", s.ID, "conn", c.ID(), "method", method)
	return struct{}{}, nil
}
