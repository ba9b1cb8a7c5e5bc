package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/agents"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/wire"
)

// Agent statuses (torii/agent_status).
const (
	StatusStarting      = "starting"
	StatusReady         = "ready"
	StatusBusy          = "busy"
	StatusCrashed       = "crashed"
	StatusExited        = "exited"
	StatusNotResponding = "not_responding"
)

// permissionWait bounds how long a relayed permission request waits for
// the person.
const permissionWait = 30 * time.Minute

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

	sending atomic.Bool

	notifyMu sync.Mutex // orders torii/agent_status sends (notifyStatus)

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
	lastActive time.Time
	permWaits  int
	closed     bool
	reaper     *time.Timer
}

type turn struct {
	ctx       context.Context // ends when the turn ends, or is cancelled
	cancel    context.CancelFunc
	cancelled atomic.Bool   // session/cancel was received
	cancelCh  chan struct{} // closed on session/cancel
	once      sync.Once
	killed    atomic.Bool // restart/close ended it
}

func (g *Gateway) newSession(ctx context.Context, c *link.Conn, p *newParams) (any, error) {
	if g.opts.Initialized != nil && !g.opts.Initialized(c.ID()) {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/new: call initialize first")
	}
	if p.Cwd == nil || *p.Cwd == "" {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: cwd is required")
	}
	if p.MCPServers == nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: mcpServers is required (may be empty)")
	}
	servers, perr := acp.ParseServers(p.MCPServers)
	if perr != nil {
		return nil, perr
	}
	name := p.Meta.Torii.Agent
	if name == "" {
		name = g.conf().DefaultAgent
	}
	if name == "" {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: no agents are configured; add \"agents\" to config.json (docs/gateway.md)")
	}
	spec, idx, ok := g.spec(name)
	if !ok {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: unknown agent %q; torii/agents lists them", name)
	}
	if !agents.Available(spec) {
		return nil, (&AgentMissingError{Agent: spec, Index: idx}).rpc()
	}
	access := p.Meta.Torii.BrowserAccess
	if access == "" {
		// The person's own panel (through the paired extension) may act;
		// a token client reads unless it asks for more.
		access = AccessRead
		if c.Info().Kind == link.KindDevice {
			access = AccessAct
		}
	}
	if access != AccessAct && access != AccessRead && access != AccessNone {
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/new: browserAccess must be read, act or none")
	}
	s := &Session{ID: uuid.NewString(), Agent: name, Room: p.Meta.Torii.Room, g: g, spec: spec, cwd: *p.Cwd,
		principal: principalOf(c), buf: agents.NewBuffer(), done: make(chan struct{}), access: access, status: StatusStarting,
		bridges: map[string]*mcpbridge.Bridge{}}
	s.label = "agent:" + name + ":" + s.ID[:8]
	// Its own server, not the daemon's: its catalogue is this chat's (the
	// browser's tools and the chat client's servers' as <server>.<tool>).
	caps := &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}
	if g.opts.Files != nil {
		caps.Resources = &mcp.ResourceCapabilities{}
	}
	s.srv = mcp.NewServer(&mcp.Implementation{Name: "torii", Title: "Torii browser", Version: g.opts.Version},
		&mcp.ServerOptions{Logger: g.log, Capabilities: caps,
			Instructions: broker.Instructions + " Tools named <server>.<tool> belong to MCP servers of the chat client."})
	s.mir = broker.NewMirror(s.srv, s.callTool)
	s.srv.AddReceivingMiddleware(s.mir.UnknownTools(s.callTool))
	if g.opts.Files != nil {
		// Every session of this server is this chat's agent.
		s.srv.AddReceivingMiddleware(g.opts.Files(func(*mcp.ServerSession) *broker.Session { return s.bs }))
	}

	g.mu.Lock()
	if g.closed || len(g.sessions) >= maxSessions {
		g.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/new: at most %d chat sessions at once; close one first", maxSessions)
	}
	g.sessions[s.ID] = s
	g.mu.Unlock()
	if g.opts.Broker != nil {
		s.bs = g.opts.Broker.NewSession(s.label, broker.KindAgent)
		// The extension keys the person's window grant on the gateway session id (SECURITY I-29).
		s.bs.SetGatewaySession(s.ID)
		if i := c.Info(); i.Kind == link.KindDevice {
			// SECURITY I-59: a panel's agent acts in that panel's browser only.
			s.bs.BindBrowser(broker.BindOwn, i.DeviceID)
		}
	}

	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	if err := s.spawn(sctx, false); err != nil {
		// Fail closed (OpenAB review F5): no session, no live token.
		s.close("start failed")
		return nil, wire.Errorf(wire.CodeInternalError, "session/new: agent %q did not start: %v", name, err)
	}
	s.refreshTools()
	go s.pump()
	s.attach(c, servers)
	g.log.Info("gateway: session started", "session", s.ID, "agent", name, "conn", c.ID(), "access", access)
	return acp.NewSessionResult{SessionID: s.ID}, nil
}

