package admin

import (
	"context"
	"errors"
	"net/http"
	"regexp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

type handler func(w http.ResponseWriter, r *http.Request, tok store.Token)

// admin and user pass the authenticated token on; Handler has already
// refused a token of the wrong kind for the path.
func (a *API) admin(h handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) { h(w, r, tokenFrom(r.Context())) }
}

func (a *API) user(h handler) http.HandlerFunc { return a.admin(h) }

// nameRule is the user-name rule, said the way a person fixes a name. It
// keeps names clear of NATS subject wildcards ('*', '>'), spaces and case
// confusion.
const nameRule = "a user name is 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit (no spaces, no uppercase, no '*' or '>')"

var validName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,63}$`)

type userReq struct {
	Name string `json:"name"`
}

func (a *API) createUser(w http.ResponseWriter, r *http.Request, _ store.Token) {
	var req userReq
	if !decode(w, r, &req) {
		return
	}
	if !validName.MatchString(req.Name) {
		writeError(w, http.StatusBadRequest, "bad_name", nameRule+"; got "+quote(req.Name), "for example alice, bob.smith, ci-bot")
		return
	}
	u, err := a.st.CreateUser(r.Context(), req.Name)
	if err != nil {
		a.storeError(w, err, "user", req.Name)
		return
	}
	writeJSON(w, http.StatusCreated, u)
}

func (a *API) listUsers(w http.ResponseWriter, r *http.Request, _ store.Token) {
	us, err := a.st.Users(r.Context())
	if err != nil {
		a.storeError(w, err, "user", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"users": nonNil(us)})
}

// resolveUser finds a user by ID or name.
func (a *API) resolveUser(ctx context.Context, s string) (store.User, error) {
	u, err := a.st.User(ctx, s)
	if errors.Is(err, store.ErrNotFound) && validName.MatchString(s) {
		u, err = a.st.UserByName(ctx, s)
	}
	return u, err
}

func (a *API) deleteUser(w http.ResponseWriter, r *http.Request, _ store.Token) {
	id := r.PathValue("id")
	u, err := a.resolveUser(r.Context(), id)
	if err == nil {
		err = a.st.DeleteUser(r.Context(), u.ID)
	}
	if err != nil {
		a.storeError(w, err, "user", id)
		return
	}
	pub := a.publish(r.Context(), bus.Event{Kind: bus.EventUserDeleted, ID: u.ID, UserID: u.ID})
	writeJSON(w, http.StatusOK, revoked{Deleted: u.ID, Published: pub})
}

// revoked answers a revocation. Published false means the store holds the
// decision but the other replicas were not told: live sessions may last
// until they next check the store.
type revoked struct {
	Deleted   string `json:"deleted"`
	Published bool   `json:"published"`
}

type tokenReq struct {
	User  string `json:"user"`
	Label string `json:"label"`
	Admin bool   `json:"admin"`
}

type newToken struct {
	Token   store.Token      `json:"token"`
	Secret  string           `json:"secret"`
	Gateway *config.TeamURLs `json:"gateway,omitempty"`
}

func (a *API) createToken(w http.ResponseWriter, r *http.Request, _ store.Token) {
	var req tokenReq
	if !decode(w, r, &req) {
		return
	}
	if req.User == "" {
		writeError(w, http.StatusBadRequest, "missing_user", "a token belongs to a user: \"user\" is required",
			"create the user first: `torii admin user add NAME`")
		return
	}
	u, err := a.resolveUser(r.Context(), req.User)
	if err != nil {
		a.storeError(w, err, "user", req.User)
		return
	}
	t, secret, err := a.st.CreateToken(r.Context(), u.ID, req.Label, req.Admin)
	if err != nil {
		a.storeError(w, err, "token", req.Label)
		return
	}
	writeJSON(w, http.StatusCreated, newToken{Token: t, Secret: secret, Gateway: a.public})
}

func (a *API) listTokens(w http.ResponseWriter, r *http.Request, _ store.Token) {
	uid, ok := a.userFilter(w, r)
	if !ok {
		return
	}
	ts, err := a.st.Tokens(r.Context(), uid)
	if err != nil {
		a.storeError(w, err, "token", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"tokens": nonNil(ts)})
}

// userFilter resolves ?user= (a name or ID) to a user ID, "" for all.
func (a *API) userFilter(w http.ResponseWriter, r *http.Request) (string, bool) {
	q := r.URL.Query().Get("user")
	if q == "" {
		return "", true
	}
	u, err := a.resolveUser(r.Context(), q)
	if err != nil {
		a.storeError(w, err, "user", q)
		return "", false
	}
	return u.ID, true
}

func (a *API) revokeToken(w http.ResponseWriter, r *http.Request, _ store.Token) {
	id := r.PathValue("id")
	ts, err := a.st.Tokens(r.Context(), "")
	if err != nil {
		a.storeError(w, err, "token", id)
		return
	}
	var found *store.Token
	for i := range ts {
		if ts[i].ID == id {
			found = &ts[i]
		}
	}
	if found == nil {
		notFound(w, "token", id)
		return
	}
	if err := a.st.RevokeToken(r.Context(), id); err != nil {
		a.storeError(w, err, "token", id)
		return
	}
	pub := a.publish(r.Context(), bus.Event{Kind: bus.EventTokenRevoked, ID: id, UserID: found.UserID})
	writeJSON(w, http.StatusOK, revoked{Deleted: id, Published: pub})
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return "\"" + s + "\""
}
