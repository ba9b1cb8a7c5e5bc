// Package admin is team mode's HTTP API: /admin for admin tokens (users,
// tokens, pairing decisions, devices, the audit) and /v1 for user tokens
// (who am I, approve my browser's pairing, one-time launch secrets, my
// devices). It is one http.Handler over the store, so any replica serves it
// and every decision lands in the shared database.
package admin

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

// Event is the bus's event; the name stays so callers of admin need not
// import the bus to adapt it.
type Event = bus.Event

// Events publishes to every replica (the bus): a revocation closes links
// and cancels calls everywhere, a pairing decision reaches the replica
// holding the browser's pairing request.
type Events interface {
	Publish(ctx context.Context, e bus.Event) error
}

// Options tunes an API; zero values are sensible.
type Options struct {
	Logger *slog.Logger
	// PairAttempts is how many wrong pairing codes one token may send per
	// minute (default 5).
	PairAttempts int
	// AuthFailures is how many failed authentications one source address
	// may make per minute before it is refused outright (default 20).
	AuthFailures int
	// IdentityPublicKey is the gateway's P-256 public key, for verifying
	// the audit's checkpoints.
	IdentityPublicKey []byte
	// OTPTTL is how long a launch secret from POST /v1/otp lives
	// (default 2 minutes).
	OTPTTL time.Duration
	// Public is where browsers and agents reach the gateway (team.publicURL);
	// zero when not configured. Answers that a person acts on next (a new
	// token, a launch secret, whoami) carry it as "gateway".
	Public config.TeamURLs
	// Tokens is what Authenticate (the agents' /mcp, on every request)
	// checks user tokens with; nil is the store. The admin and user API
	// always ask the store.
	Tokens TokenChecker
}

// TokenChecker finds the live token a secret is, as store.CheckToken does.
type TokenChecker interface {
	CheckToken(ctx context.Context, secret string) (store.Token, error)
}

// API serves the admin and user endpoints.
type API struct {
	st        store.Store
	ev        Events
	adminHash [32]byte
	hasAdmin  bool
	log       *slog.Logger
	pub       []byte
	otpTTL    time.Duration
	public    *config.TeamURLs // nil without a publicURL
	tokens    TokenChecker     // Authenticate's
	pairLimit *limiter         // wrong pairing codes, per token
	authLimit *limiter         // failed authentications, per source address
	mux       *http.ServeMux
}

// New makes the API. adminSecret is the bootstrap admin token (may be
// empty: then only admin tokens from the store count).
func New(st store.Store, ev Events, adminSecret []byte, opts Options) *API {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PairAttempts <= 0 {
		opts.PairAttempts = 5
	}
	if opts.AuthFailures <= 0 {
		opts.AuthFailures = 20
	}
	if opts.OTPTTL <= 0 {
		opts.OTPTTL = 2 * time.Minute
	}
	a := &API{
		st:        st,
		ev:        ev,
		log:       opts.Logger,
		pub:       opts.IdentityPublicKey,
		otpTTL:    opts.OTPTTL,
		tokens:    opts.Tokens,
		pairLimit: newLimiter(opts.PairAttempts, time.Minute),
		authLimit: newLimiter(opts.AuthFailures, time.Minute),
	}
	if opts.Public.URL != "" {
		pub := opts.Public
		a.public = &pub
	}
	if a.tokens == nil {
		a.tokens = st
	}
	if len(adminSecret) > 0 {
		a.adminHash = sha256Sum(adminSecret)
		a.hasAdmin = true
	}
	a.mux = a.routes()
	return a
}

func (a *API) routes() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("POST /admin/users", a.admin(a.createUser))
	m.HandleFunc("GET /admin/users", a.admin(a.listUsers))
	m.HandleFunc("DELETE /admin/users/{id}", a.admin(a.deleteUser))
	m.HandleFunc("POST /admin/tokens", a.admin(a.createToken))
	m.HandleFunc("GET /admin/tokens", a.admin(a.listTokens))
	m.HandleFunc("DELETE /admin/tokens/{id}", a.admin(a.revokeToken))
	m.HandleFunc("GET /admin/pairings", a.admin(a.listPairings))
	m.HandleFunc("POST /admin/pairings/{id}/approve", a.admin(a.approvePairing))
	m.HandleFunc("POST /admin/pairings/{id}/deny", a.admin(a.denyPairing))
	m.HandleFunc("GET /admin/devices", a.admin(a.listDevices))
	m.HandleFunc("DELETE /admin/devices/{id}", a.admin(a.revokeDevice))
	m.HandleFunc("GET /admin/audit", a.admin(a.listAudit))
	m.HandleFunc("GET /admin/audit/verify", a.admin(a.verifyAudit))

	m.HandleFunc("GET /v1/whoami", a.user(a.whoami))
	m.HandleFunc("POST /v1/pair", a.user(a.pair))
	m.HandleFunc("POST /v1/otp", a.user(a.otp))
	m.HandleFunc("GET /v1/devices", a.user(a.myDevices))
	m.HandleFunc("DELETE /v1/devices/{id}", a.user(a.revokeMyDevice))
	return m
}

// Handler serves /admin/... and /v1/...; every response is JSON.
func (a *API) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		// Authenticate before routing, so an unauthenticated caller learns
		// nothing about which endpoints exist.
		tok, ok := a.authenticate(w, r)
		if !ok {
			return
		}
		if _, pattern := a.mux.Handler(r); pattern == "" {
			writeError(w, http.StatusNotFound, "no_such_endpoint",
				"no endpoint "+r.Method+" "+r.URL.Path,
				"the admin API is under /admin (users, tokens, pairings, devices, audit) and the user API under /v1 (whoami, pair, otp, devices)")
			return
		}
		a.mux.ServeHTTP(w, r.WithContext(withToken(r.Context(), tok)))
	})
}

// publish tells every replica; a failure is logged and reported to the
// caller, since the store already holds the decision.
func (a *API) publish(ctx context.Context, e bus.Event) bool {
	if a.ev == nil {
		return false
	}
	if err := a.ev.Publish(ctx, e); err != nil {
		a.log.Warn("admin: event not published", "kind", e.Kind, "id", e.ID, "err", err)
		return false
	}
	return true
}
