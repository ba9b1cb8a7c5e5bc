package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/team/store/storetest"
)

var sqliteBackend = storetest.Backend{
	NewDB: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "team.db") },
	Exec: func(t *testing.T, url, q string) {
		db, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(url, "sqlite:")+"?_pragma=busy_timeout(5000)")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	},
	Dump: func(t *testing.T, url string) []byte {
		var all []byte
		path := strings.TrimPrefix(url, "sqlite:")
		for _, p := range []string{path, path + "-wal", path + "-journal"} {
			b, err := os.ReadFile(p)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		return all
	},
}

func TestSQLite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, sqliteBackend)
}

func TestSQLiteFileIsPrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "team.db")
	storetest.Open(t, "sqlite:"+path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("team.db is %v, want 0600", fi.Mode().Perm())
	}
}

func TestOpenBadURL(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"", "mysql://u:hunter2pw@h/db", "team.db", "sqlite:", "sqlite:/tmp/x?mode=ro", "sqlite:" + filepath.Join(t.TempDir(), "no", "such", "dir", "t.db")} {
		s, err := store.Open(context.Background(), u)
		if err == nil {
			s.Close()
			t.Fatalf("Open(%q) worked", u)
		}
		if strings.Contains(err.Error(), "hunter2pw") {
			t.Fatalf("the error shows the password: %v", err)
		}
		if !strings.Contains(err.Error(), "sqlite:") && !bytes.Contains([]byte(err.Error()), []byte("postgres://")) {
			t.Fatalf("Open(%q): %v names no form to use", u, err)
		}
	}
}
