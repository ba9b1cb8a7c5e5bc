package admin_test

import (
	"net/http/httptest"
	"testing"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/team/admin"
)

// The answers a person acts on next (a new token, a launch secret, whoami)
// name the gateway's public addresses when team.publicURL is set, and
// carry no "gateway" when it is not.
func TestAnswersNameThePublicAddress(t *testing.T) {
	t.Parallel()
	pub := config.TeamURLs{URL: "https://torii.example.com", ACP: "wss://torii.example.com/acp", MCP: "https://torii.example.com/mcp"}
	with := newEnv(t)
	with.api = admin.New(with.st, with.ev, []byte(bootstrap), admin.Options{Public: pub})
	with.srv = httptest.NewServer(with.api.Handler())
	t.Cleanup(with.srv.Close)
	without := newEnv(t)

	type answer struct {
		Gateway *config.TeamURLs
	}
	for _, c := range []struct {
		name string
		e    *env
		want *config.TeamURLs
	}{{"with publicURL", with, &pub}, {"without", without, nil}} {
		_, secret := c.e.userWithToken("alice", false)
		answers := map[string]answer{
			"token":  decodeInto[answer](t, c.e.must(c.e.do("POST", "/admin/tokens", bootstrap, map[string]any{"user": "alice", "label": "x"}), 201).body),
			"otp":    decodeInto[answer](t, c.e.must(c.e.do("POST", "/v1/otp", secret, nil), 201).body),
			"whoami": decodeInto[answer](t, c.e.must(c.e.do("GET", "/v1/whoami", secret, nil), 200).body),
		}
		for what, a := range answers {
			if (a.Gateway == nil) != (c.want == nil) || (a.Gateway != nil && *a.Gateway != *c.want) {
				t.Errorf("%s: %s answers gateway %+v, want %+v", c.name, what, a.Gateway, c.want)
			}
		}
	}
}
