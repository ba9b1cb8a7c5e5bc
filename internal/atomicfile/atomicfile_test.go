package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestWriteCreatesFileDirAndPerm(t *testing.T) {
	// A umask that would otherwise widen or narrow modes must not matter.
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)

	dir := filepath.Join(t.TempDir(), "a", "b")
	path := filepath.Join(dir, "secret.key")
	if err := Write(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	assertMode(t, path, 0o600)
	assertMode(t, dir, 0o700)
	assertMode(t, filepath.Dir(dir), 0o700)

	// Overwrite with different content and mode; old content is replaced whole.
	if err := Write(path, []byte("two!"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	if string(got) != "two!" {
		t.Fatalf("content %q", got)
	}
	assertMode(t, path, 0o644)
	if err := Write(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	got, _ = os.ReadFile(path)
	if len(got) != 0 {
		t.Fatalf("empty write left %q", got)
	}
	assertOnlyFile(t, dir, "secret.key")
}

// Rewriting replaces the inode: a reader holding the old file keeps seeing
// the old content, never a mix.
func TestWriteIsRename(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := Write(path, []byte("old content"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := Write(path, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := f.Read(buf)
	if string(buf[:n]) != "old content" {
		t.Fatalf("old reader saw %q", buf[:n])
	}
}

func TestWriteFailureLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	// The target is a non-empty directory: rename fails after the temp file
	// was written, and the temp file must be cleaned up.
	target := filepath.Join(dir, "target")
	if err := os.MkdirAll(filepath.Join(target, "x"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := Write(target, []byte("data"), 0o600); err == nil {
		t.Fatal("write over a directory succeeded")
	}
	assertOnlyFile(t, dir, "target")
}

func TestWriteBadInput(t *testing.T) {
	if err := Write("", []byte("x"), 0o600); !errors.Is(err, ErrEmptyPath) {
		t.Fatalf("empty path: %v", err)
	}
	// Parent is a regular file: cannot create the directory.
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(filepath.Join(file, "child"), []byte("x"), 0o600); err == nil {
		t.Fatal("write under a regular file succeeded")
	}
}

func TestCheckPrivate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "k")
	if err := Write(path, []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := CheckPrivate(path); err != nil {
		t.Fatalf("0600: %v", err)
	}
	for _, m := range []os.FileMode{0o644, 0o620, 0o601, 0o700 | 0o070} {
		if err := os.Chmod(path, m); err != nil {
			t.Fatal(err)
		}
		err := CheckPrivate(path)
		var pe *PermError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPermTooOpen) || pe.Path != path {
			t.Fatalf("%04o: %v", m, err)
		}
		if !strings.Contains(err.Error(), "chmod 600") {
			t.Fatalf("no fix in %q", err)
		}
	}
	if err := CheckPrivate(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

func assertMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Fatalf("%s: mode %04o, want %04o", filepath.Base(path), fi.Mode().Perm(), want)
	}
}

func assertOnlyFile(t *testing.T, dir, name string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != name {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("dir holds %v, want only %s (temp files left behind?)", names, name)
	}
}
