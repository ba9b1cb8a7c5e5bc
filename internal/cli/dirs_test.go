package cli

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/torii-browser/torii/internal/config"
)

func TestTakeDirFlags(t *testing.T) {
	t.Setenv("TORII_CONFIG_DIR", "")
	t.Setenv("TORII_STATE_DIR", "")
	rest, err := takeDirFlags([]string{"--session", "x", "--config-dir", "/c", "-state-dir=/s", "--", "--state-dir", "kept"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"--session", "x", "--", "--state-dir", "kept"}; !slices.Equal(rest, want) {
		t.Fatalf("rest = %q, want %q", rest, want)
	}
	if os.Getenv("TORII_CONFIG_DIR") != "/c" || os.Getenv("TORII_STATE_DIR") != "/s" {
		t.Fatalf("env = %q %q", os.Getenv("TORII_CONFIG_DIR"), os.Getenv("TORII_STATE_DIR"))
	}
	for _, bad := range [][]string{{"--state-dir"}, {"--config-dir="}} {
		var ue *UsageError
		if _, err := takeDirFlags(bad); !errors.As(err, &ue) {
			t.Errorf("%q: err = %v, want a usage error", bad, err)
		}
	}
}

// A client with a clean environment follows the discovery record to the
// dirs of the daemon it names; variables win over it; a record whose daemon
// is gone and whose state dir holds no daemon is ignored.
func TestPathsFollowDiscovery(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("TORII_CONFIG_DIR", "")
	t.Setenv("TORII_STATE_DIR", "")
	file, err := config.DiscoveryFile()
	if err != nil {
		t.Fatal(err)
	}
	custom := config.Paths{ConfigDir: filepath.Join(home, "c"), StateDir: filepath.Join(home, "s")}
	if err := config.WriteDiscovery(file, config.Discovery{ConfigDir: custom.ConfigDir, StateDir: custom.StateDir, PID: 1}); err != nil {
		t.Fatal(err)
	}
	def, _ := config.StandardPaths()
	if p, _ := paths(); p != def {
		t.Fatalf("a record naming nothing alive: paths = %+v, want the defaults", p)
	}
	if err := custom.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(custom.DaemonKey(), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if p, _ := paths(); p != custom {
		t.Fatalf("paths = %+v, want the record's %+v", p, custom)
	}
	if got := dirFlags(custom); got != " --config-dir "+custom.ConfigDir+" --state-dir "+custom.StateDir {
		t.Fatalf("dirFlags = %q", got)
	}
	if got := dirFlags(def); got != "" {
		t.Fatalf("dirFlags(defaults) = %q, want none", got)
	}
	t.Setenv("TORII_STATE_DIR", filepath.Join(home, "env"))
	if p, _ := paths(); p.StateDir != filepath.Join(home, "env") {
		t.Fatalf("the variable lost to the record: %+v", p)
	}
}
