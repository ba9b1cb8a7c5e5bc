// Package storetest is the one contract suite both team stores keep: Run
// it with a way to make an empty database of the kind under test.
package storetest

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/team/store"
)

// Backend makes databases of one kind.
type Backend struct {
	// NewDB makes a new, empty database and returns its store URL.
	NewDB func(t *testing.T) string
	// Exec runs SQL on the database behind the store's back, as someone
	// who can write to it would.
	Exec func(t *testing.T, url, sql string)
	// Dump is every byte the database holds, to look for a secret in.
	Dump func(t *testing.T, url string) []byte
}

// Open opens a store on url, closed when the test ends.
func Open(t *testing.T, url string) store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// key is a fresh P-256 public key, as a browser pairs with.
func key(t testing.TB) []byte {
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k.PublicKey().Bytes()
}

func must[T any](t *testing.T) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func wantErr(t *testing.T, err, want error, what string) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("%s: %v, want %v", what, err, want)
	}
}

// Run runs the contract on b.
func Run(t *testing.T, b Backend) {
	tests := map[string]func(t *testing.T, b Backend){
		"Users":            testUsers,
		"BadNames":         testBadNames,
		"Tokens":           testTokens,
		"TokensOnlyHashed": testTokensOnlyHashed,
		"Devices":          testDevices,
		"OtherUsersDevice": testOtherUsersDevice,
		"BatchReads":       testBatchReads,
		"DeleteUser":       testDeleteUser,
		"Pairing":          testPairing,
		"PairingExpiry":    testPairingExpiry,
		"DecideOnceAcross": testDecideOnceAcross,
		"OTPs":             testOTPs,
		"Policy":           testPolicy,
		"Audit":            testAudit,
		"AuditConcurrent":  testAuditConcurrent,
		"AuditTampered":    testAuditTampered,
		"AuditCheckpoint":  testAuditCheckpoint,
		"AuditRewritten":   testAuditRewritten,
	}
	for name, f := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, b)
		})
	}
}

var ctx = context.Background()

func testUsers(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	bob := must[store.User](t)(s.CreateUser(ctx, "bob.b-2_x"))
	if a.ID == "" || a.ID == bob.ID || a.CreatedAt.IsZero() {
		t.Fatalf("user %+v", a)
	}
	_, err := s.CreateUser(ctx, "alice")
	wantErr(t, err, store.ErrExists, "second alice")
	if u := must[store.User](t)(s.User(ctx, a.ID)); u.Name != "alice" {
		t.Fatalf("User: %+v", u)
	}
	if u := must[store.User](t)(s.UserByName(ctx, "bob.b-2_x")); u.ID != bob.ID {
		t.Fatalf("UserByName: %+v", u)
	}
	_, err = s.User(ctx, "nobody")
	wantErr(t, err, store.ErrNotFound, "missing user")
	_, err = s.UserByName(ctx, "carol")
	wantErr(t, err, store.ErrNotFound, "missing name")
	if us := must[[]store.User](t)(s.Users(ctx)); len(us) != 2 || us[0].Name != "alice" {
		t.Fatalf("Users: %+v", us)
	}
	wantErr(t, s.DeleteUser(ctx, "nobody"), store.ErrNotFound, "delete missing")
}

func testBadNames(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	for _, n := range []string{"", "a*", "a>b", "torii.>", ".alice", "-a", "_a", "al ice", "Alice", "ALICE", strings.Repeat("a", 65), "é", "a\x00", "a/b"} {
		_, err := s.CreateUser(ctx, n)
		wantErr(t, err, store.ErrBadName, fmt.Sprintf("CreateUser(%q)", n))
		_, err = s.UserByName(ctx, n)
		wantErr(t, err, store.ErrBadName, fmt.Sprintf("UserByName(%q)", n))
	}
	must[store.User](t)(s.CreateUser(ctx, strings.Repeat("a", 64)))
}

func testTokens(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	bob := must[store.User](t)(s.CreateUser(ctx, "bob"))
	tok, secret, err := s.CreateToken(ctx, a.ID, "laptop agent", false)
	if err != nil || secret == "" || tok.UserID != a.ID || tok.Admin {
		t.Fatalf("CreateToken: %+v %q %v", tok, secret, err)
	}
	adm, admSecret, err := s.CreateToken(ctx, bob.ID, "", true)
	if err != nil || !adm.Admin {
		t.Fatal(err)
	}
	if got := must[store.Token](t)(s.CheckToken(ctx, secret)); got != tok {
		t.Fatalf("CheckToken: %+v, want %+v", got, tok)
	}
	if got := must[store.Token](t)(s.CheckToken(ctx, admSecret)); !got.Admin || got.UserID != bob.ID {
		t.Fatalf("admin CheckToken: %+v", got)
	}
	for _, bad := range []string{"", secret + "x", secret[:len(secret)-1], strings.Repeat("x", 10000)} {
		_, err := s.CheckToken(ctx, bad)
		wantErr(t, err, store.ErrNotFound, "CheckToken of a wrong secret")
	}
	_, _, err = s.CreateToken(ctx, "nobody", "x", false)
	wantErr(t, err, store.ErrNotFound, "token of a missing user")
	_, _, err = s.CreateToken(ctx, a.ID, strings.Repeat("l", 65), false)
	wantErr(t, err, store.ErrBadLabel, "long label")
	_, _, err = s.CreateToken(ctx, a.ID, "a\nb", false)
	wantErr(t, err, store.ErrBadLabel, "label with a newline")
	if ts := must[[]store.Token](t)(s.Tokens(ctx, a.ID)); len(ts) != 1 || ts[0] != tok {
		t.Fatalf("Tokens(alice): %+v", ts)
	}
	if ts := must[[]store.Token](t)(s.Tokens(ctx, "")); len(ts) != 2 {
		t.Fatalf("Tokens(all): %+v", ts)
	}
	must[struct{}](t)(struct{}{}, s.RevokeToken(ctx, tok.ID))
	_, err = s.CheckToken(ctx, secret)
	wantErr(t, err, store.ErrNotFound, "revoked token")
	wantErr(t, s.RevokeToken(ctx, tok.ID), store.ErrNotFound, "second revoke")
}

