package daemon

import (
	"context"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// newMCPHTTP serves the shared MCP server (mcpserve.go) over MCP
// Streamable HTTP at /mcp (official go-sdk); every call goes through the
// broker's gate.
//
// Checks, in order (as /acp): Host loopback (403, DNS rebinding, SECURITY
// I-2, applied by guard to every endpoint); Origin absent or a configured
// token origin (403); `Authorization: Bearer <token>` from the token store
// (401, with the `WWW-Authenticate: Bearer` challenge guard adds to every 401; SECURITY I-8). An MCP
// session is bound to the token that opened it.
func (d *daemon) newMCPHTTP(srv *mcp.Server) http.Handler {
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
	sessions := d.mcpSess.wrap(stream)
	// Its 401 gets its WWW-Authenticate from guard, as every endpoint's.
	protected := auth.RequireBearerToken(d.verifyToken, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sessions)
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
	return h
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

// revokeHTTP ends every /mcp session of a revoked token: their calls,
// queued or in flight, are cancelled (in the extension too) rather than
// allowed to finish, and their event streams close. SECURITY I-52.
func (d *daemon) revokeHTTP(tokenID string) int {
	return len(d.mcpSess.closePrincipal(tokenID))
}

func (d *daemon) tokenLabel(id string) string {
	for _, t := range d.tokens.List() {
		if t.ID == id {
			return t.Label
		}
	}
	return id
}
