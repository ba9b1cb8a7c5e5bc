package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
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
	// SECURITY I-74 (anchor.go):
	ProblemCheckpointForged  = "checkpoint_forged"   // a checkpoint the daemon's key did not sign
	ProblemCheckpointMissing = "checkpoint_missing"  // records before the first kept one are gone, and no checkpoint says retention removed them
	ProblemSignedHeadInvalid = "signed_head_invalid" // the signed head beside the key is not the daemon's
	ProblemNoKey             = "no_key"              // no daemon key to check a signature with
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
		return "keep the file as evidence; to start a new chain, `torii stop` and move audit.db and audit.head aside"
	case ProblemCheckpointForged, ProblemCheckpointMissing:
		return "records were deleted from the start of the chain by someone other than the daemon's retention: keep audit.db as evidence " +
			"and compare with a saved export (`torii audit verify --file EXPORT`); to start a new chain, `torii stop` and move audit.db and audit.head aside"
	case ProblemSignedHeadInvalid:
		return "keep audit.head and audit.db as evidence; if you replaced daemon.key yourself, `torii stop` and move audit.head aside (the daemon signs a new one)"
	case ProblemNoKey:
		return "run `torii audit verify` as the user whose daemon wrote the database: its daemon.key checks the signature"
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
	// SignedHead is the head the daemon signed that the database was
	// checked against (SECURITY I-74); nil when none was.
	SignedHead *Link `json:"signedHead,omitempty"`
}

// VerifyOptions are what the chain's ends are checked against (SECURITY
// I-74, anchor.go).
type VerifyOptions struct {
	// PublicKey is the daemon's (65 bytes, uncompressed P-256): every
	// retention checkpoint must carry its signature.
	PublicKey []byte
	// HeadFile is the signed head the daemon keeps beside its key; "" checks
	// none (a copy of the database, which may be older than the head).
	HeadFile string
}

// openReadOnly opens the database at path read-only, with extra pragmas.
func openReadOnly(path, pragmas string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("audit: no database at %s (the daemon creates it when it starts): %w", path, err)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("audit: database path must not contain ? or #")
	}
	return sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)"+pragmas)
}

// VerifyFile verifies the audit database at path, read-only: the daemon
// may run and write meanwhile (the walk reads one snapshot).
func VerifyFile(ctx context.Context, path string, o VerifyOptions) (Report, error) {
	// mmap: a walk reads every page once; mapping them saves a copy each.
	db, err := openReadOnly(path, "&_pragma=mmap_size(1073741824)")
	if err != nil {
		return Report{}, err
	}
	defer db.Close()
	return verifyDB(ctx, db, o)
}

func schemaVersion(ctx context.Context, db *sql.DB) (int, error) {
	var v int
	if err := db.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return 0, fmt.Errorf("audit: not an audit database: %w", err)
	}
	return v, nil
}

// HashInFile is the hash the database at path holds for record seq (ok
// false when it holds no such record), read-only.
func HashInFile(ctx context.Context, path string, seq int64) (string, bool, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return "", false, err
	}
	defer db.Close()
	var h string
	err = db.QueryRowContext(ctx, `SELECT hash FROM calls WHERE id = ?`, seq).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return h, err == nil, err
}

// Verify verifies the store's chain (records queued before it included)
// against its own key and signed head.
func (s *Store) Verify(ctx context.Context) (Report, error) {
	if err := s.Flush(ctx); err != nil {
		return Report{}, err
	}
	return verifyDB(ctx, s.db, VerifyOptions{PublicKey: s.publicKey(), HeadFile: s.opts.HeadFile})
}

func verifyDB(ctx context.Context, db *sql.DB, o VerifyOptions) (Report, error) {
	// SECURITY I-74: the signed head is read before the database: the
	// daemon signs a head only once the database holds it, so every
	// snapshot read after holds it too (or retention has passed it).
	var sh *SignedHead
	if o.HeadFile != "" {
		var ce *ChainError
		if sh, ce = loadSignedHead(o.HeadFile, o.PublicKey); ce != nil {
			return Report{}, ce
		}
	}
	rep, err := verifyOnce(ctx, db, o.PublicKey)
	// The ranges are read in separate snapshots: retention running in
	// between can look like a gap. Then the checkpoint moved; again, a few
	// times at most.
	for range 4 {
		if _, broken := err.(*ChainError); !broken {
			break
		}
		if cp, cerr := latestCheckpoint(ctx, db, rep.signed); cerr != nil || cp.Seq == rep.Checkpoint.Seq {
			break
		}
		rep, err = verifyOnce(ctx, db, o.PublicKey)
	}
	if err != nil || sh == nil {
		return rep.Report, err
	}
	ce, err := sh.against(ctx, db, rep.Checkpoint, rep.Head)
	if err != nil {
		return rep.Report, err
	}
	if ce != nil && sh.Stopped {
		// The daemon may have started, and written, since the head was read:
		// then it signed a newer one, and the running daemon is the check.
		if now, err := ReadSignedHead(o.HeadFile); err == nil && now.Sig != sh.Sig {
			return rep.Report, nil
		}
	}
	if ce != nil {
		return rep.Report, ce
	}
	rep.SignedHead = &sh.Head
	return rep.Report, nil
}

