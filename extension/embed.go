// Package extension carries the built Chrome extension inside the torii binary, so a person who
// has only the binary can write it out (`torii extension install DIR`) and load it unpacked.
package extension

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Dist is the output of `npm run build` (extension/dist). Before the first build it holds only
// .gitkeep, which keeps this package compiling.
//
//go:embed all:dist
var Dist embed.FS

// ID is the extension ID Chrome derives from the manifest's "key"; the daemon pins
// Origin chrome-extension://<ID> on its /acp endpoint.
const ID = "fljdejdpnpnjkonefefacbenoijnhcih"

// Origin is the Origin header the extension's service worker and pages send.
const Origin = "chrome-extension://" + ID

// ErrNotBuilt means the binary was compiled before the extension was built.
var ErrNotBuilt = errors.New("this torii binary has no built extension: run `make build` (npm run build in extension/, then go build) and rebuild")

// Built reports whether the embedded dist holds a built extension.
func Built() bool {
	_, err := fs.Stat(Dist, "dist/manifest.json")
	return err == nil
}

// Files returns the embedded extension as a file system rooted at the extension folder.
func Files() (fs.FS, error) {
	if !Built() {
		return nil, ErrNotBuilt
	}
	return fs.Sub(Dist, "dist")
}

// Install writes the built extension into dir (created if needed), ready for
// chrome://extensions → "Load unpacked" or --load-extension. Existing files are overwritten.
func Install(dir string) error {
	sub, err := Files()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("extension install: %w", err)
	}
	return fs.WalkDir(sub, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Name() == ".gitkeep" {
			return nil
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := fs.ReadFile(sub, path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return fmt.Errorf("extension install: %w", err)
		}
		return nil
	})
}
