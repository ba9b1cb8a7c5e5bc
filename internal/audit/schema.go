package audit

// The database's schema: its migrations, and the records' columns.

import (
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// migrations, applied in order; the version is the index + 1. Never edit
// one that has shipped: append.
var migrations = []string{
	`CREATE TABLE calls (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		ts          INTEGER NOT NULL,            -- Unix milliseconds
		tool        TEXT    NOT NULL,
		session     TEXT    NOT NULL DEFAULT '',
		origin      TEXT    NOT NULL DEFAULT '',
		outcome     TEXT    NOT NULL,
		code        TEXT    NOT NULL DEFAULT '',
		duration_ms INTEGER NOT NULL DEFAULT 0,
		approval    TEXT    NOT NULL DEFAULT ''
	);
	CREATE INDEX calls_ts ON calls(ts);`,
	// The hash chain (chain.go). Rows written before it keep an empty hash
	// and lie at or before the genesis checkpoint; the chain starts after
	// the highest id ever used, so no id an older export holds is reused.
	`ALTER TABLE calls ADD COLUMN prev TEXT NOT NULL DEFAULT '';
	ALTER TABLE calls ADD COLUMN hash TEXT NOT NULL DEFAULT '';
	CREATE TABLE checkpoints (
		seq  INTEGER PRIMARY KEY,            -- the last record before the kept chain
		hash TEXT    NOT NULL,               -- that record's hash (zeros at genesis)
		kind TEXT    NOT NULL,               -- genesis | retention
		at   INTEGER NOT NULL                -- Unix milliseconds
	);
	INSERT INTO checkpoints(seq, hash, kind, at) SELECT
		MAX(COALESCE((SELECT MAX(id) FROM calls), 0), COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'calls'), 0)),
		'` + "0000000000000000000000000000000000000000000000000000000000000000" + `', 'genesis', CAST(strftime('%s', 'now') AS INTEGER) * 1000;`,
	// The secrets a call used, by name (an empty field is left out of a
	// record's canonical form, so older records keep their hashes).
	`ALTER TABLE calls ADD COLUMN secrets TEXT NOT NULL DEFAULT '';`,
	// The daemon's signature over a retention checkpoint, and its key's ID
	// (anchor.go).
	`ALTER TABLE checkpoints ADD COLUMN sig TEXT NOT NULL DEFAULT '';
	ALTER TABLE checkpoints ADD COLUMN key TEXT NOT NULL DEFAULT '';`,
}

// signedVersion is the schema version from which checkpoints carry a signature.
const signedVersion = 4

// textColumns are the records' text columns, in one place: the row
// scanner, the insert, sealing and verify's packed read all follow it. A
// field Record gains gets its column (a migration) and its entry here.
var textColumns = []struct {
	col    string
	field  func(r *Record) *string
	sealed bool // prev and hash are the chain's, not the caller's
}{
	{"tool", func(r *Record) *string { return &r.Tool }, false},
	{"session", func(r *Record) *string { return &r.Session }, false},
	{"origin", func(r *Record) *string { return &r.Origin }, false},
	{"outcome", func(r *Record) *string { return &r.Outcome }, false},
	{"code", func(r *Record) *string { return &r.Code }, false},
	{"approval", func(r *Record) *string { return &r.Approval }, false},
	{"secrets", func(r *Record) *string { return &r.Secrets }, false},
	{"prev", func(r *Record) *string { return &r.Prev }, true},
	{"hash", func(r *Record) *string { return &r.Hash }, true},
}

// recordCols are the columns scanRecord reads, in its order.
var recordCols = func() string {
	cols := []string{"id", "ts", "duration_ms"}
	for _, c := range textColumns {
		cols = append(cols, c.col)
	}
	return strings.Join(cols, ", ")
}()

// scanRecord reads one row of recordCols.
func scanRecord(sc interface{ Scan(...any) error }, r *Record) error {
	var ts int64
	dst := make([]any, 0, 3+len(textColumns))
	dst = append(dst, &r.ID, &ts, &r.DurationMs)
	for _, c := range textColumns {
		dst = append(dst, c.field(r))
	}
	if err := sc.Scan(dst...); err != nil {
		return err
	}
	r.Time = time.UnixMilli(ts).UTC()
	return nil
}

// insertSQL writes one row of recordCols.
var insertSQL = `INSERT INTO calls(` + recordCols + `) VALUES (?` + strings.Repeat(", ?", 2+len(textColumns)) + `)`

func insertArgs(r *Record) []any {
	args := make([]any, 0, 3+len(textColumns))
	args = append(args, r.ID, r.Time.UnixMilli(), r.DurationMs)
	for _, c := range textColumns {
		args = append(args, *c.field(r))
	}
	return args
}

func migrate(db *sql.DB) error {
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
		version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`); err != nil {
		return fmt.Errorf("audit: migrations table: %w", err)
	}
	var have int
	if err := db.QueryRow(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&have); err != nil {
		return fmt.Errorf("audit: schema version: %w", err)
	}
	if have > len(migrations) {
		return fmt.Errorf("audit: database schema version %d is newer than this torii (%d); upgrade torii", have, len(migrations))
	}
	for v := have + 1; v <= len(migrations); v++ {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(migrations[v-1]); err != nil {
			tx.Rollback()
			return fmt.Errorf("audit: migration %d: %w", v, err)
		}
		if _, err := tx.Exec(`INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)`, v, time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("audit: migration %d: %w", v, err)
		}
	}
	return nil
}

// SchemaVersion is the database's applied migration version.
func (s *Store) SchemaVersion() (int, error) {
	var v int
	err := s.db.QueryRow(`SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v)
	return v, err
}
