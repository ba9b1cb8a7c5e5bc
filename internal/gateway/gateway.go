// Package gateway is the daemon's ACP gateway (docs/gateway.md): link
// clients (the side panel through the extension, or a token client such as
// a Katashiro-style panel) open chat sessions here; each gateway session is
// one agent process and one agent session (internal/agents). The gateway
// forwards session/update, relays session/request_permission (falling back
// to deny when the client cannot grant), implements cancel, re-attaches a
// session to a new connection (session/resume, session/load: last attach
// wins), mints the per-session bearer token the agent uses on /mcp, and
// connects the MCP servers a foreign client declares (allowlist + pins).
package gateway

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/agents"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/wire"
)

// Defaults (docs/gateway.md).
const (
	DefaultIdleTimeout = 120 * time.Second
	// DetachedTTL: a session no connection has attached for this long is
	// closed and its agent killed.
	DetachedTTL = 30 * time.Minute
	// startTimeout bounds spawn + initialize + session/new of an agent.
	startTimeout = 60 * time.Second
	// maxSessions bounds live gateway sessions daemon-wide (each is a process).
	maxSessions = 64
	// CodeUnknownSession answers session/resume, session/load and the
	// torii/session/* methods for an id the gateway does not know.
	CodeUnknownSession = -32002
)

// Options configure a Gateway.
type Options struct {
	Agents       []config.Agent // resolved (presets expanded)
	DefaultAgent string
	RelayLimit   int
	Policy       config.MCPServerPolicy
	IdleTimeout  time.Duration
	Broker       *broker.Broker
	// Initialized reports whether a link connection called initialize.
	Initialized func(connID string) bool
	// MCPURL is the daemon's /mcp URL as the agent should dial it.
	MCPURL  func() string
	Version string
	Logger  *slog.Logger
	// BridgeTimeout overrides mcpbridge's 30 s connect window (tests).
	BridgeTimeout time.Duration
	// Files serves a chat session's files in the download sandbox as MCP
	// resources, as the daemon's own server does for its sessions: what a
	// tool saved (a PDF, a capture's export) is read back as a resource.
	Files func(sessionOf func(*mcp.ServerSession) *broker.Session) mcp.Middleware
}

// Gateway holds the live sessions.
type Gateway struct {
	opts Options
	log  *slog.Logger

	cfgMu sync.RWMutex // guards the configured part of opts, which Reconfigure replaces

	mu       sync.Mutex
	sessions map[string]*Session
	tokens   map[[32]byte]*Session  // sha256(token) -> session
	seen     map[string]*seenServer // declared MCP servers, by name (servers.go)
	closed   bool
}

// New returns a gateway.
func New(opts Options) *Gateway {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = DefaultIdleTimeout
	}
	if opts.RelayLimit <= 0 {
		opts.RelayLimit = 4
	}
	if opts.DefaultAgent == "" && len(opts.Agents) > 0 {
		opts.DefaultAgent = opts.Agents[0].Name
	}
	return &Gateway{opts: opts, log: opts.Logger, sessions: map[string]*Session{}, tokens: map[[32]byte]*Session{}, seen: map[string]*seenServer{}}
}

// AgentsResult is torii/agents.
type AgentsResult struct {
	Agents       []AgentInfo `json:"agents"`
	DefaultAgent string      `json:"defaultAgent"`
	RelayLimit   int         `json:"relayLimit"`
}

// AgentInfo is one configured agent.
type AgentInfo struct {
	agents.Info
	// Status: "ready" when the command is found, else "not_installed".
	Status string `json:"status"`
	// Detail, for not_installed: what was not found and which config key to fix.
	Detail string `json:"detail,omitempty"`
}

