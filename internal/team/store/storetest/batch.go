package storetest

import (
	"slices"
	"testing"

	"github.com/torii-browser/torii/internal/team/store"
)

// LiveTokens and UsersDevices, what a replica re-confirms its remembered
// checks with: a revoked token, a revoked device and a deleted user's
// tokens and devices are gone from the answers, and only the users asked
// about are listed.
func testBatchReads(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	a := must[store.User](t)(s.CreateUser(ctx, "alice"))
	v := must[store.User](t)(s.CreateUser(ctx, "victor"))
	w := must[store.User](t)(s.CreateUser(ctx, "wendy"))
	ta, _, _ := s.CreateToken(ctx, a.ID, "a", false)
	ta2, _, _ := s.CreateToken(ctx, a.ID, "a2", false)
	tv, _, _ := s.CreateToken(ctx, v.ID, "v", false)
	da := must[store.Device](t)(s.AddDevice(ctx, a.ID, "one", "o", key(t)))
	da2 := must[store.Device](t)(s.AddDevice(ctx, a.ID, "two", "o", key(t)))
	dv := must[store.Device](t)(s.AddDevice(ctx, v.ID, "v", "o", key(t)))
	must[store.Device](t)(s.AddDevice(ctx, w.ID, "w", "o", key(t)))

	if got := must[[]string](t)(s.LiveTokens(ctx, nil)); len(got) != 0 {
		t.Fatalf("LiveTokens(none): %q", got)
	}
	must[struct{}](t)(struct{}{}, s.RevokeToken(ctx, ta2.ID))
	got := must[[]string](t)(s.LiveTokens(ctx, []string{ta.ID, ta2.ID, tv.ID, "nope"}))
	slices.Sort(got)
	want := []string{ta.ID, tv.ID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("LiveTokens: %q, want %q", got, want)
	}

	ids := func(ds []store.Device) []string {
		var out []string
		for _, d := range ds {
			out = append(out, d.ID)
		}
		slices.Sort(out) // devices made in the same millisecond have no order
		return out
	}
	want = []string{da.ID, da2.ID, dv.ID}
	slices.Sort(want)
	if got := ids(must[[]store.Device](t)(s.UsersDevices(ctx, []string{a.ID, v.ID}))); !slices.Equal(got, want) {
		t.Fatalf("UsersDevices: %q, want alice's two and victor's", got)
	}
	must[struct{}](t)(struct{}{}, s.RevokeDevice(ctx, da.ID))
	must[struct{}](t)(struct{}{}, s.DeleteUser(ctx, v.ID))
	if got := ids(must[[]store.Device](t)(s.UsersDevices(ctx, []string{a.ID, v.ID}))); !slices.Equal(got, []string{da2.ID}) {
		t.Fatalf("UsersDevices after a revoke and a user deleted: %q", got)
	}
	if got := must[[]string](t)(s.LiveTokens(ctx, []string{tv.ID})); len(got) != 0 {
		t.Fatalf("a deleted user's token is live: %q", got)
	}
}
