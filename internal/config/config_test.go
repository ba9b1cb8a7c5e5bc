package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIsLoopbackHost(t *testing.T) {
	cases := map[string]bool{
		"127.0.0.1":          true,
		"127.0.0.1:7317":     true,
		"127.1.2.3":          true,
		"127.255.255.254:80": true,
		"::1":                true,
		"[::1]":              true,
		"[::1]:7317":         true,
		"localhost":          true,
		"LOCALHOST":          true,
		"localhost:7317":     true,
		"localhost.":         true,
		"localhost.:7317":    true,

		"":                        false,
		":7317":                   false,
		"0.0.0.0":                 false,
		"0.0.0.0:7317":            false,
		"[::]:7317":               false,
		"::":                      false,
		"128.0.0.1":               false,
		"10.0.0.1":                false,
		"192.168.1.1:7317":        false,
		"127.0.0.1.evil.com":      false,
		"127.0.0.1.evil.com:7317": false,
		"localhost.evil.com":      false,
		"evil.localhost.com":      false,
		"localhost.evil.com:7317": false,
		"evil.com":                false,
		"localhost:7317:1":        false,
		"[::1]x":                  false,
		"::1%lo":                  false,
		"[::1%25lo]:7317":         false,
		"127.0.0.1 ":              false,
		"0x7f.1":                  false,
		"2130706433":              false,
	}
	for host, want := range cases {
		if got := IsLoopbackHost(host); got != want {
			t.Errorf("IsLoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}

func TestValidate(t *testing.T) {
	ok := []Config{
		Default(),
		{Listen: "localhost:0"},
		{Listen: "[::1]:7317"},
		{Listen: "0.0.0.0:7317", TLSCert: "c.pem", TLSKey: "k.pem"},
		{Listen: "127.0.0.1:7317", ExtensionIDs: []string{"abcdefghijklmnopabcdefghijklmnop"}, TokenOrigins: []string{"chrome-extension://abcdefghijklmnopabcdefghijklmnop", "http://localhost:3000"}},
	}
	for _, c := range ok {
		if err := c.Validate(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := []struct {
		c    Config
		want error
	}{
		{Config{Listen: "0.0.0.0:7317"}, ErrNonLoopbackNeedsTLS},
		{Config{Listen: ":7317"}, ErrNonLoopbackNeedsTLS}, // empty host binds all interfaces
		{Config{Listen: "[::]:7317"}, ErrNonLoopbackNeedsTLS},
		{Config{Listen: "192.168.1.5:7317", TLSCert: "c.pem"}, ErrTLSHalf},
		{Config{Listen: "192.168.1.5:7317", TLSKey: "k.pem"}, ErrTLSHalf},
		{Config{Listen: "localhost.evil.com:7317"}, ErrNonLoopbackNeedsTLS},
		{Config{Listen: ""}, ErrBadListen},
		{Config{Listen: "127.0.0.1"}, ErrBadListen},
		{Config{Listen: "127.0.0.1:http"}, ErrBadListen},
		{Config{Listen: "127.0.0.1:70000"}, ErrBadListen},
		{Config{Listen: "127.0.0.1:-1"}, ErrBadListen},
		{Config{Listen: "127.0.0.1:7317", ExtensionIDs: []string{"short"}}, ErrBadExtensionID},
		{Config{Listen: "127.0.0.1:7317", ExtensionIDs: []string{"ABCDEFGHIJKLMNOPABCDEFGHIJKLMNOP"}}, ErrBadExtensionID},
		{Config{Listen: "127.0.0.1:7317", ExtensionIDs: []string{"qbcdefghijklmnopabcdefghijklmnop"}}, ErrBadExtensionID},
		{Config{Listen: "127.0.0.1:7317", TokenOrigins: []string{"*"}}, ErrBadOrigin},
		{Config{Listen: "127.0.0.1:7317", TokenOrigins: []string{"https://a.example/"}}, ErrBadOrigin},
		{Config{Listen: "127.0.0.1:7317", TokenOrigins: []string{"https://user@a.example"}}, ErrBadOrigin},
		{Config{Listen: "127.0.0.1:7317", TokenOrigins: []string{"a.example"}}, ErrBadOrigin},
		{Config{Listen: "127.0.0.1:7317", TokenOrigins: []string{"HTTPS://a.example"}}, ErrBadOrigin},
	}
	for _, b := range bad {
		if err := b.c.Validate(); !errors.Is(err, b.want) {
			t.Errorf("%+v: err %v, want %v", b.c, err, b.want)
		}
	}
}

func testPaths(t *testing.T) Paths {
	d := t.TempDir()
	return Paths{ConfigDir: filepath.Join(d, "cfg"), StateDir: filepath.Join(d, "state")}
}

func writeConfig(t *testing.T, p Paths, body string) {
	t.Helper()
	if err := os.MkdirAll(p.ConfigDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.ConfigFile(), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	p := testPaths(t)
	c, err := Load(p)
	if err != nil || c.Listen != DefaultListen || c.TLSCert != "" {
		t.Fatalf("missing file: %+v %v", c, err)
	}
	writeConfig(t, p, `{"listen":"127.0.0.1:9000","extensionIds":["abcdefghijklmnopabcdefghijklmnop"],"tokenOrigins":["http://localhost:3000"]}`)
	c, err = Load(p)
	if err != nil || c.Listen != "127.0.0.1:9000" || len(c.ExtensionIDs) != 1 || c.TokenOrigins[0] != "http://localhost:3000" {
		t.Fatalf("load: %+v %v", c, err)
	}
	writeConfig(t, p, `{}`)
	if c, err = Load(p); err != nil || c.Listen != DefaultListen {
		t.Fatalf("empty object: %+v %v", c, err)
	}
}

func TestLoadBadJSON(t *testing.T) {
	cases := []struct {
		name, body string
		line       int
	}{
		{"syntax error on line 3", "{\n  \"listen\": \"127.0.0.1:1\",\n  oops\n}", 3},
		{"unknown field", "{\n  \"listen\": \"127.0.0.1:1\",\n  \"tlsCertificate\": \"x\"\n}", 3},
		{"wrong type", "{\n\n  \"listen\": 7317\n}", 3},
		{"truncated", "{\n  \"listen\": ", 2},
		{"trailing data", "{}\n{}", 2},
		{"not an object", "[]", 1},
		{"empty file", "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := testPaths(t)
			writeConfig(t, p, c.body)
			_, err := Load(p)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err %v, want *ParseError", err)
			}
			if pe.File != p.ConfigFile() || !strings.Contains(err.Error(), p.ConfigFile()) {
				t.Fatalf("error does not name the file: %v", err)
			}
			if pe.Line != c.line {
				t.Fatalf("line %d, want %d (%v)", pe.Line, c.line, err)
			}
		})
	}
}

func TestPaths(t *testing.T) {
	p := Paths{ConfigDir: "/c", StateDir: "/s"}
	for got, want := range map[string]string{
		p.ConfigFile(): "/c/config.json",
		p.Socket():     "/s/torii.sock",
		p.LockFile():   "/s/torii.lock",
		p.DaemonKey():  "/s/daemon.key",
		p.Devices():    "/s/devices.json",
		p.Tokens():     "/s/tokens.json",
		p.LogFile():    "/s/torii.log",
	} {
		if got != want {
			t.Errorf("%s, want %s", got, want)
		}
	}
}

func TestDefaultPaths(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("TORII_CONFIG_DIR", "")
	t.Setenv("TORII_STATE_DIR", "")
	p, err := DefaultPaths()
	if err != nil {
		t.Fatal(err)
	}
	if p.ConfigDir != filepath.Join(home, ".config", "torii") || p.StateDir != filepath.Join(home, ".local", "state", "torii") {
		t.Fatalf("defaults %+v", p)
	}

	xdg := t.TempDir()
	t.Setenv("XDG_STATE_HOME", xdg)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(xdg, "conf"))
	p, _ = DefaultPaths()
	if p.StateDir != filepath.Join(xdg, "torii") || p.ConfigDir != filepath.Join(xdg, "conf", "torii") {
		t.Fatalf("xdg %+v", p)
	}
	t.Setenv("XDG_STATE_HOME", "relative/dir") // the XDG spec says ignore it
	p, _ = DefaultPaths()
	if p.StateDir != filepath.Join(home, ".local", "state", "torii") {
		t.Fatalf("relative XDG_STATE_HOME used: %+v", p)
	}

	over := t.TempDir()
	t.Setenv("TORII_CONFIG_DIR", filepath.Join(over, "c"))
	t.Setenv("TORII_STATE_DIR", filepath.Join(over, "s"))
	p, _ = DefaultPaths()
	if p.ConfigDir != filepath.Join(over, "c") || p.StateDir != filepath.Join(over, "s") {
		t.Fatalf("override %+v", p)
	}
}

func TestEnsureTightens(t *testing.T) {
	p := testPaths(t)
	if err := p.Ensure(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{p.ConfigDir, p.StateDir} {
		assertDirMode(t, d, 0o700)
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Ensure(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{p.ConfigDir, p.StateDir} {
		assertDirMode(t, d, 0o700)
	}
	// State path taken by a regular file.
	bad := testPaths(t)
	if err := os.MkdirAll(filepath.Dir(bad.StateDir), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad.StateDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := bad.Ensure(); err == nil {
		t.Fatal("Ensure accepted a file as state dir")
	}
	if err := (Paths{}).Ensure(); err == nil {
		t.Fatal("Ensure accepted empty paths")
	}
}

func assertDirMode(t *testing.T, d string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(d)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Fatalf("%s: %04o, want %04o", d, fi.Mode().Perm(), want)
	}
}

// An unknown key, at any depth, names the nearest known one.
func TestLoadUnknownKeySuggests(t *testing.T) {
	for body, want := range map[string]string{
		`{"broker": {"toolGroup": ["x"]}}`: `unknown field "toolGroup" (did you mean "toolGroups"?)`,
		`{"lisen": "127.0.0.1:1"}`:         `unknown field "lisen" (did you mean "listen"?)`,
		`{"zzzzzzzzzz": 1}`:                `unknown field "zzzzzzzzzz"`,
	} {
		p := testPaths(t)
		writeConfig(t, p, body)
		_, err := Load(p)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
		if strings.HasPrefix(body, `{"zzz`) && strings.Contains(err.Error(), "did you mean") {
			t.Errorf("%s: a far key got a suggestion: %v", body, err)
		}
	}
}
