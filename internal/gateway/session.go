package gateway

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/agents"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/wire"
)

// A session's work is split by concern: lifecycle.go starts, restarts and
// ends the agent process; prompt.go runs a prompt turn and watchdog.go
// watches it; permission.go relays the agent's permission requests;
// attach.go moves the session between client connections; updates.go
// sends the agent's updates and statuses to the client; agentserver.go is
// the MCP server the agent calls; declared.go connects and calls the MCP
// servers the client declared, and servers.go reports them.

// Agent statuses (torii/agent_status).
const (
	StatusStarting      = "starting"
	StatusReady         = "ready"
	StatusBusy          = "busy"
	StatusCrashed       = "crashed"
	StatusExited        = "exited"
	StatusNotResponding = "not_responding"
)

// Browser access levels (docs/gateway.md).
const (
	AccessAct  = "act"
	AccessRead = "read"
	AccessNone = "none"
)

type toriiMeta struct {
	Agent         string `json:"agent"`
	Room          string `json:"room"`
	BrowserAccess string `json:"browserAccess"`
}

type newParams struct {
	Cwd        *string           `json:"cwd"`
	MCPServers []json.RawMessage `json:"mcpServers"`
	Meta       struct {
		Torii toriiMeta `json:"torii"`
	} `json:"_meta"`
}

// Session is one gateway session: one agent process and its session.
type Session struct {
	ID    string
	Agent string
	Room  string
	// principal is who created the session (a paired device or a token);
	// only the same principal may reach it again (SECURITY I-30).
	principal string
	g         *Gateway
	spec      config.Agent
	cwd       string
	buf       *agents.Buffer
	srv       *mcp.Server
	mir       *broker.Mirror
	done      chan struct{}
	label     string
	// bs is the session's broker session (KindAgent): its browser calls
	// run as it, and the extension owns its tabs by its ID.
	bs *broker.Session

	notifyMu sync.Mutex // orders torii/agent_status sends (notifyStatus)

	flushMu sync.Mutex
	sending bool            // the pump holds an update it has not sent yet
	flushed []chan struct{} // closed once the outbox is empty (flush)

	mu         sync.Mutex
	conn       *link.Conn
	attachGen  int
	proc       *agents.Process
	procGen    int
	loading    bool
	agentSID   string
	status     string
	detail     string
	access     string
	tokenHash  [32]byte
	bridges    map[string]*mcpbridge.Bridge
	turn       *turn
	lastActive time.Time // the agent's latest update of the turn (watchdog.go)
	permWaits  int       // permission relays waiting on the person
	closed     bool
	reaper     *time.Timer
}

// handle serves a method for this session.
func (s *Session) handle(ctx context.Context, c *link.Conn, method string, params json.RawMessage) (any, error) {
	switch method {
	case "session/prompt":
		return s.prompt(c, params)
	case "session/cancel":
		s.cancelTurn()
		return nil, nil
	case "session/resume", "session/load":
		return s.reattach(c, method, params)
	case "session/set_mode":
		return s.forward(ctx, method, params)
	case "torii/session/restart":
		return s.restart(ctx)
	case "torii/session/close":
		s.close("closed by the client")
		return struct{}{}, nil
	case "torii/session/set_access":
		var p struct {
			BrowserAccess string `json:"browserAccess"`
		}
		_ = json.Unmarshal(params, &p)
		if p.BrowserAccess != AccessAct && p.BrowserAccess != AccessRead && p.BrowserAccess != AccessNone {
			return nil, wire.Errorf(wire.CodeInvalidParams, "torii/session/set_access: browserAccess must be read, act or none")
		}
		s.mu.Lock()
		s.access = p.BrowserAccess
		s.mu.Unlock()
		return struct{}{}, nil
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "method %q not found", method)
}

func (s *Session) info() SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := SessionInfo{SessionID: s.ID, Agent: s.Agent, Room: s.Room, Status: s.status, Detail: s.detail,
		BrowserAccess: s.access, Attached: s.conn != nil, MCPServers: []string{}, Buffer: s.buf.Stats()}
	if s.conn != nil {
		i.ConnectionID = s.conn.ID()
	}
	if s.proc != nil {
		i.Pid = s.proc.Pid()
	}
	for name := range s.bridges {
		i.MCPServers = append(i.MCPServers, name)
	}
	return i
}

// principalOf names who is behind a connection: the paired device or the
// token it authenticated with. Connections come and go; principals persist.
func principalOf(c *link.Conn) string {
	i := c.Info()
	return string(i.Kind) + ":" + i.DeviceID + i.TokenID
}
