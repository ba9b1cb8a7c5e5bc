package doctor

import (
	"context"
	"fmt"
	"strings"
)

// checkBrowsers says which paired browsers are connected right now and
// which serve the browser tools (and to how many sessions): a browser whose
// link is up but whose tool server is not would fail every call.
func checkBrowsers(_ context.Context, e *Env) Result {
	const name = "browsers"
	if !e.daemonUp() {
		return skipped(name, e)
	}
	var serving, stuck []string
	for _, b := range e.Status.Browsers {
		switch {
		case b.Serving:
			var labels []string
			for _, x := range b.Sessions {
				labels = append(labels, fmt.Sprintf("%q", x.Label))
			}
			d := fmt.Sprintf("%q (%d session(s)", b.Name, len(b.Sessions))
			if len(labels) > 0 {
				d += ": " + strings.Join(labels, ", ")
			}
			if b.Default {
				d += ", default for new sessions"
			}
			serving = append(serving, d+")")
		case b.Connected:
			stuck = append(stuck, fmt.Sprintf("%q", b.Name))
		}
	}
	if len(stuck) > 0 {
		return Result{Name: name, Status: Warn, Detail: "connected but not serving tools: " + strings.Join(stuck, ", "),
			Fix: "reload the Torii extension in that browser (chrome://extensions), or close and reopen the browser"}
	}
	if len(serving) == 0 && !e.Status.ExtensionConnected {
		return Result{Name: name, Status: Warn, Detail: "skipped: no browser is connected (see extension link)"}
	}
	if len(serving) == 0 {
		return Result{Name: name, Status: Fail, Detail: "no browser serves the browser tools right now",
			Fix: "torii launch   (or open the Torii popup in a paired browser)"}
	}
	return Result{Name: name, Status: OK, Detail: "serving tools: " + strings.Join(serving, ", ")}
}
