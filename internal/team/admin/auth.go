package admin

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/torii-browser/torii/internal/team/store"
)

// bootstrapTokenID names the bootstrap admin secret in listings and logs:
// it has no user, so it reaches no browser.
const bootstrapTokenID = "bootstrap"

type tokenKey struct{}

func withToken(ctx context.Context, t store.Token) context.Context {
	return context.WithValue(ctx, tokenKey{}, t)
}

func tokenFrom(ctx context.Context) store.Token {
	t, _ := ctx.Value(tokenKey{}).(store.Token)
	return t
}

func sha256Sum(b []byte) [32]byte { return sha256.Sum256(b) }

// bearer is the token in "Authorization: Bearer T", or "".
func bearer(r *http.Request) string {
	h := r.Header.Get("Authorization")
	scheme, tok, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(tok)
}

// source is the caller's address without the port, the key failed
// authentications are counted under.
func source(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

var errNoToken = errors.New("no token")

// lookup finds the token a secret is. The bootstrap secret is compared in
// constant time on its SHA-256, so neither its length nor a prefix leaks
// (SECURITY I-97).
func (a *API) lookup(ctx context.Context, secret string, tokens TokenChecker) (store.Token, error) {
	if secret == "" {
		return store.Token{}, errNoToken
	}
	if a.hasAdmin {
		h := sha256Sum([]byte(secret))
		if subtle.ConstantTimeCompare(h[:], a.adminHash[:]) == 1 {
			return store.Token{ID: bootstrapTokenID, Label: "bootstrap admin", Admin: true}, nil
		}
	}
	return tokens.CheckToken(ctx, secret)
}

// ErrNotAuthenticated: r carries no live user token, or its source is over
// its failure limit.
var ErrNotAuthenticated = errors.New("admin: no valid user token")

// Authenticate returns the live store token r carries. The bootstrap admin
// secret does not count here: it belongs to no user, so it reaches no
// browser. Failed attempts count against the source's limit. When the store
// cannot say, the error wraps store.ErrUnavailable, so a caller answers
// "try again", never "your token is wrong".
func (a *API) Authenticate(r *http.Request) (store.Token, error) {
	src := source(r)
	if a.authLimit.blocked(src) {
		return store.Token{}, ErrNotAuthenticated
	}
	t, err := a.lookup(r.Context(), bearer(r), a.tokens)
	if err != nil && !isUnknownToken(err) {
		return store.Token{}, err
	}
	if err != nil || t.UserID == "" {
		a.authLimit.fail(src)
		return store.Token{}, ErrNotAuthenticated
	}
	return t, nil
}

// isUnknownToken: the store answered, and no live token has this secret.
func isUnknownToken(err error) bool {
	return errors.Is(err, errNoToken) || errors.Is(err, store.ErrNotFound)
}

// authenticate admits r or writes the refusal: 429 for a source over its
// failure limit, 401 for no or an unknown token, 403 for a token of the
// wrong kind, 503 when the store cannot say.
func (a *API) authenticate(w http.ResponseWriter, r *http.Request) (store.Token, bool) {
	src := source(r)
	// SECURITY I-97: a source that keeps guessing tokens is refused
	// outright for the rest of the minute, right token or not.
	if wait, limited := a.authLimit.retryAfter(src); limited {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		writeError(w, http.StatusTooManyRequests, "rate_limited",
			"too many failed authentications from this address",
			"wait "+strconv.Itoa(wait)+"s, then retry with a valid token")
		return store.Token{}, false
	}
	t, err := a.lookup(r.Context(), bearer(r), a.st)
	switch {
	case err != nil && !isUnknownToken(err):
		// The database could not say: not the caller's fault, so not a
		// failure counted against them, and never a pass.
		writeStoreDown(w, a, err)
		return store.Token{}, false
	case err != nil:
		a.authLimit.fail(src)
		w.Header().Set("WWW-Authenticate", `Bearer realm="torii"`)
		msg := "this token is not valid (unknown or revoked)"
		if errors.Is(err, errNoToken) {
			msg = "no bearer token"
		}
		writeError(w, http.StatusUnauthorized, "unauthorized", msg,
			"send `Authorization: Bearer <token>`; an admin creates tokens with `torii admin token new`")
		return store.Token{}, false
	}
	switch {
	case strings.HasPrefix(r.URL.Path, "/admin/") || r.URL.Path == "/admin":
		if !t.Admin {
			// SECURITY I-97: the admin API takes admin tokens only.
			writeError(w, http.StatusForbidden, "admin_required",
				"this is a user token; the admin API needs an admin token",
				"ask an admin, or use the user API: `torii pair`, `torii launch`, `torii mcp` with --server")
			return store.Token{}, false
		}
	case strings.HasPrefix(r.URL.Path, "/v1/"):
		if t.UserID == "" {
			writeError(w, http.StatusForbidden, "user_required",
				"the bootstrap admin secret belongs to no user, so it has no browsers",
				"create a user and a token for it: `torii admin user add NAME`, `torii admin token new --user NAME`")
			return store.Token{}, false
		}
	}
	return t, true
}
