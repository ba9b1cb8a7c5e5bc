package mcpserver

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPOptions are what /mcp takes from the daemon.
type HTTPOptions struct {
	// Tokens checks a store token, giving its id.
	Tokens interface {
		Check(tok string) (string, bool)
	}
	// TokenLabel names a store token's id for the person.
	TokenLabel func(id string) string
	// Gateway holds the chat sessions' per-session tokens and servers.
	Gateway interface {
		CheckToken(tok string) (sid string, ok bool)
		Server(sid string) *mcp.Server
	}
	// Sessions wraps the SDK's handler with the per-token session caps.
	Sessions func(http.Handler) http.Handler
	// NoteServer learns the server chosen for a request.
	NoteServer func(ctx context.Context, srv *mcp.Server)
	// SessionTimeout ends an idle /mcp session (SECURITY I-52).
	SessionTimeout time.Duration
	// TokenOrigins are the browser origins allowed to call with a token.
	TokenOrigins []string
	// Ctx ends at daemon shutdown; long-lived streams end with it.
	Ctx context.Context
}

// HTTP serves the shared MCP server (server.go) over MCP
// Streamable HTTP at /mcp (official go-sdk); every call goes through the
// broker's gate.
//
// Checks, in order (as /acp): Host loopback (403, DNS rebinding, SECURITY
// I-2, applied by guard to every endpoint); Origin absent or a configured
// token origin (403); `Authorization: Bearer <token>` from the token store
// (401, with the `WWW-Authenticate: Bearer` challenge guard adds to every 401; SECURITY I-8). An MCP
// session is bound to the token that opened it.
func (d *Server) HTTP() http.Handler {
	srv, ho := d.srv, d.opts.HTTP
	// A spawned agent's per-session token gets its own chat session's
	// server (browser tools within its access, plus the client's pinned
	// <server>.<tool> tools); store tokens get the shared one.
	stream := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		chosen := srv
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			if sid, ok := strings.CutPrefix(ti.UserID, sessionUserPrefix); ok {
				chosen = ho.Gateway.Server(sid)
			}
		}
		if ho.NoteServer != nil {
			ho.NoteServer(r.Context(), chosen)
		}
		return chosen
	},
		// The SDK's own rebinding check differs from the daemon's one rule
		// (it refuses `localhost.`); guard applies SECURITY I-2 to every
		// endpoint alike, before this handler runs.
		// SECURITY I-52: a session idle this long ends.
		&mcp.StreamableHTTPOptions{Logger: d.log, DisableLocalhostProtection: true, SessionTimeout: ho.SessionTimeout})
	var sessions http.Handler = stream
	if ho.Sessions != nil {
		sessions = ho.Sessions(stream)
	}
	// Its 401 gets its WWW-Authenticate from guard, as every endpoint's.
	protected := auth.RequireBearerToken(d.verifyToken, &auth.RequireBearerTokenOptions{AllowMissingExpiration: true})(sessions)
	origins := map[string]bool{}
	for _, o := range ho.TokenOrigins {
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
		stop := context.AfterFunc(ho.Ctx, cancel)
		defer stop()
		protected.ServeHTTP(w, r.WithContext(ctx))
	})
	return h
}

// BrowserHeader, or the `browser` query parameter of the /mcp URL, names
// the browser an /mcp session's calls go to (SECURITY I-58). The session is
// bound at its first call; later requests cannot move it.
const BrowserHeader = "Torii-Browser"

// SessionHeader names an /mcp request's named session (broker/named.go):
// requests with the same name and token share one session and its tabs,
// across MCP sessions and daemon restarts (SECURITY I-82).
const SessionHeader = "Torii-Session"

// sessionUserPrefix marks a gateway session's token in TokenInfo.UserID.
const sessionUserPrefix = "gateway-session:"

// verifyToken checks a /mcp bearer token against the token store.
func (d *Server) verifyToken(_ context.Context, tok string, _ *http.Request) (*auth.TokenInfo, error) {
	// Per-session agent tokens (memory only, revoked with the session).
	if sid, ok := d.opts.HTTP.Gateway.CheckToken(tok); ok {
		return &auth.TokenInfo{UserID: sessionUserPrefix + sid}, nil
	}
	id, ok := d.opts.HTTP.Tokens.Check(tok)
	if !ok {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: id}, nil
}
