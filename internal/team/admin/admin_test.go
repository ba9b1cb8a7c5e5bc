package admin_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/team/admin"
	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

const bootstrap = "bootstrap-secret-for-tests"

// recorder is an Events that keeps what was published.
type recorder struct {
	mu sync.Mutex
	ev []bus.Event
}

func (r *recorder) Publish(_ context.Context, e bus.Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ev = append(r.ev, e)
	return nil
}

func (r *recorder) has(kind, id string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.ev {
		if e.Kind == kind && e.ID == id {
			return true
		}
	}
	return false
}

type env struct {
	t   *testing.T
	st  store.Store
	ev  *recorder
	api *admin.API
	srv *httptest.Server
}

func openStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "team.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newEnvOn(t *testing.T, st store.Store) *env {
	t.Helper()
	ev := &recorder{}
	api := admin.New(st, ev, []byte(bootstrap), admin.Options{})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, st: st, ev: ev, api: api, srv: srv}
}

func newEnv(t *testing.T) *env { return newEnvOn(t, openStore(t)) }

type resp struct {
	status int
	header http.Header
	body   []byte
}

func (r resp) errCode() string {
	var b struct {
		Error struct{ Code, Message, Hint string }
	}
	json.Unmarshal(r.body, &b)
	return b.Error.Code
}

func (e *env) do(method, path, token string, body any) resp {
	e.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		j, _ := json.Marshal(b)
		rd = bytes.NewReader(j)
	}
	req, _ := http.NewRequest(method, e.srv.URL+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		e.t.Errorf("%s %s: Content-Type %q, want application/json", method, path, ct)
	}
	if res.StatusCode >= 400 {
		var eb struct {
			Error *struct{ Code, Message, Hint string }
		}
		if json.Unmarshal(b, &eb) != nil || eb.Error == nil || eb.Error.Code == "" || eb.Error.Message == "" {
			e.t.Errorf("%s %s: error body %s lacks error.code/message", method, path, b)
		}
	}
	return resp{res.StatusCode, res.Header, b}
}

func (e *env) must(r resp, status int) resp {
	e.t.Helper()
	if r.status != status {
		e.t.Fatalf("status %d, want %d: %s", r.status, status, r.body)
	}
	return r
}

func decodeInto[T any](t *testing.T, b []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return v
}

// userWithToken makes a user and a token of it through the API.
func (e *env) userWithToken(name string, isAdmin bool) (store.User, string) {
	e.t.Helper()
	u := decodeInto[store.User](e.t, e.must(e.do("POST", "/admin/users", bootstrap, map[string]any{"name": name}), 201).body)
	nt := decodeInto[struct {
		Token  store.Token
		Secret string
	}](e.t, e.must(e.do("POST", "/admin/tokens", bootstrap, map[string]any{"user": name, "label": "test", "admin": isAdmin}), 201).body)
	if nt.Secret == "" || nt.Token.UserID != u.ID {
		e.t.Fatalf("token %+v", nt)
	}
	return u, nt.Secret
}

func deviceKey(t *testing.T) []byte {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k.PublicKey().Bytes()
}

