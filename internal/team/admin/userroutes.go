package admin

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

type whoami struct {
	Token   store.Token      `json:"token"`
	User    store.User       `json:"user"`
	Gateway *config.TeamURLs `json:"gateway,omitempty"`
}

func (a *API) whoami(w http.ResponseWriter, r *http.Request, tok store.Token) {
	u, err := a.st.User(r.Context(), tok.UserID)
	if err != nil {
		a.storeError(w, err, "user", tok.UserID)
		return
	}
	writeJSON(w, http.StatusOK, whoami{Token: tok, User: u, Gateway: a.public})
}

type pairReq struct {
	Code string `json:"code"`
}

// normalizeCode accepts "123456" and "123 456".
func normalizeCode(s string) (string, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if len(s) != 6 {
		return "", false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return "", false
		}
	}
	return s, true
}

func writeBadCode(w http.ResponseWriter) {
	writeError(w, http.StatusBadRequest, "bad_code", "a pairing code is 6 digits",
		"type the code the browser shows, e.g. 123456 or \"123 456\"")
}

// pair approves, as the token's user, the pending request showing code.
// Pending codes are never listed to users; guessing one is what the
// per-token limit on wrong codes stops (SECURITY I-98).
func (a *API) pair(w http.ResponseWriter, r *http.Request, tok store.Token) {
	var req pairReq
	if !decode(w, r, &req) {
		return
	}
	if wait, limited := a.pairLimit.retryAfter(tok.ID); limited {
		w.Header().Set("Retry-After", strconv.Itoa(wait))
		writeError(w, http.StatusTooManyRequests, "rate_limited",
			"too many wrong pairing codes from this token",
			"wait "+strconv.Itoa(wait)+"s, then type the 6 digits the browser shows")
		return
	}
	code, ok := normalizeCode(req.Code)
	if !ok {
		a.pairLimit.fail(tok.ID)
		writeBadCode(w)
		return
	}
	ps, err := a.st.PendingPairRequests(r.Context())
	if err != nil {
		a.storeError(w, err, "pairing request", "")
		return
	}
	var id string
	for _, p := range ps {
		if p.Code == code {
			id = p.ID
			break
		}
	}
	if id == "" {
		a.pairLimit.fail(tok.ID)
		writeError(w, http.StatusNotFound, "no_pending_pairing",
			"no pending pairing request shows the code "+code,
			"check the 6 digits in the browser; if it expired, start pairing again from the extension")
		return
	}
	a.decide(w, r, id, code, tok.UserID, true)
}

// otpIssuer is the store's one-time launch secrets.
type otpIssuer interface {
	CreateOTP(ctx context.Context, userID string, ttl time.Duration) (string, error)
}

type otpResp struct {
	Secret    string           `json:"secret"`
	ExpiresAt time.Time        `json:"expiresAt"`
	Gateway   *config.TeamURLs `json:"gateway,omitempty"`
}

func (a *API) otp(w http.ResponseWriter, r *http.Request, tok store.Token) {
	iss, ok := a.st.(otpIssuer)
	if !ok {
		writeError(w, http.StatusNotImplemented, "no_otp", "this gateway's store does not issue launch secrets",
			"pair the browser with a code instead: `torii pair --server URL --code 123456`")
		return
	}
	secret, err := iss.CreateOTP(r.Context(), tok.UserID, a.otpTTL)
	if err != nil {
		a.storeError(w, err, "launch secret", "")
		return
	}
	// The database decides expiry; this is what the caller is told to expect.
	writeJSON(w, http.StatusCreated, otpResp{Secret: secret, ExpiresAt: time.Now().Add(a.otpTTL).UTC(), Gateway: a.public})
}

func (a *API) myDevices(w http.ResponseWriter, r *http.Request, tok store.Token) {
	ds, err := a.st.Devices(r.Context(), tok.UserID)
	if err != nil {
		a.storeError(w, err, "device", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": nonNil(ds)})
}

// revokeMyDevice revokes one of the token's user's devices. Another
// user's device gets the very bytes a missing one does (SECURITY I-98).
func (a *API) revokeMyDevice(w http.ResponseWriter, r *http.Request, tok store.Token) {
	id := r.PathValue("id")
	d, err := a.st.Device(r.Context(), id)
	if err == nil && d.UserID != tok.UserID {
		err = store.ErrNotFound
	}
	if err == nil {
		err = a.st.RevokeDevice(r.Context(), id)
	}
	if err != nil {
		a.storeError(w, err, "device", id)
		return
	}
	pub := a.publish(r.Context(), bus.Event{Kind: bus.EventDeviceRevoked, ID: id, UserID: tok.UserID})
	writeJSON(w, http.StatusOK, revoked{Deleted: id, Published: pub})
}
