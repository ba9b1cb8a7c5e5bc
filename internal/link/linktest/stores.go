package linktest

import (
	"path/filepath"
	"testing"

	"github.com/torii-browser/torii/internal/pairing"
)

// Stores is a daemon identity and an empty device store in dir, the state a
// link server needs; a failure ends the test.
func Stores(tb testing.TB, dir string) (*pairing.Identity, *pairing.DeviceStore) {
	tb.Helper()
	id, err := pairing.LoadOrCreateIdentity(filepath.Join(dir, "daemon.key"))
	if err != nil {
		tb.Fatal(err)
	}
	devs, err := pairing.OpenDeviceStore(filepath.Join(dir, "devices.json"))
	if err != nil {
		tb.Fatal(err)
	}
	return id, devs
}
