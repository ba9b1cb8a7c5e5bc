package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"strings"
)

// What a ChainError found.
const (
	ProblemAltered          = "altered"           // a record's fields do not give its hash
	ProblemBrokenLink       = "broken_link"       // a record's prev is not the hash of the record before it
	ProblemMissing          = "missing"           // a record is not there (deleted)
	ProblemOutOfOrder       = "out_of_order"      // records are not in chain order
	ProblemBeforeCheckpoint = "before_checkpoint" // a chained record at or before the checkpoint the chain starts from
	ProblemHeadMismatch     = "head_mismatch"     // the newest record is not the head the export (or the daemon) names
	ProblemNoCheckpoint     = "no_checkpoint"     // nothing says where the chain starts
	ProblemTruncated        = "truncated"         // an export cut short
	ProblemNotExport        = "not_export"        // not a torii JSON export (or a malformed one)
	ProblemNotChained       = "not_chained"       // a database from before the chain
)

// ChainError is a chain that does not verify: the first broken link (the
// lowest record id at fault), what is wrong there and what to do.
type ChainError struct {
	Seq     int64  // the record at fault; 0 when none is
	Problem string // a Problem* constant
	Detail  string
}

func (e *ChainError) Error() string {
	s := "audit chain broken"
	if e.Seq > 0 {
		s += fmt.Sprintf(" at record %d", e.Seq)
	}
	return s + " (" + e.Problem + "): " + e.Detail + " — " + e.Next()
}

// Next is the step to take.
func (e *ChainError) Next() string {
	switch e.Problem {
	case ProblemTruncated:
		return "the file was cut short: export again with `torii audit --format json --limit 0 --out FILE`"
	case ProblemNotExport:
		return "verify a JSON export made with `torii audit --format json --limit 0 --out FILE`"
	case ProblemNotChained:
		return "start the daemon once (`torii serve`) to add the chain to it"
	case ProblemNoCheckpoint:
		return "keep the file as evidence; to start a new chain, `torii stop` and move audit.db aside"
	}
	before := "no record before it can be trusted either"
	if e.Seq > 1 {
		before = fmt.Sprintf("records before %d verify", e.Seq)
	}
	return before + "; treat " + fmt.Sprint(e.Seq) + " and later as untrusted, keep the file as evidence and compare with a saved export (`torii audit verify --file EXPORT`)"
}

// Report is a chain that verified.
type Report struct {
	Records    int64      `json:"records"` // chained records verified
	Legacy     int64      `json:"legacy"`  // records from before the chain (at or before genesis), not covered
	Head       Link       `json:"head"`
	Checkpoint Checkpoint `json:"checkpoint"`
	Complete   bool       `json:"complete"` // every kept record (an export can hold a selection)
}

// VerifyFile verifies the audit database at path, read-only: the daemon
// may run and write meanwhile (the walk reads one snapshot).
func VerifyFile(ctx context.Context, path string) (Report, error) {
	if _, err := os.Stat(path); err != nil {
		return Report{}, fmt.Errorf("audit: no database at %s (the daemon creates it when it starts): %w", path, err)
	}
	if strings.ContainsAny(path, "?#") {
		return Report{}, fmt.Errorf("audit: database path must not contain ? or #")
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return Report{}, err
	}
	defer db.Close()
	return verifyDB(ctx, db)
}

// Verify verifies the store's chain (records queued before it included).
func (s *Store) Verify(ctx context.Context) (Report, error) {
	if err := s.Flush(ctx); err != nil {
		return Report{}, err
	}
	return verifyDB(ctx, s.db)
}

func verifyDB(ctx context.Context, db *sql.DB) (Report, error) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Report{}, err
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return Report{}, fmt.Errorf("audit: not an audit database: %w", err)
	}
	if v < 2 {
		return Report{}, &ChainError{Problem: ProblemNotChained, Detail: fmt.Sprintf("the database is at schema version %d, from before the chain", v)}
	}
	cp, err := latestCheckpoint(ctx, tx)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Checkpoint: cp, Head: cp.Link, Complete: true}
	rows, err := tx.QueryContext(ctx, `SELECT `+recordCols+` FROM calls ORDER BY id`)
	if err != nil {
		return Report{}, err
	}
	defer rows.Close()
	w := newWalk(cp)
	var r Record
	for rows.Next() {
		if err := scanRecord(rows, &r); err != nil {
			return Report{}, err
		}
		if r.Hash == "" && r.ID <= cp.Seq && cp.Kind == CheckpointGenesis {
			rep.Legacy++
			continue
		}
		if err := w.next(&r, HashRecord(&r)); err != nil {
			return Report{}, err
		}
	}
	if err := rows.Err(); err != nil {
		return Report{}, err
	}
	rep.Records, rep.Head = w.n, w.head
	return rep, nil
}

// walk checks records in ascending chain order from a checkpoint.
type walk struct {
	cp   Checkpoint
	head Link
	n    int64
}

func newWalk(cp Checkpoint) *walk { return &walk{cp: cp, head: cp.Link} }

// next checks r (whose recomputed hash is sum) follows the head.
func (w *walk) next(r *Record, sum string) error {
	switch {
	case r.ID <= w.head.Seq && r.ID <= w.cp.Seq:
		return &ChainError{Seq: r.ID, Problem: ProblemBeforeCheckpoint, Detail: fmt.Sprintf("a record lies at or before the checkpoint (%d) the kept chain starts from", w.cp.Seq)}
	case r.ID <= w.head.Seq:
		return &ChainError{Seq: r.ID, Problem: ProblemOutOfOrder, Detail: fmt.Sprintf("it comes after record %d", w.head.Seq)}
	case r.ID > w.head.Seq+1:
		return &ChainError{Seq: w.head.Seq + 1, Problem: ProblemMissing, Detail: fmt.Sprintf("records %d to %d are not there (deleted); the next kept one is %d", w.head.Seq+1, r.ID-1, r.ID)}
	case sum != r.Hash:
		return &ChainError{Seq: r.ID, Problem: ProblemAltered, Detail: "its fields do not give its hash: the record was edited, or swapped with another"}
	case r.Prev != w.head.Hash:
		what := fmt.Sprintf("record %d's hash", w.head.Seq)
		if w.head.Seq == w.cp.Seq {
			what = fmt.Sprintf("the %s checkpoint's hash", w.cp.Kind)
		}
		return &ChainError{Seq: r.ID, Problem: ProblemBrokenLink, Detail: "its prev is not " + what + ": a record was replaced, or the chain rewritten from here"}
	}
	w.head = Link{Seq: r.ID, Hash: r.Hash}
	w.n++
	return nil
}

// errAs is errors.As for a *ChainError.
func errAs(err error) (*ChainError, bool) {
	var ce *ChainError
	ok := errors.As(err, &ce)
	return ce, ok
}
