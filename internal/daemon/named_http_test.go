package daemon_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/mcpserver"
)

var sessionIDIn = regexp.MustCompile(`\(cli, (s-[0-9a-f-]+)\)`)

// SECURITY I-82: /mcp sessions that send the same Torii-Session with the
// same token are one named session; another token's same name is another.
func TestToriiSessionHeaderIsPerToken(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	d.Extension(t, ctx, browserProvider("A"), genA())
	tokA, tokB := d.Token(t, "a"), d.Token(t, "b")
	named := http.Header{mcpserver.SessionHeader: {"inspector"}}
	idOf := func(token string) string {
		t.Helper()
		s, err := d.MCPAt(t, ctx, d.MCPURL, token, named, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		m := sessionIDIn.FindStringSubmatch(allText(call(t, ctx, s, "status")))
		if m == nil {
			t.Fatalf("status names no named session: %q", allText(call(t, ctx, s, "status")))
		}
		return m[1]
	}
	first, second := idOf(tokA), idOf(tokA)
	if first != second {
		t.Fatalf("two /mcp sessions naming the same session got %s and %s", first, second)
	}
	if other := idOf(tokB); other == first {
		t.Fatal("another token reached the first token's named session")
	}
}