// walked is a verified chain and whether its database has signatures.
type walked struct {
	Report
	signed bool
}

// verifyOnce splits the chain into contiguous id ranges verified in
// parallel (reading rows is most of the cost), then checks the links
// between the ranges, in order, so the error is the first broken link.
func verifyOnce(ctx context.Context, db *sql.DB, pub []byte) (walked, error) {
	v, err := schemaVersion(ctx, db)
	if err != nil {
		return walked{}, err
	}
	if v < 2 {
		return walked{}, &ChainError{Problem: ProblemNotChained, Detail: fmt.Sprintf("the database is at schema version %d, from before the chain", v)}
	}
	signed := v >= signedVersion
	rep, err := verifyChain(ctx, db, pub, signed)
	return walked{rep, signed}, err
}

func verifyChain(ctx context.Context, db *sql.DB, pub []byte, signed bool) (Report, error) {
	// The ranges are planned from this checkpoint; the first range reads
	// the one it walks from in its own snapshot.
	cp, err := latestCheckpoint(ctx, db, signed)
	if err != nil {
		return Report{}, err
	}
	var maxID sql.NullInt64
	if err := db.QueryRowContext(ctx, `SELECT MAX(id) FROM calls`).Scan(&maxID); err != nil {
		return Report{}, err
	}
	if !maxID.Valid {
		maxID.Int64 = cp.Seq // no record: the first range still checks the checkpoints
	}
	n := min(runtime.GOMAXPROCS(0), 4)
	if verifyParts > 0 {
		n = verifyParts
	}
	span := maxID.Int64 - cp.Seq
	if span < verifyMinSpan {
		n = 1
	}
	parts := make([]rangeResult, n)
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		lo, hi := cp.Seq+1+span*int64(k)/int64(n), cp.Seq+span*int64(k+1)/int64(n)
		if k == 0 {
			lo = math.MinInt64 // the first range also reads what lies before the checkpoint
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var start *startCheck
			if k == 0 {
				start = &startCheck{pub: pub, signed: signed}
			}
			parts[k] = verifyRange(ctx, db, cp, lo, hi, start)
		}()
	}
	wg.Wait()
	if p := parts[0]; p.ioErr == nil && p.cp != nil {
		cp = *p.cp
	}
	rep := Report{Checkpoint: cp, Head: cp.Link, Complete: true}
	carry := cp.Link
	for k, p := range parts {
		if p.ioErr != nil {
			return rep, p.ioErr
		}
		if k > 0 && p.n > 0 {
			switch {
			case p.first.Seq > carry.Seq+1:
				return rep, gap(carry, cp, p.first.Seq)
			case p.first.Hash != carry.Hash:
				return rep, badPrev(p.first.Seq, p.first.Hash, carry, cp)
			}
		}
		if p.err != nil {
			return rep, p.err
		}
		if p.n > 0 {
			carry = p.last
		}
		rep.Records += p.n
		rep.Legacy += p.legacy
	}
	rep.Head = carry
	return rep, nil
}

// How verify splits a chain: ranges only past verifyMinSpan records;
// verifyParts (tests) overrides the number of ranges.
var (
	verifyMinSpan int64 = 100_000
	verifyParts   int
)

// rangeResult is one range's walk: first is its first record's id and
// prev, last its last record's link; cp the checkpoint the first range
// walked from.
type rangeResult struct {
	first, last Link
	n, legacy   int64
	cp          *Checkpoint
	err         error // the range's first broken link
	ioErr       error
}

// startCheck is what the first range checks, in its snapshot, before its
// records: the checkpoints (SECURITY I-74).
type startCheck struct {
	pub    []byte
	signed bool
}

