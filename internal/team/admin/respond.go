package admin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/torii-browser/torii/internal/team/store"
)

// maxBody bounds every request body (SECURITY I-97).
const maxBody = 64 << 10

type errorBody struct {
	Error apiError `json:"error"`
}

type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Hint    string `json:"hint"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	// Messages name characters such as '>' that people read in terminals.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		b.Reset()
		b.WriteString(`{"error":{"code":"internal","message":"response not encodable","hint":""}}` + "\n")
	}
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

func writeError(w http.ResponseWriter, status int, code, msg, hint string) {
	writeJSON(w, status, errorBody{apiError{Code: code, Message: msg, Hint: hint}})
}

func writeStoreDown(w http.ResponseWriter, a *API, err error) {
	a.log.Warn("admin: store unavailable", "err", err)
	WriteUnavailable(w, "store_unavailable",
		"the gateway's database is not answering",
		"retry shortly; an operator should check the store (Postgres) and /readyz")
}

// WriteUnavailable is the API's typed 503 with Retry-After: the store is
// down mid-run, or the replica's engines are not open yet.
func WriteUnavailable(w http.ResponseWriter, code, msg, hint string) {
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, code, msg, hint)
}

// decode reads r's JSON body into v strictly: at most maxBody bytes, one
// object, no unknown fields. It writes the 400 or 413 itself.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if dec.Decode(&struct{}{}) != io.EOF {
			err = errors.New("trailing data after the JSON object")
		}
	}
	if err == nil {
		return true
	}
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, "body_too_large",
			fmt.Sprintf("the request body is over %d KiB", maxBody>>10), "send a smaller JSON object")
	case errors.Is(err, io.EOF):
		writeError(w, http.StatusBadRequest, "bad_json", "the request body is empty", "send a JSON object")
	default:
		msg := err.Error()
		if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
			msg = "unknown field " + f
		}
		writeError(w, http.StatusBadRequest, "bad_json", "the request body is not valid: "+msg,
			"see docs/team.md for each endpoint's fields")
	}
	return false
}

// notFound is the one body for a missing object and for another user's:
// byte for byte the same, so it reveals nothing. It does not echo the id,
// so even the bodies for two different ids are equal (SECURITY I-98).
func notFound(w http.ResponseWriter, kind, _ string) {
	writeError(w, http.StatusNotFound, "not_found",
		"no such "+kind,
		listHint(kind))
}

func listHint(kind string) string {
	if h, ok := listHints[kind]; ok {
		return "list what there is: " + h
	}
	return "check the id"
}

var listHints = map[string]string{
	"user":            "`torii admin user list`",
	"token":           "`torii admin token list`",
	"device":          "`torii admin device list` (admin) or GET /v1/devices",
	"pairing request": "`torii admin pairings`; a request expires, then the browser starts again",
}

// storeError answers err from the store for an object of kind.
func (a *API) storeError(w http.ResponseWriter, err error, kind, id string) {
	switch {
	case errors.Is(err, store.ErrNotFound):
		notFound(w, kind, id)
	case errors.Is(err, store.ErrUnavailable):
		writeStoreDown(w, a, err)
	case errors.Is(err, store.ErrExists):
		writeError(w, http.StatusConflict, "exists", fmt.Sprintf("%s %q already exists", kind, id), "pick another name, or list them")
	case errors.Is(err, store.ErrBadName):
		writeError(w, http.StatusBadRequest, "bad_name", nameRule, "for example alice, bob.smith, ci-bot")
	case errors.Is(err, store.ErrBadLabel):
		writeError(w, http.StatusBadRequest, "bad_label", "a label is at most 64 printable characters", "shorten the label")
	case errors.Is(err, store.ErrDecided):
		writeError(w, http.StatusConflict, "already_decided",
			"the pairing request was already decided or has expired", "start pairing again from the browser")
	case errors.Is(err, store.ErrWrongCode):
		writeError(w, http.StatusBadRequest, "wrong_code",
			"the code does not match the pairing request", "type the 6 digits the browser shows")
	default:
		a.log.Error("admin: store error", "kind", kind, "err", err)
		writeError(w, http.StatusInternalServerError, "internal", "the gateway failed: "+err.Error(), "retry; if it persists, see the gateway's log")
	}
}
