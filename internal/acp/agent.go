// Package acp is the agent side of ACP for authenticated /acp clients:
// initialize, session/new (recording the client's declared MCP-over-ACP
// servers) and liveness probes. Tunnelling MCP over the link builds on the
// sessions recorded here.
package acp

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/wire"
)

// ProtocolVersion is the ACP major version torii speaks.
const ProtocolVersion = 1

// MaxACPServers per session, as in OpenAB's contract.
const MaxACPServers = 8

// maxSessions per connection bounds what one client can make us hold.
const maxSessions = 64

// Agent answers ACP on link connections. It implements link.Handler.
type Agent struct {
	name, version string
	now           func() time.Time

	mu          sync.Mutex
	initialized map[string]bool            // by connection
	sessions    map[string]*Session        // by session ID
	byConn      map[string]map[string]bool // connection -> session IDs

	// OnSession, if set, is called after each session/new (outside locks).
	OnSession func(Session)
	// LoadSession is advertised in initialize (true when the daemon's
	// gateway serves session/load; docs/gateway.md).
	LoadSession bool
}

// New returns an Agent reporting the given version in agentInfo.
func New(version string) *Agent {
	return &Agent{name: "torii", version: version, now: time.Now, initialized: map[string]bool{},
		sessions: map[string]*Session{}, byConn: map[string]map[string]bool{}}
}

var _ link.Handler = (*Agent)(nil)

// Handle dispatches one ACP method.
func (a *Agent) Handle(ctx context.Context, c *link.Conn, method string, params json.RawMessage) (any, error) {
	switch method {
	case "initialize":
		return a.initialize(c, params)
	case "session/new":
		return a.newSession(c, params)
	case "session/cancel":
		return nil, nil // nothing runs yet that could be cancelled
	}
	if strings.HasSuffix(method, "/ping") {
		// Browser clients probe liveness with <name>/ping; answer at once.
		return struct{}{}, nil
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "method %q not found", method)
}

// Initialized reports whether the connection has called initialize.
func (a *Agent) Initialized(connID string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.initialized[connID]
}

// Closed forgets the connection's sessions.
func (a *Agent) Closed(c *link.Conn) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.initialized, c.ID())
	for id := range a.byConn[c.ID()] {
		delete(a.sessions, id)
	}
	delete(a.byConn, c.ID())
}

// Session returns a live session by ID.
func (a *Agent) Session(id string) (Session, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	s, ok := a.sessions[id]
	if !ok {
		return Session{}, false
	}
	return s.clone(), true
}

// Sessions lists the live sessions of a connection.
func (a *Agent) Sessions(connID string) []Session {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Session
	for id := range a.byConn[connID] {
		out = append(out, a.sessions[id].clone())
	}
	return out
}

type initializeParams struct {
	ProtocolVersion *int            `json:"protocolVersion"`
	ClientInfo      json.RawMessage `json:"clientInfo,omitempty"`
}

// InitializeResult is the agent's initialize answer (docs/protocol.md).
type InitializeResult struct {
	ProtocolVersion   int               `json:"protocolVersion"`
	AgentCapabilities AgentCapabilities `json:"agentCapabilities"`
	AuthMethods       []any             `json:"authMethods"`
	AgentInfo         Implementation    `json:"agentInfo"`
}

// AgentCapabilities advertises what the link supports.
type AgentCapabilities struct {
	LoadSession     bool            `json:"loadSession"`
	MCPCapabilities MCPCapabilities `json:"mcpCapabilities"`
}

// MCPCapabilities: torii reaches MCP servers over the link itself (type acp).
type MCPCapabilities struct {
	ACP bool `json:"acp"`
}

// Implementation names a peer.
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

func (a *Agent) initialize(c *link.Conn, params json.RawMessage) (any, error) {
	var p initializeParams
	if err := json.Unmarshal(orEmpty(params), &p); err != nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "initialize: %v", err)
	}
	if p.ProtocolVersion == nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "initialize: protocolVersion is required")
	}
	a.mu.Lock()
	a.initialized[c.ID()] = true
	a.mu.Unlock()
	// ACP: the agent answers with the version it will speak; the client
	// disconnects if it cannot speak it.
	return InitializeResult{ProtocolVersion: ProtocolVersion,
		AgentCapabilities: AgentCapabilities{LoadSession: a.LoadSession, MCPCapabilities: MCPCapabilities{ACP: true}},
		AuthMethods:       []any{}, AgentInfo: Implementation{Name: a.name, Version: a.version}}, nil
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}
