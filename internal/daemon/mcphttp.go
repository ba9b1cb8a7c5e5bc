package daemon

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
)

// newMCPHTTP serves the extension's tools over MCP Streamable HTTP at /mcp
// (official go-sdk). One server, its tools mirrored from the broker's
// catalogue; every call goes through the broker's gate.
//
// Checks, in order (as /acp): Host loopback (403, DNS rebinding, SECURITY
// I-2, applied by guard to every endpoint); Origin absent or a configured
// token origin (403); `Authorization: Bearer <token>` from the token store
// (401, SECURITY I-8). An MCP session is bound to the token that opened it.
func (d *daemon) newMCPHTTP() (http.Handler, *mcp.Server) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "torii", Title: "Torii browser", Version: d.opts.Version}, &mcp.ServerOptions{
		Logger:       d.log,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		Instructions: broker.ServerInstructions,
	})
	mirror := broker.NewMirror(srv, d.proxyTool)
	srv.AddReceivingMiddleware(mirror.UnknownTools(d.proxyTool))
	d.broker.OnToolsChanged(mirror.Set)
	mirror.Set(d.broker.Tools())

	// A spawned agent's per-session token gets its own chat session's
	// server (browser tools within its access, plus the client's pinned
	// <server>.<tool> tools); store tokens get the shared one.
	stream := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		chosen := srv
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			if sid, ok := strings.CutPrefix(ti.UserID, sessionUserPrefix); ok {
				chosen = d.gateway.Server(sid)
			}
		}
		noteServer(r.Context(), chosen)
		return chosen
	},
		// The SDK's own rebinding check differs from the daemon's one rule
		// (it refuses `localhost.`); guard applies SECURITY I-2 to every
		// endpoint alike, before this handler runs.
		// SECURITY I-52: a session idle this long ends.
		&mcp.StreamableHTTPOptions{Logger: d.log, DisableLocalhostProtection: true, SessionTimeout: d.mcpSess.lim.mcpIdle})
	protected := auth.RequireBearerToken(d.verifyToken, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(d.mcpSess.wrap(stream))
	origins := map[string]bool{}
	for _, o := range d.opts.Config.TokenOrigins {
		origins[strings.TrimSuffix(o, "/")] = true
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if o := r.Header.Get("Origin"); o != "" && !origins[o] {
			d.log.Info("mcp: refused", "status", 403, "why", "origin not allowed", "remote", r.RemoteAddr)
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		// Long-lived streams end when the daemon shuts down.
		ctx, cancel := context.WithCancel(r.Context())
		defer cancel()
		stop := context.AfterFunc(d.mcpCtx, cancel)
		defer stop()
		protected.ServeHTTP(w, r.WithContext(ctx))
	})
	return h, srv
}

// sessionUserPrefix marks a gateway session's token in TokenInfo.UserID.
const sessionUserPrefix = "gateway-session:"

// verifyToken checks a /mcp bearer token against the token store.
func (d *daemon) verifyToken(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	// Per-session agent tokens (memory only, revoked with the session).
	if sid, ok := d.gateway.CheckToken(tok); ok {
		return &auth.TokenInfo{UserID: sessionUserPrefix + sid}, nil
	}
	id, ok := d.tokens.Check(tok)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: id}, nil
}

// proxyTool runs one /mcp tools/call through the broker.
func (d *daemon) proxyTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if req.Params == nil {
		return nil, errors.New("tools/call without params")
	}
	label := "http"
	if req.Extra != nil && req.Extra.TokenInfo != nil {
		label = "http:" + d.tokenLabel(req.Extra.TokenInfo.UserID)
	}
	return d.broker.CallTool(ctx, broker.Call{Name: req.Params.Name, Arguments: req.Params.Arguments, Session: label,
		Owner: d.httpSession(req.Session, label)}), nil
}

// httpSession is the broker session of one /mcp MCP session (bound to the
// token that opened it), minted on its first call and ended when the MCP
// session closes (SECURITY I-23).
func (d *daemon) httpSession(ss *mcp.ServerSession, label string) *broker.Session {
	if ss == nil {
		return nil
	}
	d.sessMu.Lock()
	defer d.sessMu.Unlock()
	if d.httpSessions == nil {
		d.httpSessions = map[*mcp.ServerSession]*broker.Session{}
	}
	if s := d.httpSessions[ss]; s != nil {
		return s
	}
	s := d.broker.NewSession(label, broker.KindHTTP)
	d.httpSessions[ss] = s
	go func() {
		_ = ss.Wait()
		d.sessMu.Lock()
		delete(d.httpSessions, ss)
		d.sessMu.Unlock()
		s.Close()
	}()
	return s
}

// revokeHTTP ends every /mcp session of a revoked token: their calls,
// queued or in flight, are cancelled (in the extension too) rather than
// allowed to finish, and their event streams close. SECURITY I-52.
func (d *daemon) revokeHTTP(tokenID string) int {
	return len(d.mcpSess.closePrincipal(tokenID))
}

// endHTTPSession ends the broker session of an /mcp session being closed.
func (d *daemon) endHTTPSession(ss *mcp.ServerSession) {
	d.sessMu.Lock()
	s := d.httpSessions[ss]
	delete(d.httpSessions, ss)
	d.sessMu.Unlock()
	if s != nil {
		s.Close()
	}
}

func (d *daemon) tokenLabel(id string) string {
	for _, t := range d.tokens.List() {
		if t.ID == id {
			return t.Label
		}
	}
	return id
}