// spawn starts a fresh agent process for the session and creates (or, with
// load, re-creates) its agent session. A newer token replaces the old one,
// which is revoked only after the new process holds its own.
func (s *Session) spawn(ctx context.Context, load bool) error {
	g := s.g
	tok, h := g.mint(s)
	s.mu.Lock()
	s.procGen++
	gen := s.procGen
	s.mu.Unlock()
	proc, err := agents.Start(s.spec, s.cwd, agents.Handlers{
		Notify: func(m string, p json.RawMessage) { s.onNotify(gen, m, p) },
		Request: func(ctx context.Context, m string, p json.RawMessage) (any, *wire.Error) {
			return s.onRequest(ctx, gen, m, p)
		},
	}, g.log)
	if err != nil {
		g.revoke(h)
		return err
	}
	fail := func(err error) error {
		proc.Kill()
		g.revoke(h)
		return err
	}
	if err := proc.Initialize(ctx, "torii", g.opts.Version); err != nil {
		return fail(err)
	}
	url := ""
	if g.opts.MCPURL != nil {
		url = g.opts.MCPURL()
	}
	servers := []any{map[string]any{"type": "http", "name": "torii", "url": url,
		"headers": []any{map[string]string{"name": "Authorization", "value": "Bearer " + tok}}}}
	s.mu.Lock()
	prevSID := s.agentSID
	s.mu.Unlock()
	switch {
	case load && prevSID != "" && proc.Init.AgentCapabilities.LoadSession:
		// The agent replays its transcript; the gateway already holds it.
		s.mu.Lock()
		s.loading = true
		s.mu.Unlock()
		err := proc.Call(ctx, "session/load", map[string]any{"sessionId": prevSID, "cwd": s.cwd, "mcpServers": servers}, nil)
		s.mu.Lock()
		s.loading = false
		s.mu.Unlock()
		if err != nil {
			return fail(fmt.Errorf("session/load: %w", err))
		}
	default:
		var res struct {
			SessionID string `json:"sessionId"`
		}
		if err := proc.Call(ctx, "session/new", map[string]any{"cwd": s.cwd, "mcpServers": servers}, &res); err != nil {
			return fail(fmt.Errorf("session/new: %w", err))
		}
		if res.SessionID == "" {
			return fail(errors.New("session/new: no sessionId in the answer"))
		}
		s.mu.Lock()
		s.agentSID = res.SessionID
		s.mu.Unlock()
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return fail(errors.New("session closed"))
	}
	old := s.tokenHash
	s.proc, s.tokenHash = proc, h
	s.status, s.detail = StatusReady, ""
	s.mu.Unlock()
	g.revoke(old)
	go s.watch(proc, gen, h)
	return nil
}

// watch reports the process's end. It revokes only the token minted for
// this process.
func (s *Session) watch(proc *agents.Process, gen int, h [32]byte) {
	<-proc.Exited()
	s.g.revoke(h)
	s.recordEnd(proc, gen)
}

// recordEnd marks the session crashed or exited once its process has ended,
// and says so once. The prompt whose call the exit broke records it too, and
// returns only once the word is sent (by whichever got there first), so it
// reaches the client before the prompt's answer does.
func (s *Session) recordEnd(proc *agents.Process, gen int) {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.mu.Lock()
	if s.procGen != gen || s.closed || s.status == StatusCrashed || s.status == StatusExited {
		s.mu.Unlock()
		return
	}
	st := StatusExited
	if proc.Crashed() {
		st = StatusCrashed
	}
	s.status, s.detail = st, proc.ExitDetail()
	s.mu.Unlock()
	s.g.log.Warn("gateway: agent ended", "session", s.ID, "agent", s.Agent, "status", st, "detail", proc.ExitDetail())
	s.sendStatus()
}

