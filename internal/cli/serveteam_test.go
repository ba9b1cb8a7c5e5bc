package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torii-browser/torii/internal/config"
)

// `serve --team` names where browsers and agents connect (team.publicURL),
// or says to set it.
func TestTeamAddressesAtStart(t *testing.T) {
	t.Parallel()
	got := teamAddresses(config.Team{PublicURL: "https://torii.example.com"})
	for _, w := range []string{"browsers connect to wss://torii.example.com/acp", "--server https://torii.example.com", "agents connect to https://torii.example.com/mcp"} {
		if !strings.Contains(got, w) {
			t.Errorf("start lines lack %q:\n%s", w, got)
		}
	}
	if got := teamAddresses(config.Team{}); !strings.Contains(got, "team.publicURL is not set") || !strings.Contains(got, `"publicURL": "https://`) {
		t.Errorf("without publicURL: %s", got)
	}
}

// A bad team.publicURL stops `serve --team` before it opens anything, with
// the value that would work.
func TestServeTeamRefusesABadPublicURL(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ pub, fix string }{
		{"http://gw.example:8443", `fix: "publicURL": "https://gw.example:8443"`},
		{"ws://gw.example/acp", `fix: "publicURL": "https://gw.example"`},
	} {
		cfg := `{"listen":"127.0.0.1:0","team":{"store":"sqlite:` + filepath.Join(e.state, "team.db") + `","bus":"nats://127.0.0.1:1","publicURL":"` + c.pub + `"}}`
		if err := os.WriteFile(filepath.Join(e.config, "config.json"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		r := e.run("", "serve", "--team")
		if r.code == 0 || !strings.Contains(r.stderr, c.fix) || !strings.Contains(r.stderr, "team.publicURL") {
			t.Errorf("%s: exit %d: %s", c.pub, r.code, r.stderr)
		}
		if _, err := os.Stat(filepath.Join(e.state, "team.db")); err == nil {
			t.Errorf("%s: the store was opened before the config was checked", c.pub)
		}
	}
}