func verifyRange(ctx context.Context, db *sql.DB, cp Checkpoint, lo, hi int64, start *startCheck) (res rangeResult) {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return rangeResult{ioErr: err}
	}
	defer tx.Rollback()
	var w *walk
	if start != nil {
		// Where the chain starts, read in the snapshot its first records are
		// read in: retention running meanwhile cannot look like a gap.
		if cp, err = latestCheckpoint(ctx, tx, start.signed); err != nil {
			if _, broken := err.(*ChainError); broken {
				return rangeResult{err: err}
			}
			return rangeResult{ioErr: err}
		}
		res.cp = &cp
		// SECURITY I-74: the chain starts where a checkpoint the daemon signed says.
		ce, err := checkCheckpoints(ctx, tx, start.pub, start.signed)
		if err != nil {
			return rangeResult{ioErr: err}
		}
		if ce != nil {
			return rangeResult{cp: &cp, err: ce}
		}
		w = newWalk(cp)
	}
	// One packed text column per row: the driver's per-column cost is most
	// of a verify's time.
	rows, err := tx.QueryContext(ctx, packedSelect, lo, hi)
	if err != nil {
		return rangeResult{ioErr: err}
	}
	defer rows.Close()
	var r Record
	var ts int64
	var packed sql.NullString
	buf := make([]byte, 0, 512)
	for rows.Next() {
		if err := rows.Scan(&r.ID, &ts, &r.DurationMs, &packed); err != nil {
			return rangeResult{ioErr: err}
		}
		r.Time = time.UnixMilli(ts).UTC()
		whole := unpack(&r, packed)
		if r.Hash == "" && r.ID <= cp.Seq && cp.Kind == CheckpointGenesis {
			res.legacy++
			continue
		}
		if w == nil { // a later range starts where its first record says; the caller checks the seam
			res.first = Link{Seq: r.ID, Hash: r.Prev}
			w = &walk{cp: cp, head: Link{Seq: r.ID - 1, Hash: r.Prev}}
		}
		var ok bool
		buf, ok = hashMatches(buf, &r)
		if err := w.next(&r, ok && whole); err != nil {
			res.err = err
			break
		}
	}
	if err := rows.Err(); err != nil {
		return rangeResult{ioErr: err}
	}
	if w != nil {
		res.n, res.last = w.n, w.head
	}
	return res
}

// walk checks records in ascending chain order from a checkpoint.
type walk struct {
	cp   Checkpoint
	head Link
	n    int64
}

func newWalk(cp Checkpoint) *walk { return &walk{cp: cp, head: cp.Link} }

// next checks r (whose fields give its hash when hashOK) follows the head.
func (w *walk) next(r *Record, hashOK bool) error {
	switch {
	case r.ID <= w.head.Seq && r.ID <= w.cp.Seq:
		return &ChainError{Seq: r.ID, Problem: ProblemBeforeCheckpoint, Detail: fmt.Sprintf("a record lies at or before the checkpoint (%d) the kept chain starts from", w.cp.Seq)}
	case r.ID <= w.head.Seq:
		return &ChainError{Seq: r.ID, Problem: ProblemOutOfOrder, Detail: fmt.Sprintf("it comes after record %d", w.head.Seq)}
	case r.ID > w.head.Seq+1:
		return gap(w.head, w.cp, r.ID)
	case !hashOK:
		return &ChainError{Seq: r.ID, Problem: ProblemAltered, Detail: "its fields do not give its hash: the record was edited, or swapped with another"}
	case r.Prev != w.head.Hash:
		return badPrev(r.ID, r.Prev, w.head, w.cp)
	}
	w.head = Link{Seq: r.ID, Hash: r.Hash}
	w.n++
	return nil
}

func brokenLink(seq int64, before Link, cp Checkpoint) *ChainError {
	if before.Seq == cp.Seq {
		return &ChainError{Seq: seq, Problem: ProblemBrokenLink, Detail: fmt.Sprintf("its prev is not the %s checkpoint's hash: the checkpoint does not match the record after it (the record was replaced, or the chain rewritten from here)", cp.Kind)}
	}
	return &ChainError{Seq: seq, Problem: ProblemBrokenLink, Detail: fmt.Sprintf("its prev is not record %d's hash: a record was replaced, or the chain rewritten from here", before.Seq)}
}

// unitSep separates the text columns in verify's packed read; sealed
// fields never hold it (clip).
const unitSep = 0x1f

var packedSelect = func() string {
	var cols []string
	for _, c := range textColumns {
		cols = append(cols, c.col)
	}
	return `SELECT id, ts, duration_ms, ` + strings.Join(cols, " || char(31) || ") + ` FROM calls WHERE id BETWEEN ? AND ? ORDER BY id`
}()

// unpack sets r's text fields from a packed row; false when the row does
// not split into them (a NULL or a separator put in by hand).
func unpack(r *Record, p sql.NullString) bool {
	rest := p.String
	whole := p.Valid
	for i, c := range textColumns {
		v := rest
		if i < len(textColumns)-1 {
			var ok bool
			v, rest, ok = strings.Cut(rest, string(rune(unitSep)))
			whole = whole && ok
		}
		*c.field(r) = v
	}
	return whole
}
