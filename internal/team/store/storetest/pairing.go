package storetest

import (
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/team/store"
)

func request(t *testing.T) store.PairRequest {
	return store.PairRequest{DeviceName: "Chrome", Origin: "chrome-extension://abc", DeviceKey: key(t)}
}

// DeleteUser takes the user's tokens, devices, secrets and policy with it.
func testDeleteUser(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	keep := must[store.User](t)(s.CreateUser(ctx, "bob"))
	_, secret, _ := s.CreateToken(ctx, a.ID, "", false)
	_, keepSecret, _ := s.CreateToken(ctx, keep.ID, "", false)
	d := must[store.Device](t)(s.AddDevice(ctx, a.ID, "x", "o", key(t)))
	otp := must[string](t)(s.CreateOTP(ctx, a.ID, time.Minute))
	must[struct{}](t)(struct{}{}, s.SetPolicy(ctx, a.ID, []byte(`{}`)))
	must[struct{}](t)(struct{}{}, s.DeleteUser(ctx, a.ID))
	_, err := s.CheckToken(ctx, secret)
	wantErr(t, err, store.ErrNotFound, "deleted user's token")
	_, err = s.Device(ctx, d.ID)
	wantErr(t, err, store.ErrNotFound, "deleted user's device")
	_, err = s.ConsumeOTP(ctx, otp)
	wantErr(t, err, store.ErrNotFound, "deleted user's OTP")
	_, err = s.Policy(ctx, a.ID)
	wantErr(t, err, store.ErrNotFound, "deleted user's policy")
	_, err = s.User(ctx, a.ID)
	wantErr(t, err, store.ErrNotFound, "deleted user")
	if _, err := s.CheckToken(ctx, keepSecret); err != nil {
		t.Fatalf("another user's token went too: %v", err)
	}
}

func testPairing(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	r := must[store.PairRequest](t)(s.CreatePairRequest(ctx, request(t), time.Minute))
	if r.ID == "" || len(r.Code) != 6 || r.State != store.PairPending || !r.ExpiresAt.After(r.CreatedAt) {
		t.Fatalf("CreatePairRequest: %+v", r)
	}
	bad := request(t)
	bad.DeviceKey = []byte("short")
	_, err := s.CreatePairRequest(ctx, bad, time.Minute)
	wantErr(t, err, store.ErrBadKey, "bad key")
	bad = request(t)
	bad.Code = "12a456"
	_, err = s.CreatePairRequest(ctx, bad, time.Minute)
	if err == nil {
		t.Fatal("a code that is not 6 digits was accepted")
	}
	if ps := must[[]store.PairRequest](t)(s.PendingPairRequests(ctx)); len(ps) != 1 || ps[0].ID != r.ID {
		t.Fatalf("pending: %+v", ps)
	}
	wrong := "000000"
	if r.Code == wrong {
		wrong = "111111"
	}
	_, err = s.DecidePair(ctx, r.ID, wrong, a.ID, true)
	wantErr(t, err, store.ErrWrongCode, "wrong code")
	_, err = s.DecidePair(ctx, "nope", r.Code, a.ID, true)
	wantErr(t, err, store.ErrNotFound, "missing request")
	_, err = s.DecidePair(ctx, r.ID, r.Code, "nobody", true)
	wantErr(t, err, store.ErrNotFound, "approval for a missing user")
	got := must[store.PairRequest](t)(s.DecidePair(ctx, r.ID, r.Code, a.ID, true))
	if got.State != store.PairApproved || got.UserID != a.ID || got.DeviceID == "" {
		t.Fatalf("approved: %+v", got)
	}
	d := must[store.Device](t)(s.UserDevice(ctx, a.ID, got.DeviceID))
	if string(d.PublicKey) != string(r.DeviceKey) || d.Name != "Chrome" {
		t.Fatalf("the approval's device: %+v", d)
	}
	if again := must[store.PairRequest](t)(s.PairRequest(ctx, r.ID)); again.State != store.PairApproved || again.DeviceID != d.ID {
		t.Fatalf("PairRequest after approval: %+v", again)
	}
	_, err = s.DecidePair(ctx, r.ID, r.Code, a.ID, true)
	wantErr(t, err, store.ErrDecided, "second approval")
	if ps := must[[]store.PairRequest](t)(s.PendingPairRequests(ctx)); len(ps) != 0 {
		t.Fatalf("pending after approval: %+v", ps)
	}
	denied := must[store.PairRequest](t)(s.CreatePairRequest(ctx, request(t), time.Minute))
	if got := must[store.PairRequest](t)(s.DecidePair(ctx, denied.ID, "", a.ID, false)); got.State != store.PairDenied || got.DeviceID != "" {
		t.Fatalf("denied: %+v", got)
	}
	if ds := must[[]store.Device](t)(s.Devices(ctx, "")); len(ds) != 1 {
		t.Fatalf("a denial added a device: %+v", ds)
	}
}

