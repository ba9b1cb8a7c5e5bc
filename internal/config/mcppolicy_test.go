package config

import (
	"strings"
	"testing"
)

// SECURITY I-64: a pin names a tool of its own server, bare or prefixed;
// it never reaches another server's tools or a different tool.
func TestPinMatches(t *testing.T) {
	for _, tc := range []struct {
		server, pin, tool string
		want              bool
	}{
		{"katashiro", "snapshot", "katashiro.snapshot", true},
		{"katashiro", "katashiro.snapshot", "katashiro.snapshot", true},
		{"katashiro", "snapshot", "snapshot", true},
		{"katashiro", "katashiro.snapshot", "snapshot", true},
		{"katashiro", "snap", "katashiro.snapshot", false},
		{"katashiro", "other.snapshot", "other.snapshot", true}, // its own tool, whatever its name
		{"katashiro", "snapshot", "other.snapshot", false},
		{"kata", "snapshot", "katashiro.snapshot", false},
		{"katashiro", "", "katashiro.", false},
	} {
		if got := PinMatches(tc.server, tc.pin, tc.tool); got != tc.want {
			t.Errorf("PinMatches(%q, %q, %q) = %v", tc.server, tc.pin, tc.tool, got)
		}
	}
	p := MCPServerPolicy{Allow: []string{"katashiro", "bare"}, Pins: map[string][]string{"katashiro": {"snapshot"}, "ghost": {"x"}}}
	if p.PinFor("bare", "bare.snapshot") != "" || p.PinFor("katashiro", "katashiro.snapshot") != "snapshot" {
		t.Fatal("PinFor looked outside the server's own pins")
	}
	w := strings.Join(p.Warnings(), "\n")
	if !strings.Contains(w, `pins for "ghost"`) || !strings.Contains(w, `"bare" is allowed but has no pins`) || strings.Contains(w, `"katashiro"`) {
		t.Fatalf("warnings:\n%s", w)
	}
}
