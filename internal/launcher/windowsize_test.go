package launcher

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestParseWindowSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want WindowSize
	}{
		{"1280,720", WindowSize{1280, 720}},
		{"1600,900", WindowSize{1600, 900}},
		{" 200 , 200 ", WindowSize{200, 200}},
		{"7680,4320", WindowSize{7680, 4320}},
	} {
		got, err := ParseWindowSize(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseWindowSize(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseWindowSizeErrors(t *testing.T) {
	for _, c := range []struct {
		in, msg, hint string
	}{
		{"", "empty", "give WIDTH,HEIGHT in pixels, e.g. --window-size 1280,720"},
		{"1280x720", "not WIDTH,HEIGHT", "did you mean --window-size 1280,720?"},
		{"1280X720", "not WIDTH,HEIGHT", "did you mean --window-size 1280,720?"},
		{"1280×720", "not WIDTH,HEIGHT", "did you mean --window-size 1280,720?"},
		{"1280 720", "not WIDTH,HEIGHT", "did you mean --window-size 1280,720?"},
		{"1280", "not WIDTH,HEIGHT", "two whole numbers separated by a comma"},
		{"1280,720,2", "not WIDTH,HEIGHT", "two whole numbers separated by a comma"},
		{"1280,", `the height "" is not a whole number`, "two whole numbers"},
		{"wide,720", `the width "wide" is not a whole number`, "two whole numbers"},
		{"-1280,720", `the width "-1280" is not a whole number`, "two whole numbers"},
		{"1280.5,720", `the width "1280.5" is not a whole number`, "two whole numbers"},
		{"199,720", "the width 199 is outside 200..7680", "give a width from 200 to 7680"},
		{"7681,720", "the width 7681 is outside 200..7680", "give a width from 200 to 7680"},
		{"1280,199", "the height 199 is outside 200..4320", "give a height from 200 to 4320"},
		{"1280,4321", "the height 4321 is outside 200..4320", "give a height from 200 to 4320"},
		{"99999999,1", `the width "99999999" is not a whole number`, "two whole numbers"},
	} {
		_, err := ParseWindowSize(c.in)
		var we *WindowSizeError
		if !errors.As(err, &we) {
			t.Errorf("ParseWindowSize(%q): %v, want a *WindowSizeError", c.in, err)
			continue
		}
		if we.Value != c.in || !strings.Contains(we.Msg, c.msg) || !strings.Contains(we.Hint, c.hint) {
			t.Errorf("ParseWindowSize(%q) = %q / %q; want %q / %q", c.in, we.Msg, we.Hint, c.msg, c.hint)
		}
		if !strings.Contains(err.Error(), "--window-size") || !strings.Contains(err.Error(), "fix: ") {
			t.Errorf("ParseWindowSize(%q): %q names neither the flag nor the fix", c.in, err)
		}
	}
}

func TestArgsWindowSize(t *testing.T) {
	o := Options{Profile: "/p", ExtensionDir: "/e", WindowSize: &WindowSize{1600, 900}}
	if a := Args(o); !slices.Contains(a, "--window-size=1600,900") || slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--screen-info") }) {
		t.Errorf("headed: %v", a)
	}
	o.Headless = true
	if a := Args(o); !slices.Contains(a, "--window-size=1600,900") || !slices.Contains(a, "--screen-info={1600x900}") {
		t.Errorf("headless: %v", a)
	}
	o.WindowSize = nil
	if a := Args(o); slices.ContainsFunc(a, func(s string) bool { return strings.HasPrefix(s, "--window-size") }) {
		t.Errorf("no size: %v", a)
	}
}
