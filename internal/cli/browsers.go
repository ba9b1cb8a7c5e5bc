package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/pairing"
)

// browserStatus is one entry of the daemon's status `browsers`.
type browserStatus struct {
	DeviceID  string   `json:"deviceId"`
	Name      string   `json:"name"`
	Connected bool     `json:"connected"`
	Serving   bool     `json:"serving"`
	LastUsed  flexTime `json:"lastUsed"`
	Default   bool     `json:"default"`
	Sessions  []struct {
		ID      string `json:"id"`
		Label   string `json:"label"`
		Kind    string `json:"kind"`
		Binding string `json:"binding"`
	} `json:"sessions"`
}

// printBrowsers shows which paired browsers are connected right now,
// which serve the tools, and the sessions acting in each.
func printBrowsers(w io.Writer, bs []browserStatus) {
	n := 0
	for _, b := range bs {
		if b.Serving {
			n++
		}
	}
	switch {
	case len(bs) == 0:
		fmt.Fprintln(w, "browsers:    none paired — run `torii launch`, or press Pair in the Torii popup and run `torii pair`")
		return
	case n == 0:
		fmt.Fprintf(w, "browsers:    none connected (%d paired) — open Chrome with Torii, or run `torii launch`\n", len(bs))
	default:
		fmt.Fprintf(w, "browsers:    %d connected, serving tools (%d paired)\n", n, len(bs))
	}
	for _, b := range bs {
		state := "offline"
		switch {
		case b.Serving:
			state = "serving tools"
		case b.Connected:
			state = "connected, tools not up yet"
		}
		extra := ""
		if b.Default {
			extra = "  (new sessions act here)"
		}
		if b.Serving && !b.LastUsed.IsZero() {
			extra += "  used " + time.Since(b.LastUsed.Time).Round(time.Second).String() + " ago"
		}
		fmt.Fprintf(w, "  %q  %s  %s%s\n", b.Name, b.DeviceID, state, extra)
		var who []string
		for _, s := range b.Sessions {
			l := fmt.Sprintf("%q (%s", s.Label, s.Kind)
			if s.Binding != "" && s.Binding != "default" {
				l += ", " + s.Binding
			}
			who = append(who, l+")")
		}
		if len(who) > 0 {
			fmt.Fprintf(w, "      sessions: %s\n", strings.Join(who, ", "))
		}
	}
}

// checkBrowserName refuses `torii mcp --browser NAME` at once when no
// paired browser has that name or ID; a paired browser that is not
// connected yet is accepted (its calls say so until it connects).
func checkBrowserName(ctx context.Context, c *control.Client, name string) error {
	var devs devicesResult
	if err := c.Call(ctx, "devices.list", nil, &devs); err != nil {
		return err
	}
	var known []string
	for _, d := range devs.Devices {
		if d.DeviceID == name || strings.EqualFold(d.Name, name) {
			return nil
		}
		state := "offline"
		if d.Connected {
			state = "connected"
		}
		known = append(known, fmt.Sprintf("%q (%s)", d.Name, state))
	}
	if len(known) == 0 {
		return fmt.Errorf("torii mcp: --browser %q: no browser is paired yet; pair one with `torii launch` first", name)
	}
	return fmt.Errorf("torii mcp: --browser %q: no paired browser has that name or ID; paired: %s (see `torii status`, rename with `torii devices rename`)", name, strings.Join(known, ", "))
}

// managedDeviceName is the name `torii launch` pairs its browser under:
// the browser, the profile directory and the host, e.g. "Chromium (profile
// work) on laptop", so two managed profiles never read the same.
func managedDeviceName(browserPath, profileDir string, torii bool) string {
	b := strings.ToLower(filepath.Base(browserPath))
	brand := "Chromium"
	switch {
	case strings.Contains(b, "chrome"):
		brand = "Chrome"
	case strings.Contains(b, "edge"):
		brand = "Edge"
	case strings.Contains(b, "brave"):
		brand = "Brave"
	}
	name := brand + " (profile " + filepath.Base(profileDir) + ")"
	if torii {
		name = brand + " (Torii profile)" // the default <state dir>/profile
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		name += " on " + h
	}
	if r := []rune(name); len(r) > pairing.MaxDeviceName {
		name = string(r[:pairing.MaxDeviceName])
	}
	return name
}
