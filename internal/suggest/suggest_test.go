package suggest

import (
	"strings"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"headles", "headless", 1}, {"kitten", "sitting", 3}, {"héadless", "headless", 1}} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestClose(t *testing.T) {
	names := []string{"click", "mouse_click", "navigate", "snapshot", "screenshot", "type", "headless", "toolGroups"}
	for in, want := range map[string]string{
		"clik":      "click",
		"mouse":     "mouse_click",
		"snapshto":  "snapshot",
		"navigat":   "navigate",
		"headles":   "headless",
		"HEADLESS":  "headless",
		"toolGroup": "toolGroups",
		"zzz":       "",
		"":          "",
	} {
		if got := strings.Join(Close(in, names), ","); got != want {
			t.Errorf("Close(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Closest("scren", names); got != "" && got != "screenshot" {
		t.Errorf("Closest(scren) = %q", got)
	}
	if got := Closest("nothing-like-it", names); got != "" {
		t.Errorf("Closest(far) = %q, want none", got)
	}
}
