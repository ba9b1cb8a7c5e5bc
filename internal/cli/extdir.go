package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/config"
)

// extensionDir is where `torii launch` writes the built-in extension.
func extensionDir(p config.Paths) string { return filepath.Join(p.StateDir, "extension") }

// syncExtension makes dir hold exactly the binary's extension. It rewrites
// only when something differs, so a browser that already has it loaded is
// not disturbed, and an upgraded binary never runs a stale extension.
func syncExtension(dir string) (changed bool, err error) {
	want, err := extension.Files()
	if err != nil {
		return false, err
	}
	same, err := sameTree(want, dir)
	if err != nil {
		return false, err
	}
	if same {
		return false, nil
	}
	// Build beside it and swap, so the folder is never half-written.
	tmp := dir + ".new"
	old := dir + ".old"
	os.RemoveAll(tmp)
	os.RemoveAll(old)
	if err := extension.Install(tmp); err != nil {
		return false, err
	}
	if err := os.Rename(dir, old); err != nil && !os.IsNotExist(err) {
		return false, fmt.Errorf("replace extension: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return false, fmt.Errorf("replace extension: %w", err)
	}
	os.RemoveAll(old)
	return true, nil
}

// sameTree reports whether dir has exactly want's regular files and bytes.
func sameTree(want fs.FS, dir string) (bool, error) {
	if _, err := os.Stat(dir); os.IsNotExist(err) {
		return false, nil
	}
	wantFiles := map[string]bool{}
	same := true
	err := fs.WalkDir(want, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == ".gitkeep" || !same {
			return err
		}
		wantFiles[path] = true
		a, err := fs.ReadFile(want, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path)))
		if err != nil || !bytes.Equal(a, b) {
			same = false
		}
		return nil
	})
	if err != nil || !same {
		return false, err
	}
	// Extra files (from an older build) also count as a difference.
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !same {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		if !wantFiles[filepath.ToSlash(rel)] {
			same = false
		}
		return nil
	})
	return same, err
}