func (e *env) pending(code string) store.PairRequest {
	e.t.Helper()
	p, err := e.st.CreatePairRequest(context.Background(), store.PairRequest{
		DeviceName: "Test Chrome", Origin: "chrome-extension://abc", DeviceKey: deviceKey(e.t), Code: code,
	}, time.Minute)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func TestNoOrUnknownTokenIs401WithChallenge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, tok := range []string{"", "torii_nope", bootstrap + "x"} {
		r := e.must(e.do("GET", "/admin/users", tok, nil), 401)
		if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="torii"` {
			t.Errorf("token %q: WWW-Authenticate %q", tok, got)
		}
	}
	// Unauthenticated callers learn nothing of which endpoints exist.
	e.must(e.do("GET", "/admin/nothing-here", "", nil), 401)
}

func TestUserTokenOnAdminIs403WithHint(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, tok := e.userWithToken("alice", false)
	r := e.must(e.do("GET", "/admin/users", tok, nil), 403)
	if r.errCode() != "admin_required" || !strings.Contains(string(r.body), "hint") {
		t.Fatalf("%s", r.body)
	}
	// An admin token from the store works on /admin, and as its user on /v1.
	_, adm := e.userWithToken("root", true)
	e.must(e.do("GET", "/admin/users", adm, nil), 200)
	e.must(e.do("GET", "/v1/whoami", adm, nil), 200)
}

func TestBootstrapHasNoUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.must(e.do("GET", "/v1/whoami", bootstrap, nil), 403)
	if r.errCode() != "user_required" {
		t.Fatalf("%s", r.body)
	}
	req := httptest.NewRequest("GET", "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+bootstrap)
	if _, err := e.api.Authenticate(req); err == nil {
		t.Fatal("Authenticate admitted the bootstrap secret, which has no user")
	}
	_, tok := e.userWithToken("alice", false)
	req.Header.Set("Authorization", "Bearer "+tok)
	if got, err := e.api.Authenticate(req); err != nil || got.UserID == "" {
		t.Fatalf("Authenticate refused a user token: %+v", got)
	}
}

func TestBadUserNamesNameTheRule(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, name := range []string{"", "Alice", "bob smith", "a*", "a>b", "eve.*", ".dot", strings.Repeat("a", 65), "ümlaut"} {
		r := e.must(e.do("POST", "/admin/users", bootstrap, map[string]any{"name": name}), 400)
		if r.errCode() != "bad_name" || !strings.Contains(string(r.body), "a-z, 0-9") {
			t.Errorf("name %q: %s", name, r.body)
		}
	}
	e.must(e.do("POST", "/admin/users", bootstrap, map[string]any{"name": "bob.smith-2_x"}), 201)
	r := e.must(e.do("POST", "/admin/users", bootstrap, map[string]any{"name": "bob.smith-2_x"}), 409)
	if r.errCode() != "exists" {
		t.Fatalf("%s", r.body)
	}
}

func TestBodiesStrictAndBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.must(e.do("POST", "/admin/users", bootstrap, `{"name":"x","nmae":"y"}`), 400)
	if !strings.Contains(string(r.body), `nmae`) {
		t.Fatalf("unknown field not named: %s", r.body)
	}
	e.must(e.do("POST", "/admin/users", bootstrap, `{"name":"x"} {"name":"y"}`), 400)
	e.must(e.do("POST", "/admin/users", bootstrap, `not json`), 400)
	e.must(e.do("POST", "/admin/users", bootstrap, nil), 400)
	big := `{"name":"` + strings.Repeat("a", 70<<10) + `"}`
	r = e.must(e.do("POST", "/admin/users", bootstrap, big), 413)
	if r.errCode() != "body_too_large" {
		t.Fatalf("%s", r.body)
	}
}

func TestUnknownEndpointIsJSON404(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.must(e.do("GET", "/admin/nothing-here", bootstrap, nil), 404)
	if r.errCode() != "no_such_endpoint" {
		t.Fatalf("%s", r.body)
	}
	e.must(e.do("PUT", "/admin/users", bootstrap, nil), 404)
}

func TestTokenRevocationPublishesAndStopsTheToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, tok := e.userWithToken("alice", false)
	who := decodeInto[struct {
		Token store.Token
		User  store.User
	}](t, e.must(e.do("GET", "/v1/whoami", tok, nil), 200).body)
	if who.User.Name != "alice" || who.Token.UserID != u.ID {
		t.Fatalf("%+v", who)
	}
	list := decodeInto[struct{ Tokens []store.Token }](t, e.must(e.do("GET", "/admin/tokens?user=alice", bootstrap, nil), 200).body)
	if len(list.Tokens) != 1 || list.Tokens[0].ID != who.Token.ID {
		t.Fatalf("%+v", list)
	}
	if strings.Contains(string(e.do("GET", "/admin/tokens", bootstrap, nil).body), tok) {
		t.Fatal("a listing shows a secret")
	}
	e.must(e.do("DELETE", "/admin/tokens/"+who.Token.ID, bootstrap, nil), 200)
	if !e.ev.has(bus.EventTokenRevoked, who.Token.ID) {
		t.Fatal("no token.revoked event")
	}
	e.must(e.do("GET", "/v1/whoami", tok, nil), 401)
	e.must(e.do("DELETE", "/admin/tokens/"+who.Token.ID, bootstrap, nil), 404)
	e.must(e.do("POST", "/admin/tokens", bootstrap, map[string]any{"user": "nobody", "label": "x"}), 404)
	e.must(e.do("POST", "/admin/tokens", bootstrap, map[string]any{"label": "x"}), 400)
}

func TestDeleteUserPublishesAndRevokesItsTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	u, tok := e.userWithToken("alice", false)
	e.must(e.do("DELETE", "/admin/users/alice", bootstrap, nil), 200)
	if !e.ev.has(bus.EventUserDeleted, u.ID) {
		t.Fatal("no user.deleted event")
	}
	e.must(e.do("GET", "/v1/whoami", tok, nil), 401)
	e.must(e.do("DELETE", "/admin/users/alice", bootstrap, nil), 404)
}

// Another user's device reads exactly as a missing one, byte for byte.
func TestAnotherUsersDeviceIsTheSame404AsAMissingOne(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, alice := e.userWithToken("alice", false)
	bob, bobTok := e.userWithToken("bob", false)
	d, err := e.st.AddDevice(context.Background(), bob.ID, "Bob's Chrome", "chrome-extension://abc", deviceKey(t))
	if err != nil {
		t.Fatal(err)
	}
	theirs := e.must(e.do("DELETE", "/v1/devices/"+d.ID, alice, nil), 404)
	missing := e.must(e.do("DELETE", "/v1/devices/"+strings.Repeat("0", len(d.ID)), alice, nil), 404)
	if !bytes.Equal(theirs.body, missing.body) {
		t.Fatalf("another user's device:\n%s\nmissing:\n%s", theirs.body, missing.body)
	}
	mine := decodeInto[struct{ Devices []store.Device }](t, e.must(e.do("GET", "/v1/devices", alice, nil), 200).body)
	if len(mine.Devices) != 0 {
		t.Fatalf("alice sees %+v", mine.Devices)
	}
	if e.ev.has(bus.EventDeviceRevoked, d.ID) {
		t.Fatal("a refused revocation published")
	}
	e.must(e.do("DELETE", "/v1/devices/"+d.ID, bobTok, nil), 200)
	if !e.ev.has(bus.EventDeviceRevoked, d.ID) {
		t.Fatal("no device.revoked event")
	}
}

func TestFailedAuthIsRateLimitedPerSource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for i := 0; i < 20; i++ {
		e.must(e.do("GET", "/v1/whoami", "torii_guess", nil), 401)
	}
	r := e.must(e.do("GET", "/admin/users", bootstrap, nil), 429)
	if r.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After")
	}
}

func TestAuditQueries(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := decodeInto[struct{ Records []store.AuditRecord }](t, e.must(e.do("GET", "/admin/audit", bootstrap, nil), 200).body)
	if r.Records == nil {
		t.Fatal("records is null, want []")
	}
	for _, q := range []string{"?limit=0", "?limit=5000", "?after=-1", "?after=x"} {
		e.must(e.do("GET", "/admin/audit"+q, bootstrap, nil), 400)
	}
	e.must(e.do("GET", "/admin/audit?user=nobody", bootstrap, nil), 404)
	// Without the gateway's public key there is nothing to verify against.
	e.must(e.do("GET", "/admin/audit/verify", bootstrap, nil), 503)
}

func TestOTPIsBoundToTheUser(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, tok := e.userWithToken("alice", false)
	o := decodeInto[struct {
		Secret    string
		ExpiresAt time.Time
	}](t, e.must(e.do("POST", "/v1/otp", tok, nil), 201).body)
	if o.Secret == "" || !o.ExpiresAt.After(time.Now()) {
		t.Fatalf("%+v", o)
	}
	type consumer interface {
		ConsumeOTP(ctx context.Context, secret string) (string, error)
	}
	uid, err := e.st.(consumer).ConsumeOTP(context.Background(), o.Secret)
	if err != nil || uid != alice.ID {
		t.Fatalf("%q %v", uid, err)
	}
}

// failing is an Events whose bus is down.
type failing struct{}

func (failing) Publish(context.Context, bus.Event) error { return errors.New("bus down") }

func TestRevocationSaysWhenOtherReplicasWereNotTold(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	srv := httptest.NewServer(admin.New(st, failing{}, []byte(bootstrap), admin.Options{}).Handler())
	t.Cleanup(srv.Close)
	e := &env{t: t, st: st, srv: srv}
	u, _ := e.userWithToken("alice", false)
	ts, err := st.Tokens(context.Background(), u.ID)
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v %v", ts, err)
	}
	r := e.must(e.do("DELETE", "/admin/tokens/"+ts[0].ID, bootstrap, nil), 200)
	if got := decodeInto[struct{ Published bool }](t, r.body); got.Published {
		t.Fatal("published reported true with the bus down")
	}
	// The store holds the revocation whatever the bus did.
	if left, _ := st.Tokens(context.Background(), u.ID); len(left) != 0 {
		t.Fatalf("token still listed: %+v", left)
	}
}

func TestStoreDownIs503NotAnAuthFailure(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, tok := e.userWithToken("alice", false)
	e.st.Close()
	r := e.must(e.do("GET", "/v1/whoami", tok, nil), 503)
	if r.errCode() != "store_unavailable" || r.header.Get("Retry-After") == "" {
		t.Fatalf("%v %s", r.header, r.body)
	}
	// Past authentication, the store's own error decides (a closed pool is
	// not "unavailable" to it); either way a 5xx, never a 4xx blaming the caller.
	if r := e.do("GET", "/admin/users", bootstrap, nil); r.status < 500 {
		t.Fatalf("%d %s", r.status, r.body)
	}
}
