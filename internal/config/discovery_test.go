package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDiscoveryFileIgnoresToriiStateDir(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("TORII_STATE_DIR", filepath.Join(home, "custom"))
	got, err := DiscoveryFile()
	if want := filepath.Join(home, ".local", "state", "torii", "daemon.json"); err != nil || got != want {
		t.Fatalf("DiscoveryFile = %q, %v; want %q", got, err, want)
	}
}

func TestDiscoveryRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "torii", "daemon.json")
	if _, ok, err := ReadDiscovery(path); ok || err != nil {
		t.Fatalf("no record: ok=%v err=%v", ok, err)
	}
	d := Discovery{ConfigDir: "/c", StateDir: "/s", Listen: "127.0.0.1:7317", PID: 42, Browser: true}
	if err := WriteDiscovery(path, d); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v, want 0600", fi.Mode())
	}
	got, ok, err := ReadDiscovery(path)
	if err != nil || !ok || got.Paths() != (Paths{ConfigDir: "/c", StateDir: "/s"}) || got.PID != 42 || !got.Browser {
		t.Fatalf("read %+v ok=%v err=%v", got, ok, err)
	}
}

// A record that is not JSON, names relative dirs, or that others could have
// written is refused, never followed.
func TestDiscoveryBadRecords(t *testing.T) {
	for name, c := range map[string]struct {
		body string
		mode os.FileMode
	}{
		"not json":       {`{"configDir":`, 0o600},
		"relative dirs":  {`{"configDir":"c","stateDir":"s","pid":1}`, 0o600},
		"empty":          {`{}`, 0o600},
		"open to others": {`{"configDir":"/c","stateDir":"/s","pid":1}`, 0o666},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "daemon.json")
			if err := os.WriteFile(path, []byte(c.body), c.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, c.mode); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := ReadDiscovery(path); ok || !errors.Is(err, ErrBadDiscovery) {
				t.Fatalf("ok=%v err=%v, want ErrBadDiscovery", ok, err)
			}
		})
	}
}
