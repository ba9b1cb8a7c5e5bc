// Package atomicfile writes files so that a reader never sees a partial
// file and a crash never leaves a half-written secret behind.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrEmptyPath is returned when Write is given an empty path.
var ErrEmptyPath = errors.New("atomicfile: empty path")

// Write writes data to path via a temp file in the same dir + fsync + rename;
// the file gets perm (0600 for secrets). Creates parent dirs 0700.
//
// SECURITY I-9: the temp file is created with perm before any byte is
// written, so a secret is never readable by others even for an instant, and
// the rename makes the new content appear atomically.
func Write(path string, data []byte, perm os.FileMode) (err error) {
	if path == "" {
		return ErrEmptyPath
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("atomicfile: create dir %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+tempInfix+"*")
	if err != nil {
		return fmt.Errorf("atomicfile: create temp in %s: %w", dir, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	// CreateTemp uses 0600 already; Chmod makes perm exact regardless of umask.
	if err = f.Chmod(perm.Perm()); err != nil {
		return fmt.Errorf("atomicfile: chmod %s: %w", tmp, err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("atomicfile: write %s: %w", tmp, err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("atomicfile: sync %s: %w", tmp, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("atomicfile: close %s: %w", tmp, err)
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("atomicfile: rename to %s: %w", path, err)
	}
	// Persist the rename itself; failure here is not fatal to correctness of
	// the content, but report it so callers know durability is uncertain.
	if d, derr := os.Open(dir); derr == nil {
		serr := d.Sync()
		_ = d.Close()
		if serr != nil && !errors.Is(serr, os.ErrInvalid) {
			return fmt.Errorf("atomicfile: sync dir %s: %w", dir, serr)
		}
	}
	return nil
}

// tempInfix marks Write's temporary files: "." + name + tempInfix + random.
const tempInfix = ".tmp-"

// RemoveStale deletes the temporary files Write leaves in dir when the
// process is killed between creating one and renaming it (SECURITY I-53).
// Call it only while no Write to dir can be running (the daemon holds its
// lock). A missing dir is not an error.
func RemoveStale(dir string) (removed int, err error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, ".") || !strings.Contains(n, tempInfix) {
			continue
		}
		if rerr := os.Remove(filepath.Join(dir, n)); rerr == nil {
			removed++
		} else if !errors.Is(rerr, os.ErrNotExist) && err == nil {
			err = rerr
		}
	}
	return removed, err
}
