package cli

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/audit"
)

// handMadeAudit writes a closed audit database of n records, each tool name
// unique in the file so one byte of one record can be found and changed.
func handMadeAudit(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	s, err := audit.Open(path, audit.Options{})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Now().Add(-time.Hour)
	for i := 1; i <= n; i++ {
		s.Add(audit.Record{Time: base.Add(time.Duration(i) * time.Second), Tool: fmt.Sprintf("tool-%02d-by-hand", i), Session: "agent:a", Outcome: audit.OutcomeOK, DurationMs: int64(i)})
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// sqlEdit changes the database with SQL, as a person with the sqlite3 shell would.
func sqlEdit(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// SECURITY I-70: `torii audit verify --db` on a database edited by hand, through
// the real binary: one byte of the file itself changed (no SQL, no hash
// recomputed), a row deleted, a pair of rows swapped in order. Each exits 1
// naming the first broken record; the untouched file verifies.
func TestAuditVerifyFindsHandEditsInTheFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	verify := func(path string) result { return e.run("", "audit", "verify", "--db", path) }

	intact := handMadeAudit(t, 8)
	if r := verify(intact); r.code != 0 || !strings.Contains(r.stdout, "chain ok: 8 record(s) verified") {
		t.Fatalf("intact: %+v", r)
	}

	t.Run("one byte of the file", func(t *testing.T) {
		path := handMadeAudit(t, 8)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		needle := []byte("tool-05-by-hand")
		if bytes.Count(b, needle) != 1 {
			t.Fatalf("record 5's tool is in the file %d times, want once (is it still in a WAL?)", bytes.Count(b, needle))
		}
		i := bytes.Index(b, needle) + len("tool-05-by-h")
		b[i] = 'A' // "hand" → "hAnd": the same length, the page still parses
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if r := verify(path); r.code != 1 || !strings.Contains(r.stderr, "audit chain broken at record 5 (altered)") {
			t.Fatalf("one byte: %+v", r)
		}
	})
	t.Run("a deleted row", func(t *testing.T) {
		path := handMadeAudit(t, 8)
		sqlEdit(t, path, `DELETE FROM calls WHERE id = 4`)
		if r := verify(path); r.code != 1 || !strings.Contains(r.stderr, "audit chain broken at record 4 (missing)") {
			t.Fatalf("deleted row: %+v", r)
		}
	})
	t.Run("a reordered pair", func(t *testing.T) {
		path := handMadeAudit(t, 8)
		sqlEdit(t, path, `UPDATE calls SET id = -6 WHERE id = 6`, `UPDATE calls SET id = 6 WHERE id = 7`, `UPDATE calls SET id = 7 WHERE id = -6`)
		if r := verify(path); r.code != 1 || !strings.Contains(r.stderr, "audit chain broken at record 6") {
			t.Fatalf("reordered pair: %+v", r)
		}
	})
}
