package logx

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestBoundedCutsEveryValue(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(Bounded(slog.NewTextHandler(&buf, nil)))
	long := strings.Repeat("é", 10000)
	l.With("with", long).Info(long, "s", long, "err", errors.New(long), slog.Group("g", "x", long), "n", 42)
	out := buf.String()
	if len(out) > 8*MaxField+512 {
		t.Fatalf("line of %d bytes", len(out))
	}
	if !strings.Contains(out, "n=42") || strings.Count(out, "(20000 bytes)") != 5 {
		t.Fatalf("unexpected line: %s", out)
	}
	if !strings.Contains(Field(long), "é…") {
		t.Fatal("cut inside a character")
	}
}

func TestFileRotates(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "torii.log")
	var opened int
	f, err := OpenFile(path, 1000, 2, func(*os.File) { opened++ })
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 99) + "\n")
	for i := 0; i < 100; i++ {
		if _, err := f.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	f.Close()
	total := int64(0)
	for _, name := range []string{"torii.log", "torii.log.1", "torii.log.2"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if fi.Size() > 1000 || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %d bytes, mode %v", name, fi.Size(), fi.Mode())
		}
		total += fi.Size()
	}
	if _, err := os.Stat(filepath.Join(dir, "torii.log.3")); !os.IsNotExist(err) {
		t.Fatal("more files kept than asked")
	}
	if opened < 10 {
		t.Fatalf("afterOpen ran %d times", opened)
	}
	// A file already over the size is rotated at open.
	os.WriteFile(path, bytes.Repeat([]byte("y"), 2000), 0o600)
	f, err = OpenFile(path, 1000, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if fi, _ := os.Stat(path); fi.Size() != 0 {
		t.Fatalf("not rotated at open: %d bytes", fi.Size())
	}
}