func (s *Session) onNotify(gen int, method string, params json.RawMessage) {
	if method != "session/update" {
		return
	}
	var p struct {
		Update json.RawMessage `json:"update"`
	}
	if json.Unmarshal(params, &p) != nil || len(p.Update) == 0 {
		return
	}
	s.mu.Lock()
	if s.procGen != gen || s.loading || s.closed {
		s.mu.Unlock()
		return
	}
	s.lastActive = time.Now()
	revived := s.status == StatusNotResponding
	if revived {
		s.status, s.detail = StatusBusy, ""
	}
	s.mu.Unlock()
	if revived {
		go s.notifyStatus()
	}
	s.buf.Push(p.Update)
}

func (s *Session) onRequest(ctx context.Context, gen int, method string, params json.RawMessage) (any, *wire.Error) {
	s.mu.Lock()
	stale := s.procGen != gen
	s.mu.Unlock()
	if stale {
		return nil, wire.Errorf(wire.CodeInternalError, "session replaced")
	}
	if method == "session/request_permission" {
		return s.relayPermission(ctx, params), nil
	}
	// fs/* and terminal/* are not offered in clientCapabilities.
	return nil, wire.Errorf(wire.CodeMethodNotFound, "method %q not found", method)
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

// rewrite replaces params.sessionId with the agent's session id.
func rewrite(params json.RawMessage, sid string) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(orEmpty(params), &m); err != nil {
		return nil, err
	}
	b, _ := json.Marshal(sid)
	m["sessionId"] = b
	return json.Marshal(m)
}

func (s *Session) forward(ctx context.Context, method string, params json.RawMessage) (any, error) {
	s.mu.Lock()
	proc, sid := s.proc, s.agentSID
	s.mu.Unlock()
	if proc == nil {
		return nil, wire.Errorf(wire.CodeInternalError, "%s: the agent is not running", method)
	}
	p, err := rewrite(params, sid)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "%s: %v", method, err)
	}
	var res json.RawMessage
	if err := proc.Call(ctx, method, p, &res); err != nil {
		return nil, agentErr(method, err)
	}
	return res, nil
}

func agentErr(method string, err error) error {
	var e *wire.Error
	if errors.As(err, &e) {
		return e
	}
	return wire.Errorf(wire.CodeInternalError, "%s: %v", method, err)
}

func (s *Session) prompt(c *link.Conn, params json.RawMessage) (any, error) {
	s.mu.Lock()
	switch {
	case s.closed:
		s.mu.Unlock()
		return nil, wire.Errorf(CodeUnknownSession, "session/prompt: the session is closed")
	case s.conn != c:
		s.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/prompt: this connection is not attached to the session; call session/resume first")
	case s.turn != nil:
		s.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInvalidRequest, "session/prompt: a prompt is already running; cancel it first")
	case s.proc == nil || s.status == StatusCrashed || s.status == StatusExited:
		st, d := s.status, s.detail
		s.mu.Unlock()
		return nil, wire.Errorf(wire.CodeInternalError, "session/prompt: the agent is %s (%s); call torii/session/restart", st, d)
	}
	proc, sid, gen := s.proc, s.agentSID, s.procGen
	t := &turn{cancelCh: make(chan struct{})}
	t.ctx, t.cancel = context.WithCancel(context.Background())
	s.turn = t
	s.status = StatusBusy
	s.lastActive = time.Now()
	s.mu.Unlock()
	s.notifyStatus()
	defer t.cancel()
	go s.watchdog(t)

	p, err := rewrite(params, sid)
	if err != nil {
		s.endTurn(t)
		return nil, wire.Errorf(wire.CodeInvalidParams, "session/prompt: %v", err)
	}
	var res json.RawMessage
	callCtx, stop := context.WithCancel(context.Background())
	context.AfterFunc(t.ctx, func() {
		if t.killed.Load() {
			stop()
		}
	})
	err = proc.Call(callCtx, "session/prompt", p, &res)
	stop()
	closed := errors.Is(err, agents.ErrClosed)
	if closed {
		select {
		case <-proc.Exited():
			s.recordEnd(proc, gen)
		case <-time.After(2 * time.Second):
		}
	}
	s.flush(2 * time.Second)
	s.endTurn(t)
	switch {
	case t.killed.Load():
		return map[string]string{"stopReason": "cancelled"}, nil
	case closed:
		return nil, wire.Errorf(wire.CodeInternalError, "session/prompt: the agent crashed (%s); call torii/session/restart", proc.ExitDetail())
	case err != nil:
		return nil, agentErr("session/prompt", err)
	}
	return res, nil
}

