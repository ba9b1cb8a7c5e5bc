package admin

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/torii-browser/torii/internal/team/store"
)

func (a *API) listPairings(w http.ResponseWriter, r *http.Request, _ store.Token) {
	ps, err := a.st.PendingPairRequests(r.Context())
	if err != nil {
		a.storeError(w, err, "pairing request", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"pairings": nonNil(ps)})
}

type approveReq struct {
	User string `json:"user"`
	Code string `json:"code"`
}

func (a *API) approvePairing(w http.ResponseWriter, r *http.Request, _ store.Token) {
	id := r.PathValue("id")
	var req approveReq
	if !decode(w, r, &req) {
		return
	}
	code, ok := normalizeCode(req.Code)
	if !ok {
		writeBadCode(w)
		return
	}
	if req.User == "" {
		writeError(w, http.StatusBadRequest, "missing_user", "an approved browser belongs to a user: \"user\" is required",
			"name the person whose browser it is: --user NAME")
		return
	}
	u, err := a.resolveUser(r.Context(), req.User)
	if err != nil {
		a.storeError(w, err, "user", req.User)
		return
	}
	a.decide(w, r, id, code, u.ID, true)
}

type denyReq struct {
	Code string `json:"code"`
}

func (a *API) denyPairing(w http.ResponseWriter, r *http.Request, tok store.Token) {
	id := r.PathValue("id")
	var req denyReq
	if r.ContentLength != 0 && !decode(w, r, &req) {
		return
	}
	code := req.Code
	if code == "" {
		// The admin sees every pending code, so a denial need not repeat it.
		p, err := a.st.PairRequest(r.Context(), id)
		if err != nil {
			a.storeError(w, err, "pairing request", id)
			return
		}
		code = p.Code
	}
	a.decide(w, r, id, code, tok.UserID, false)
}

func (a *API) decide(w http.ResponseWriter, r *http.Request, id, code, userID string, approve bool) {
	p, err := a.st.DecidePair(r.Context(), id, code, userID, approve)
	if err != nil {
		a.storeError(w, err, "pairing request", id)
		return
	}
	pub := a.publish(r.Context(), Event{Kind: EventPairDecided, ID: p.ID, UserID: p.UserID})
	writeJSON(w, http.StatusOK, decided{Pairing: p, Published: pub})
}

type decided struct {
	Pairing   store.PairRequest `json:"pairing"`
	Published bool              `json:"published"`
}

func (a *API) listDevices(w http.ResponseWriter, r *http.Request, _ store.Token) {
	uid, ok := a.userFilter(w, r)
	if !ok {
		return
	}
	ds, err := a.st.Devices(r.Context(), uid)
	if err != nil {
		a.storeError(w, err, "device", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"devices": nonNil(ds)})
}

func (a *API) revokeDevice(w http.ResponseWriter, r *http.Request, _ store.Token) {
	id := r.PathValue("id")
	d, err := a.st.Device(r.Context(), id)
	if err == nil {
		err = a.st.RevokeDevice(r.Context(), id)
	}
	if err != nil {
		a.storeError(w, err, "device", id)
		return
	}
	pub := a.publish(r.Context(), Event{Kind: EventDeviceRevoked, ID: id, UserID: d.UserID})
	writeJSON(w, http.StatusOK, revoked{Deleted: id, Published: pub})
}

const maxAuditLimit = 1000

func (a *API) listAudit(w http.ResponseWriter, r *http.Request, _ store.Token) {
	uid, ok := a.userFilter(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	after, err1 := intParam(q.Get("after"), 0)
	limit, err2 := intParam(q.Get("limit"), 100)
	if err := errors.Join(err1, err2); err != nil || after < 0 || limit < 1 || limit > maxAuditLimit {
		writeError(w, http.StatusBadRequest, "bad_query",
			"after is a record number (0 or more) and limit 1-"+strconv.Itoa(maxAuditLimit),
			"for example ?after=120&limit=50")
		return
	}
	rs, err := a.st.AuditRecords(r.Context(), uid, after, int(limit))
	if err != nil {
		a.storeError(w, err, "audit record", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"records": nonNil(rs)})
}

func intParam(s string, def int64) (int64, error) {
	if s == "" {
		return def, nil
	}
	return strconv.ParseInt(s, 10, 64)
}

func (a *API) verifyAudit(w http.ResponseWriter, r *http.Request, _ store.Token) {
	if len(a.pub) == 0 {
		writeError(w, http.StatusServiceUnavailable, "no_identity",
			"this gateway was started without its identity's public key, so it cannot check checkpoints",
			"set team.identityFile in config.json")
		return
	}
	brk, err := a.st.VerifyAudit(r.Context(), a.pub)
	if err != nil {
		a.storeError(w, err, "audit record", "")
		return
	}
	if brk != nil {
		writeJSON(w, http.StatusOK, map[string]any{"ok": false, "break": brk})
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ok": true})
}