// SECURITY I-89: expiry is the database's: a request created expired
// cannot be decided, whatever a replica's clock says.
func testPairingExpiry(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	for _, ttl := range []time.Duration{0, -time.Hour, time.Microsecond} {
		r := must[store.PairRequest](t)(s.CreatePairRequest(ctx, request(t), ttl))
		_, err := s.DecidePair(ctx, r.ID, r.Code, a.ID, true)
		wantErr(t, err, store.ErrDecided, "expired request")
		if ps := must[[]store.PairRequest](t)(s.PendingPairRequests(ctx)); len(ps) != 0 {
			t.Fatalf("expired request listed as pending: %+v", ps)
		}
	}
}

// Two replicas decide one request at once: exactly one wins.
func testDecideOnceAcross(t *testing.T, b Backend) {
	url := b.NewDB(t)
	s1, s2 := Open(t, url), Open(t, url)
	a := must[store.User](t)(s1.CreateUser(ctx, "alice"))
	for range 5 {
		r := must[store.PairRequest](t)(s1.CreatePairRequest(ctx, request(t), time.Minute))
		var wg sync.WaitGroup
		errs := make([]error, 2)
		for i, s := range []store.Store{s1, s2} {
			wg.Go(func() { _, errs[i] = s.DecidePair(ctx, r.ID, r.Code, a.ID, i == 0) })
		}
		wg.Wait()
		won, lost := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case errors.Is(err, store.ErrDecided):
				lost++
			default:
				t.Fatal(err)
			}
		}
		if won != 1 || lost != 1 {
			t.Fatalf("%d won, %d got ErrDecided: %v", won, lost, errs)
		}
	}
}

func testOTPs(t *testing.T, b Backend) {
	url := b.NewDB(t)
	s, s2 := Open(t, url), Open(t, url)
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	secret := must[string](t)(s.CreateOTP(ctx, a.ID, time.Minute))
	expired := must[string](t)(s.CreateOTP(ctx, a.ID, 0))
	_, err := s.CreateOTP(ctx, "nobody", time.Minute)
	wantErr(t, err, store.ErrNotFound, "OTP for a missing user")
	live := must[[]store.OTP](t)(s2.OTPs(ctx))
	if len(live) != 1 || live[0].Secret != secret || live[0].UserID != a.ID || live[0].ExpiresAt.IsZero() {
		t.Fatalf("OTPs: %+v", live)
	}
	_, err = s.ConsumeOTP(ctx, expired)
	wantErr(t, err, store.ErrNotFound, "expired OTP")
	if u := must[string](t)(s2.ConsumeOTP(ctx, secret)); u != a.ID {
		t.Fatalf("ConsumeOTP: %q", u)
	}
	_, err = s.ConsumeOTP(ctx, secret)
	wantErr(t, err, store.ErrNotFound, "OTP used twice (on another replica)")
	if live := must[[]store.OTP](t)(s.OTPs(ctx)); len(live) != 0 {
		t.Fatalf("OTPs after use: %+v", live)
	}
	// A user asking for secrets in a loop keeps only the newest few live.
	var last string
	for range 40 {
		last = must[string](t)(s.CreateOTP(ctx, a.ID, time.Minute))
	}
	live = must[[]store.OTP](t)(s.OTPs(ctx))
	if len(live) == 0 || len(live) > 16 {
		t.Fatalf("%d live OTPs after 40, want at most 16", len(live))
	}
	if u := must[string](t)(s.ConsumeOTP(ctx, last)); u != a.ID {
		t.Fatalf("the newest OTP: %q", u)
	}
}

func testPolicy(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	if p := must[json.RawMessage](t)(s.Policy(ctx, a.ID)); p != nil {
		t.Fatalf("policy before any: %s", p)
	}
	doc := []byte(`{"allow": ["example.com"], "n": 1}`)
	must[struct{}](t)(struct{}{}, s.SetPolicy(ctx, a.ID, doc))
	if p := must[json.RawMessage](t)(s.Policy(ctx, a.ID)); string(p) != string(doc) {
		t.Fatalf("policy %s, want %s", p, doc)
	}
	must[struct{}](t)(struct{}{}, s.SetPolicy(ctx, a.ID, []byte(`{}`)))
	if p := must[json.RawMessage](t)(s.Policy(ctx, a.ID)); string(p) != `{}` {
		t.Fatalf("policy %s after replacing", p)
	}
	if err := s.SetPolicy(ctx, a.ID, []byte(`{`)); err == nil {
		t.Fatal("invalid JSON accepted")
	}
	wantErr(t, s.SetPolicy(ctx, "nobody", []byte(`{}`)), store.ErrNotFound, "policy of a missing user")
	must[struct{}](t)(struct{}{}, s.SetPolicy(ctx, a.ID, nil))
	if p := must[json.RawMessage](t)(s.Policy(ctx, a.ID)); p != nil {
		t.Fatalf("policy after removing: %s", p)
	}
}