func (s *Session) endTurn(t *turn) {
	t.cancel()
	s.mu.Lock()
	if s.turn == t {
		s.turn = nil
	}
	changed := s.status == StatusBusy || s.status == StatusNotResponding
	if changed {
		s.status, s.detail = StatusReady, ""
	}
	s.mu.Unlock()
	if changed {
		s.notifyStatus()
	}
}

// watchdog flags the agent not_responding when a turn sees no update for
// the idle timeout (time waiting on the person's permission answer does
// not count).
func (s *Session) watchdog(t *turn) {
	idle := s.g.conf().IdleTimeout
	tick := time.NewTicker(max(idle/5, 20*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
		s.mu.Lock()
		if s.permWaits > 0 {
			s.lastActive = time.Now()
		}
		flag := s.turn == t && s.status == StatusBusy && time.Since(s.lastActive) > idle
		if flag {
			s.status, s.detail = StatusNotResponding, fmt.Sprintf("no update from the agent for %s", idle.Round(time.Millisecond))
		}
		s.mu.Unlock()
		if flag {
			s.g.log.Warn("gateway: agent not responding", "session", s.ID, "agent", s.Agent)
			s.notifyStatus()
		}
	}
}

// cancelTurn: session/cancel. Pending permission relays answer cancelled
// at once; the agent is told and ends the prompt with stopReason cancelled.
func (s *Session) cancelTurn() {
	s.mu.Lock()
	t, proc, sid := s.turn, s.proc, s.agentSID
	s.mu.Unlock()
	if t == nil {
		return
	}
	t.cancelled.Store(true)
	t.once.Do(func() { close(t.cancelCh) })
	if proc != nil {
		// Not inline: this runs on the link's read loop, and an agent that
		// stopped reading its stdin must not stall the client's socket.
		go func() { _ = proc.Notify("session/cancel", map[string]string{"sessionId": sid}) }()
	}
}

// relayPermission asks the attached client; it falls back to the daemon's
// policy (deny) when the client cannot grant (-32601), is gone, or fails.
func (s *Session) relayPermission(ctx context.Context, params json.RawMessage) any {
	cancelled := map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
	s.mu.Lock()
	t, conn := s.turn, s.conn
	s.permWaits++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.permWaits--
		s.lastActive = time.Now()
		s.mu.Unlock()
	}()
	if t == nil || t.cancelled.Load() {
		return cancelled
	}
	if conn == nil {
		return deny(params, "no client is attached")
	}
	s.flush(2 * time.Second) // the tool_call update reaches the client first
	p, err := rewrite(params, s.ID)
	if err != nil {
		return deny(params, "bad params")
	}
	// The call runs on its own, uncancellable context: coder/websocket
	// closes the whole connection when a write's context ends during (or
	// before) the write, so session/cancel must not cancel the link call.
	// It abandons the wait instead; a late answer is dropped.
	type answer struct {
		res json.RawMessage
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), permissionWait)
		defer cancel()
		var a answer
		a.err = conn.Call(cctx, "session/request_permission", json.RawMessage(p), &a.res)
		ch <- a
	}()
	var a answer
	select {
	case a = <-ch:
	case <-t.cancelCh:
		return cancelled
	case <-t.ctx.Done():
		return cancelled
	case <-ctx.Done(): // the agent went away
		return cancelled
	}
	res, err := a.res, a.err
	if t.cancelled.Load() || t.killed.Load() {
		return cancelled
	}
	if err != nil {
		var e *wire.Error
		if errors.As(err, &e) && e.Code == wire.CodeMethodNotFound {
			return deny(params, "the client cannot grant permissions")
		}
		return deny(params, err.Error())
	}
	var check struct {
		Outcome *struct {
			Outcome string `json:"outcome"`
		} `json:"outcome"`
	}
	if json.Unmarshal(res, &check) != nil || check.Outcome == nil || check.Outcome.Outcome == "" {
		return deny(params, "the client's answer has no outcome")
	}
	return res
}

