package doctor

import (
	"context"
	"strings"
	"testing"
)

// The browsers check says which browsers serve tools now, and fails when a
// browser is linked but none serves (the state in which every call fails).
func TestCheckBrowsers(t *testing.T) {
	e := &Env{Status: &DaemonStatus{ExtensionConnected: true, Browsers: []BrowserStatus{
		{Name: "Chromium (profile work) on host", Connected: true, Serving: true, Default: true},
		{Name: "Chrome on Linux", Connected: false},
	}}}
	e.Status.Browsers[0].Sessions = append(e.Status.Browsers[0].Sessions, struct {
		Label string `json:"label"`
	}{Label: "proj"})
	r := checkBrowsers(context.Background(), e)
	if r.Status != OK || !strings.Contains(r.Detail, `"Chromium (profile work) on host" (1 session(s): "proj", default for new sessions)`) || strings.Contains(r.Detail, "Chrome on Linux") {
		t.Fatalf("one serving: %+v", r)
	}
	e.Status.Browsers = []BrowserStatus{{Name: "A", Connected: true}}
	if r := checkBrowsers(context.Background(), e); r.Status != Warn || !strings.Contains(r.Detail, `not serving tools: "A"`) || r.Fix == "" {
		t.Fatalf("linked but not serving: %+v", r)
	}
	e.Status.Browsers = nil
	if r := checkBrowsers(context.Background(), e); r.Status != Fail || r.Fix == "" {
		t.Fatalf("connected, nothing serves: %+v", r)
	}
	e.Status.ExtensionConnected = false
	if r := checkBrowsers(context.Background(), e); r.Status != Warn || !strings.Contains(r.Detail, "skipped") {
		t.Fatalf("nothing connected (extension link already fails): %+v", r)
	}
}