func (g *Gateway) agentsList() AgentsResult {
	o := g.conf()
	out := AgentsResult{Agents: []AgentInfo{}, DefaultAgent: o.DefaultAgent, RelayLimit: o.RelayLimit}
	for i, a := range agents.Describe(o.Agents) {
		info := AgentInfo{Info: a, Status: "ready"}
		if !a.Available {
			info.Status = "not_installed"
			info.Detail = (&AgentMissingError{Agent: o.Agents[i], Index: i}).Detail()
		}
		out.Agents = append(out.Agents, info)
	}
	return out
}

// Agents lists the configured agents with whether each can start (control status).
func (g *Gateway) Agents() AgentsResult { return g.agentsList() }

// conf is the configured part of the options, as Reconfigure last set it.
func (g *Gateway) conf() Options {
	g.cfgMu.RLock()
	defer g.cfgMu.RUnlock()
	return g.opts
}

// Reconfigure applies a changed config.json: new sessions use the new agents, default agent,
// relay limit, idle timeout and MCP-server policy; a live session keeps the agent it runs,
// and the policy applies to its next declared-server connection and tool call.
func (g *Gateway) Reconfigure(list []config.Agent, defaultAgent string, relayLimit int, policy config.MCPServerPolicy, idle time.Duration) {
	if idle <= 0 {
		idle = DefaultIdleTimeout
	}
	if relayLimit <= 0 {
		relayLimit = 4
	}
	if defaultAgent == "" && len(list) > 0 {
		defaultAgent = list[0].Name
	}
	g.cfgMu.Lock()
	g.opts.Agents, g.opts.DefaultAgent, g.opts.RelayLimit, g.opts.Policy, g.opts.IdleTimeout = list, defaultAgent, relayLimit, policy, idle
	g.cfgMu.Unlock()
}

func (g *Gateway) spec(name string) (config.Agent, int, bool) {
	for i, a := range g.conf().Agents {
		if a.Name == name {
			return a, i, true
		}
	}
	return config.Agent{}, -1, false
}

// Handle serves the gateway's methods. ok is false for what is not the
// gateway's (the link session of docs/protocol.md stays with internal/acp).
func (g *Gateway) Handle(ctx context.Context, c *link.Conn, method string, params json.RawMessage) (res any, err error, ok bool) {
	switch method {
	case "torii/agents":
		return g.agentsList(), nil, true
	case "session/new":
		var p newParams
		if json.Unmarshal(orEmpty(params), &p) != nil {
			return nil, nil, false // internal/acp answers the bad params
		}
		// A chat: an agent is named, or a token client and a default agent
		// exists. Otherwise it is a link session (internal/acp): the
		// extension's tool-server declaration, or a token client of a
		// daemon with no agents configured.
		if p.Meta.Torii.Agent == "" && (c.Info().Kind != link.KindToken || g.conf().DefaultAgent == "") {
			return nil, nil, false
		}
		res, err := g.newSession(ctx, c, &p)
		return res, err, true
	case "session/prompt", "session/cancel", "session/resume", "session/load", "session/set_mode",
		"torii/session/restart", "torii/session/close", "torii/session/set_access":
		var p struct {
			SessionID string `json:"sessionId"`
		}
		_ = json.Unmarshal(orEmpty(params), &p)
		s := g.get(p.SessionID)
		if s != nil && s.principal != principalOf(c) {
			// SECURITY I-30: a session is reachable only by the device or token
			// that created it; to anyone else it does not exist.
			s = nil
		}
		if s == nil {
			if method == "session/cancel" {
				return nil, nil, false // maybe the link session's
			}
			return nil, wire.Errorf(CodeUnknownSession, "%s: unknown session %q", method, p.SessionID), true
		}
		res, err := s.handle(ctx, c, method, params)
		return res, err, true
	}
	return nil, nil, false
}

// Closed detaches the connection's sessions; they live on for a resume.
func (g *Gateway) Closed(c *link.Conn) {
	g.mu.Lock()
	var hit []*Session
	for _, s := range g.sessions {
		hit = append(hit, s)
	}
	g.mu.Unlock()
	for _, s := range hit {
		s.detach(c)
	}
}