func testTokensOnlyHashed(t *testing.T, b Backend) {
	url := b.NewDB(t)
	s := Open(t, url)
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	_, secret, err := s.CreateToken(ctx, a.ID, "agent", false)
	if err != nil {
		t.Fatal(err)
	}
	dump := b.Dump(t, url)
	if !bytes.Contains(dump, []byte("agent")) {
		t.Fatal("the dump does not even hold the token's label: it shows nothing")
	}
	if bytes.Contains(dump, []byte(secret)) || bytes.Contains(dump, []byte(secret[len(secret)-20:])) {
		t.Fatal("the token's secret is stored")
	}
}

func testDevices(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	key := key(t)
	d := must[store.Device](t)(s.AddDevice(ctx, a.ID, "Chrome on laptop", "chrome-extension://abc", key))
	if d.UserID != a.ID || !bytes.Equal(d.PublicKey, key) || d.ID == "" || strings.Trim(d.ID, "0123456789abcdef") != "" {
		t.Fatalf("AddDevice: %+v (an ID must be lowercase hex)", d)
	}
	if got := must[store.Device](t)(s.Device(ctx, d.ID)); got.Name != d.Name || !bytes.Equal(got.PublicKey, key) {
		t.Fatalf("Device: %+v", got)
	}
	if got := must[store.Device](t)(s.UserDevice(ctx, a.ID, d.ID)); got.ID != d.ID {
		t.Fatalf("UserDevice: %+v", got)
	}
	later := d.LastSeen.Add(time.Hour)
	must[struct{}](t)(struct{}{}, s.TouchDevice(ctx, d.ID, later))
	must[struct{}](t)(struct{}{}, s.TouchDevice(ctx, d.ID, d.LastSeen)) // never goes back
	if got := must[store.Device](t)(s.Device(ctx, d.ID)); !got.LastSeen.Equal(later) {
		t.Fatalf("LastSeen %v, want %v", got.LastSeen, later)
	}
	wantErr(t, s.TouchDevice(ctx, "nope", later), store.ErrNotFound, "touch missing")
	_, err := s.AddDevice(ctx, a.ID, "x", "o", []byte{4, 1, 2})
	wantErr(t, err, store.ErrBadKey, "bad key")
	_, err = s.AddDevice(ctx, a.ID, "", "o", key)
	wantErr(t, err, store.ErrBadLabel, "empty name")
	_, err = s.AddDevice(ctx, "nobody", "x", "o", key)
	wantErr(t, err, store.ErrNotFound, "device of a missing user")
	if ds := must[[]store.Device](t)(s.Devices(ctx, a.ID)); len(ds) != 1 {
		t.Fatalf("Devices: %+v", ds)
	}
	must[struct{}](t)(struct{}{}, s.RevokeDevice(ctx, d.ID))
	_, err = s.Device(ctx, d.ID)
	wantErr(t, err, store.ErrNotFound, "revoked device")
	wantErr(t, s.RevokeDevice(ctx, d.ID), store.ErrNotFound, "second revoke")
}

// SECURITY I-88: every per-user method reads another user's device as missing.
func testOtherUsersDevice(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	v := must[store.User](t)(s.CreateUser(ctx, "victor"))
	vd := must[store.Device](t)(s.AddDevice(ctx, v.ID, "victor's", "o", key(t)))
	_, errOther := s.UserDevice(ctx, a.ID, vd.ID)
	_, errMissing := s.UserDevice(ctx, a.ID, "0123456789abcdef0123456789abcdef")
	wantErr(t, errOther, store.ErrNotFound, "another user's device")
	if errOther.Error() != errMissing.Error() {
		t.Fatalf("another user's device reads %q, a missing one %q", errOther, errMissing)
	}
	wantErr(t, s.RevokeUserDevice(ctx, a.ID, vd.ID), store.ErrNotFound, "revoking another user's device")
	if ds := must[[]store.Device](t)(s.Devices(ctx, a.ID)); len(ds) != 0 {
		t.Fatalf("alice lists %+v", ds)
	}
	if _, err := s.Device(ctx, vd.ID); err != nil {
		t.Fatalf("victor's device is gone after alice's attempts: %v", err)
	}
	must[struct{}](t)(struct{}{}, s.RevokeUserDevice(ctx, v.ID, vd.ID))
}
