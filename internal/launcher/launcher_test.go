package launcher

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func noPath(string) (string, error) { return "", exec.ErrNotFound }

func TestFindNothingListsWhatWasTried(t *testing.T) {
	f := Finder{Getenv: func(string) string { return "" }, LookPath: noPath, Locations: []string{"/nonexistent/chromium"}}
	_, err := f.Find("")
	var nf *NotFoundError
	if !errors.As(err, &nf) {
		t.Fatalf("err = %v, want *NotFoundError", err)
	}
	msg := err.Error()
	for _, want := range []string{"chromium (PATH)", "google-chrome-stable (PATH)", "/nonexistent/chromium", "apt install chromium", "--browser", EnvBrowser} {
		if !strings.Contains(msg, want) {
			t.Errorf("message lacks %q:\n%s", want, msg)
		}
	}
}

func TestFindOrder(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "mybrowser")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	loc := filepath.Join(dir, "located")
	if err := os.WriteFile(loc, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	var looked []string
	f := Finder{
		Getenv: func(k string) string { return env[k] },
		LookPath: func(n string) (string, error) {
			looked = append(looked, n)
			if n == "google-chrome" {
				return "/path/google-chrome", nil
			}
			return "", exec.ErrNotFound
		},
		Locations: []string{loc},
	}
	if got, err := f.Find(exe); err != nil || got != exe {
		t.Errorf("flag: got %q, %v", got, err)
	}
	env[EnvBrowser] = loc
	if got, err := f.Find(""); err != nil || got != loc {
		t.Errorf("env: got %q, %v", got, err)
	}
	delete(env, EnvBrowser)
	looked = nil
	if got, err := f.Find(""); err != nil || got != "/path/google-chrome" {
		t.Errorf("PATH: got %q, %v", got, err)
	}
	if !slices.Equal(looked, []string{"chromium", "chromium-browser", "google-chrome"}) {
		t.Errorf("PATH order = %v", looked)
	}
	f.LookPath = noPath
	if got, err := f.Find(""); err != nil || got != loc {
		t.Errorf("location: got %q, %v", got, err)
	}
}

func TestFindBadExplicit(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExec, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f := Finder{Getenv: func(k string) string {
		if k == EnvBrowser {
			return filepath.Join(dir, "missing")
		}
		return ""
	}, LookPath: noPath}
	cases := []struct{ flag, source, reason string }{
		{notExec, "--browser", "is not executable"},
		{dir, "--browser", "is a directory"},
		{"nosuchbrowser", "--browser", "is not on PATH"},
		{"", EnvBrowser, "does not exist"},
	}
	for _, c := range cases {
		_, err := f.Find(c.flag)
		var bb *BadBrowserError
		if !errors.As(err, &bb) || bb.Source != c.source || !strings.Contains(err.Error(), c.reason) {
			t.Errorf("Find(%q) = %v, want BadBrowserError from %s %q", c.flag, err, c.source, c.reason)
		}
	}
}

func TestArgs(t *testing.T) {
	base := Options{Browser: "b", Profile: "P", ExtensionDir: "E", StartURL: "chrome-extension://x/connect.html#otp=1"}
	cases := []struct {
		name      string
		root      bool
		headless  bool
		want, not []string
	}{
		{"plain", false, false, nil, []string{"--no-sandbox", "--headless=new"}},
		{"root", true, false, []string{"--no-sandbox"}, []string{"--headless=new"}},
		{"headless", false, true, []string{"--headless=new"}, []string{"--no-sandbox"}},
		{"both", true, true, []string{"--no-sandbox", "--headless=new"}, nil},
	}
	for _, c := range cases {
		o := base
		o.Root, o.Headless = c.root, c.headless
		a := Args(o)
		for _, w := range append([]string{"--user-data-dir=P", "--load-extension=E", "--no-first-run", "--disable-quic", "--disable-gpu", "--disable-sync", "--disable-component-update", "--disable-background-networking", "--no-default-browser-check"}, c.want...) {
			if !slices.Contains(a, w) {
				t.Errorf("%s: %v lacks %s", c.name, a, w)
			}
		}
		for _, n := range c.not {
			if slices.Contains(a, n) {
				t.Errorf("%s: %v has %s", c.name, a, n)
			}
		}
		if a[len(a)-1] != base.StartURL {
			t.Errorf("%s: start URL must come last: %v", c.name, a)
		}
	}
}

func TestStartReportsExit(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fakebrowser")
	// Exits like Chromium does when another process owns the profile.
	if err := os.WriteFile(fake, []byte("#!/bin/sh\necho \"$@\"\nexit 21\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	logf := filepath.Join(dir, "browser.log")
	p, err := Start(Options{Browser: fake, Profile: filepath.Join(dir, "prof"), ExtensionDir: "E", LogFile: logf})
	if err != nil {
		t.Fatal(err)
	}
	var pe *ProfileInUseError
	if err := p.Err(); !errors.As(err, &pe) {
		t.Fatalf("Err = %v, want ProfileInUseError", err)
	}
	out, _ := os.ReadFile(logf)
	if !strings.Contains(string(out), "--load-extension=E") {
		t.Errorf("log lacks args: %q", out)
	}
}