func (g *Gateway) get(id string) *Session {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.sessions[id]
}

func (g *Gateway) remove(s *Session) {
	g.mu.Lock()
	if g.sessions[s.ID] == s {
		delete(g.sessions, s.ID)
	}
	g.mu.Unlock()
}

// CloseDevice ends every session a device created: its pairing was revoked, so its
// agents stop now, and a later pairing of the same browser (a new device) cannot reach them.
// SECURITY I-61.
func (g *Gateway) CloseDevice(deviceID string) int {
	want := string(link.KindDevice) + ":" + deviceID
	g.mu.Lock()
	var hit []*Session
	for _, s := range g.sessions {
		if s.principal == want {
			hit = append(hit, s)
		}
	}
	g.mu.Unlock()
	for _, s := range hit {
		s.close("device revoked")
	}
	return len(hit)
}

// Close ends every session (daemon shutdown).
func (g *Gateway) Close() {
	g.mu.Lock()
	g.closed = true
	list := make([]*Session, 0, len(g.sessions))
	for _, s := range g.sessions {
		list = append(list, s)
	}
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range list {
		wg.Add(1)
		go func() { defer wg.Done(); s.close("daemon shutting down") }()
	}
	wg.Wait()
}

// --- per-session bearer tokens for /mcp -------------------------------

func hashToken(tok string) [32]byte { return sha256.Sum256([]byte(tok)) }

// mint creates a fresh token for s. Tokens live in memory only.
func (g *Gateway) mint(s *Session) (string, [32]byte) {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := "torii_s_" + base64.RawURLEncoding.EncodeToString(b[:])
	h := hashToken(tok)
	g.mu.Lock()
	g.tokens[h] = s
	g.mu.Unlock()
	return tok, h
}

// revoke removes exactly the token with hash h. Revocation is token
// specific: an old process's cleanup can never revoke the token minted for
// its replacement (SECURITY I-35).
func (g *Gateway) revoke(h [32]byte) {
	g.mu.Lock()
	delete(g.tokens, h)
	g.mu.Unlock()
}

// CheckToken maps a /mcp bearer token to its live session's ID.
func (g *Gateway) CheckToken(tok string) (sessionID string, ok bool) {
	h := hashToken(tok)
	g.mu.Lock()
	defer g.mu.Unlock()
	s := g.tokens[h]
	if s == nil {
		return "", false
	}
	return s.ID, true
}

// Server is the MCP server a session's agent reaches on /mcp (nil when the
// session is gone).
func (g *Gateway) Server(sessionID string) *mcp.Server {
	s := g.get(sessionID)
	if s == nil {
		return nil
	}
	return s.srv
}

// SessionInfo is a session's state (control method gateway.sessions).
type SessionInfo struct {
	SessionID     string       `json:"sessionId"`
	Agent         string       `json:"agent"`
	Room          string       `json:"room,omitempty"`
	Status        string       `json:"status"`
	Detail        string       `json:"detail,omitempty"`
	BrowserAccess string       `json:"browserAccess"`
	Attached      bool         `json:"attached"`
	ConnectionID  string       `json:"connectionId,omitempty"`
	Pid           int          `json:"pid,omitempty"`
	MCPServers    []string     `json:"mcpServers"`
	Buffer        agents.Stats `json:"buffer"`
}

// Sessions lists the live sessions.
func (g *Gateway) Sessions() []SessionInfo {
	g.mu.Lock()
	list := make([]*Session, 0, len(g.sessions))
	for _, s := range g.sessions {
		list = append(list, s)
	}
	g.mu.Unlock()
	out := make([]SessionInfo, 0, len(list))
	for _, s := range list {
		out = append(out, s.info())
	}
	slices.SortFunc(out, func(a, b SessionInfo) int {
		if a.SessionID < b.SessionID {
			return -1
		}
		return 1
	})
	return out
}

func orEmpty(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return json.RawMessage("{}")
	}
	return b
}
