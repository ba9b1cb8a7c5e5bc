package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/agents"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/wire"
)

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
	s.newServer()

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
		// Fail closed: no session, no live token.
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
	s.activeLocked()
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