// deny is the daemon's own policy answer: the first reject option, else
// cancelled.
func deny(params json.RawMessage, why string) any {
	var p struct {
		Options []struct {
			OptionID string `json:"optionId"`
			Kind     string `json:"kind"`
		} `json:"options"`
	}
	_ = json.Unmarshal(params, &p)
	for _, kind := range []string{"reject_once", "reject_always"} {
		for _, o := range p.Options {
			if o.Kind == kind {
				return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": o.OptionID}}
			}
		}
	}
	_ = why
	return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
}

// --- attach, resume, load ----------------------------------------------

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
	// Every check comes before attach: a rejected resume opens no tunnel
	// (OpenAB review, round 1 F1).
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

// --- restart and close -------------------------------------------------

func (s *Session) restart(ctx context.Context) (any, error) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, wire.Errorf(CodeUnknownSession, "torii/session/restart: the session is closed")
	}
	proc, t := s.proc, s.turn
	s.proc = nil
	s.procGen++ // the old process's late messages and exit are ignored
	s.status, s.detail = StatusStarting, ""
	s.mu.Unlock()
	if t != nil {
		t.killed.Store(true)
		t.cancel()
	}
	s.notifyStatus()
	if proc != nil {
		proc.Kill()
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), startTimeout)
	defer cancel()
	if err := s.spawn(sctx, true); err != nil {
		s.mu.Lock()
		s.status, s.detail = StatusCrashed, err.Error()
		s.mu.Unlock()
		s.notifyStatus()
		return nil, wire.Errorf(wire.CodeInternalError, "torii/session/restart: %v", err)
	}
	s.notifyStatus()
	s.g.log.Info("gateway: agent restarted", "session", s.ID, "agent", s.Agent)
	return struct{}{}, nil
}

// close ends the session: the agent is killed, the token revoked, tunnels
// disconnected.
func (s *Session) close(why string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	proc, t, h, old := s.proc, s.turn, s.tokenHash, s.bridges
	s.bridges = map[string]*mcpbridge.Bridge{}
	s.procGen++
	if s.reaper != nil {
		s.reaper.Stop()
	}
	s.mu.Unlock()
	s.g.revoke(h)
	s.g.remove(s)
	close(s.done)
	if s.bs != nil {
		s.bs.Close() // its calls end; the extension hears the session ended
	}
	if t != nil {
		t.killed.Store(true)
		t.cancel()
	}
	for _, b := range old {
		go b.Close()
	}
	if proc != nil {
		proc.Kill()
	}
	s.g.log.Info("gateway: session closed", "session", s.ID, "agent", s.Agent, "why", why)
}

// --- updates to the client ----------------------------------------------

// pump sends buffered updates to the attached client, in order.
func (s *Session) pump() {
	for {
		select {
		case <-s.done:
			return
		case <-s.buf.Signal():
		}
		for {
			s.sending.Store(true)
			u := s.buf.Pop()
			if u == nil {
				s.sending.Store(false)
				break
			}
			s.mu.Lock()
			c := s.conn
			s.mu.Unlock()
			if c != nil {
				_ = c.Notify(c.Context(), "session/update", map[string]any{"sessionId": s.ID, "update": u})
			}
			s.sending.Store(false)
		}
	}
}

// flush waits (up to d) until every buffered update has been sent.
func (s *Session) flush(d time.Duration) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if s.buf.Pending() == 0 && !s.sending.Load() {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// StatusParams is torii/agent_status.
type StatusParams struct {
	SessionID string `json:"sessionId"`
	Agent     string `json:"agent"`
	Status    string `json:"status"`
	Detail    string `json:"detail,omitempty"`
}

// notifyStatus sends the session's current status. Sends are serialised, and
// each takes its snapshot inside that order, so the last word a client gets is
// the latest status: two goroutines (a turn ending, the process exiting) never
// deliver an older word after a newer one.
func (s *Session) notifyStatus() {
	s.notifyMu.Lock()
	defer s.notifyMu.Unlock()
	s.sendStatus()
}

// sendStatus sends the current status; the caller holds notifyMu.
func (s *Session) sendStatus() {
	s.mu.Lock()
	c := s.conn
	p := StatusParams{SessionID: s.ID, Agent: s.Agent, Status: s.status, Detail: s.detail}
	s.mu.Unlock()
	if c != nil {
		_ = c.Notify(c.Context(), "torii/agent_status", p)
	}
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
