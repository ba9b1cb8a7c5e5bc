package acp

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/wire"
)

// Gen is the MCP-over-ACP wire generation a declaration used; replies and
// mcp/connect use the same one.
type Gen string

const (
	GenA Gen = "A" // {"type":"acp","name":N,"id":U}; mcp/connect {"acpId":U}
	GenB Gen = "B" // {"type":"acp","name":N,"serverId":U}
)

// MCPServer is one declared type:"acp" server.
type MCPServer struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	Gen  Gen    `json:"gen"`
}

// Session is one ACP session on a connection.
type Session struct {
	ID         string      `json:"sessionId"`
	ConnID     string      `json:"connectionId"`
	Cwd        string      `json:"cwd"`
	MCPServers []MCPServer `json:"mcpServers"`
	CreatedAt  time.Time   `json:"createdAt"`
}

func (s *Session) clone() Session {
	c := *s
	c.MCPServers = slices.Clone(s.MCPServers)
	return c
}

type newSessionParams struct {
	Cwd        *string           `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
}

type serverDecl struct {
	Type     string  `json:"type"`
	Name     string  `json:"name"`
	ID       *string `json:"id"`
	ServerID *string `json:"serverId"`
}

// NewSessionResult is session/new's answer.
type NewSessionResult struct {
	SessionID string `json:"sessionId"`
}

func (a *Agent) newSession(c *link.Conn, params json.RawMessage) (any, error) {
	a.mu.Lock()
	inited := a.initialized[c.ID()]
	a.mu.Unlock()
	if !inited {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/new: call initialize first")
	}
	var p newSessionParams
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: %v", err)
	}
	if p.Cwd == nil || *p.Cwd == "" {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: cwd is required")
	}
	if p.MCPServers == nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: mcpServers is required (may be empty)")
	}
	servers, err := parseServers(p.MCPServers)
	if err != nil {
		return nil, err
	}
	s := &Session{ID: uuid.NewString(), ConnID: c.ID(), Cwd: *p.Cwd, MCPServers: servers, CreatedAt: a.now()}
	a.mu.Lock()
	if len(a.byConn[c.ID()]) >= maxSessions {
		a.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/new: at most %d sessions per connection", maxSessions)
	}
	if a.byConn[c.ID()] == nil {
		a.byConn[c.ID()] = map[string]bool{}
	}
	a.byConn[c.ID()][s.ID] = true
	a.sessions[s.ID] = s
	snapshot := s.clone()
	a.mu.Unlock()
	if a.OnSession != nil {
		a.OnSession(snapshot)
	}
	return NewSessionResult{SessionID: s.ID}, nil
}

// ParseServers validates an mcpServers array as session/new does and
// returns its type:"acp" declarations (the gateway's session/new,
// session/resume and session/load use it too).
func ParseServers(raw []json.RawMessage) ([]MCPServer, *wire.Error) { return parseServers(raw) }

// parseServers keeps the type:"acp" declarations (Gen A id or Gen B
// serverId); stdio/http/sse servers are not ours to start and are skipped.
func parseServers(raw []json.RawMessage) ([]MCPServer, *wire.Error) {
	out := []MCPServer{}
	seen := map[string]bool{}
	for i, r := range raw {
		var d serverDecl
		if err := json.Unmarshal(r, &d); err != nil {
			return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: mcpServers[%d]: %v", i, err)
		}
		if d.Type != "acp" {
			continue
		}
		bad := func(why string, a ...any) *wire.Error {
			return wire.Errorf(wire.CodeInvalidParams, "session/new: mcpServers[%d]: %s", i, fmt.Sprintf(why, a...))
		}
		if d.Name == "" {
			return nil, bad("name is required")
		}
		var s MCPServer
		switch {
		case d.ID != nil && d.ServerID != nil:
			return nil, bad("give id (Gen A) or serverId (Gen B), not both")
		case d.ID != nil:
			s = MCPServer{Name: d.Name, ID: *d.ID, Gen: GenA}
		case d.ServerID != nil:
			s = MCPServer{Name: d.Name, ID: *d.ServerID, Gen: GenB}
		default:
			return nil, bad("id (or serverId) is required")
		}
		if s.ID == "" || len(s.ID) > 128 {
			return nil, bad("id must be 1-128 characters")
		}
		if seen[s.ID] {
			return nil, bad("duplicate id %q", s.ID)
		}
		seen[s.ID] = true
		out = append(out, s)
		if len(out) > MaxACPServers {
			return nil, bad("at most %d type \"acp\" servers per session", MaxACPServers)
		}
	}
	return out, nil
}
