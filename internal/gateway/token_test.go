package gateway

import "testing"

// Revocation is token specific, so an old process's cleanup never revokes
// the token minted for its replacement.
func TestRevokeIsTokenSpecific(t *testing.T) {
	t.Parallel()
	g := New(Options{})
	s := &Session{ID: "s1"}
	old, oldHash := g.mint(s)
	cur, _ := g.mint(s)
	g.revoke(oldHash) // the old process's late cleanup
	if _, ok := g.CheckToken(old); ok {
		t.Fatal("the old token still works")
	}
	if id, ok := g.CheckToken(cur); !ok || id != "s1" {
		t.Fatal("revoking the old token revoked the new one")
	}
	if _, ok := g.CheckToken("torii_s_guess"); ok {
		t.Fatal("an unknown token passed")
	}
}
