package admin_test

import (
	"testing"

	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

func TestPairByCodeAsOwnUserAndReplayOnAnotherReplica(t *testing.T) {
	t.Parallel()
	st := openStore(t)
	e1, e2 := newEnvOn(t, st), newEnvOn(t, st) // two replicas, one database
	alice, tok := e1.userWithToken("alice", false)
	p := e1.pending("123456")
	code := p.Code[:3] + " " + p.Code[3:]
	r := e1.must(e1.do("POST", "/v1/pair", tok, map[string]any{"code": code}), 200)
	got := decodeInto[struct{ Pairing store.PairRequest }](t, r.body)
	if got.Pairing.State != store.PairApproved || got.Pairing.UserID != alice.ID || got.Pairing.DeviceID == "" {
		t.Fatalf("%+v", got)
	}
	if !e1.ev.has(bus.EventPairDecided, p.ID) {
		t.Fatal("no pair.decided event")
	}
	ds := decodeInto[struct{ Devices []store.Device }](t, e1.must(e1.do("GET", "/v1/devices", tok, nil), 200).body)
	if len(ds.Devices) != 1 || ds.Devices[0].ID != got.Pairing.DeviceID {
		t.Fatalf("%+v", ds)
	}
	// The same code on another replica finds nothing pending.
	r = e2.must(e2.do("POST", "/v1/pair", tok, map[string]any{"code": p.Code}), 404)
	if r.errCode() != "no_pending_pairing" {
		t.Fatalf("%s", r.body)
	}
}

func TestWrongPairingCodesAreRateLimitedPerToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, tok := e.userWithToken("alice", false)
	_, other := e.userWithToken("bob", false)
	p := e.pending("123456")
	wrong := "000000"
	if p.Code == wrong {
		wrong = "000001"
	}
	for i := 0; i < 5; i++ {
		e.must(e.do("POST", "/v1/pair", tok, map[string]any{"code": wrong}), 404)
	}
	// Even the right code is refused now: guessing stops here.
	r := e.must(e.do("POST", "/v1/pair", tok, map[string]any{"code": p.Code}), 429)
	if r.header.Get("Retry-After") == "" || r.errCode() != "rate_limited" {
		t.Fatalf("%v %s", r.header, r.body)
	}
	// The limit is per token: another token is unaffected.
	e.must(e.do("POST", "/v1/pair", other, map[string]any{"code": p.Code}), 200)
	e.must(e.do("POST", "/v1/pair", other, map[string]any{"code": "12345"}), 400)
}

func TestAdminApprovesAndDeniesPairings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice, _ := e.userWithToken("alice", false)
	p1, p2 := e.pending("111111"), e.pending("222222")
	list := decodeInto[struct{ Pairings []store.PairRequest }](t, e.must(e.do("GET", "/admin/pairings", bootstrap, nil), 200).body)
	if len(list.Pairings) != 2 || list.Pairings[0].Code == "" {
		t.Fatalf("%+v", list)
	}
	wrong := "999999"
	r := e.must(e.do("POST", "/admin/pairings/"+p1.ID+"/approve", bootstrap, map[string]any{"user": "alice", "code": wrong}), 400)
	if r.errCode() != "wrong_code" {
		t.Fatalf("%s", r.body)
	}
	e.must(e.do("POST", "/admin/pairings/"+p1.ID+"/approve", bootstrap, map[string]any{"user": "nobody", "code": p1.Code}), 404)
	got := decodeInto[struct{ Pairing store.PairRequest }](t, e.must(e.do("POST", "/admin/pairings/"+p1.ID+"/approve", bootstrap,
		map[string]any{"user": "alice", "code": p1.Code}), 200).body)
	if got.Pairing.UserID != alice.ID || got.Pairing.DeviceID == "" {
		t.Fatalf("%+v", got)
	}
	r = e.must(e.do("POST", "/admin/pairings/"+p1.ID+"/approve", bootstrap, map[string]any{"user": "alice", "code": p1.Code}), 409)
	if r.errCode() != "already_decided" {
		t.Fatalf("%s", r.body)
	}
	got = decodeInto[struct{ Pairing store.PairRequest }](t, e.must(e.do("POST", "/admin/pairings/"+p2.ID+"/deny", bootstrap, nil), 200).body)
	if got.Pairing.State != store.PairDenied || !e.ev.has(bus.EventPairDecided, p2.ID) {
		t.Fatalf("%+v", got)
	}
	e.must(e.do("POST", "/admin/pairings/nope/deny", bootstrap, nil), 404)

	devs := decodeInto[struct{ Devices []store.Device }](t, e.must(e.do("GET", "/admin/devices?user=alice", bootstrap, nil), 200).body)
	if len(devs.Devices) != 1 {
		t.Fatalf("%+v", devs)
	}
	e.must(e.do("DELETE", "/admin/devices/"+devs.Devices[0].ID, bootstrap, nil), 200)
	if !e.ev.has(bus.EventDeviceRevoked, devs.Devices[0].ID) {
		t.Fatal("no device.revoked event")
	}
	e.must(e.do("DELETE", "/admin/devices/"+devs.Devices[0].ID, bootstrap, nil), 404)
}
