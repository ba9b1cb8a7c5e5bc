// Package audit is the daemon's durable, metadata-only record of browser
// tool calls (docs/audit.md): one row per call with the time, tool, session
// label, origin, outcome, error code, duration and approval decision, in a
// SQLite database (pure Go, modernc.org/sqlite) in the state directory.
//
// SECURITY I-31: a Record has no field that could carry a call's arguments,
// typed text, page content or result, and nothing here accepts them.
// SECURITY I-32: the database file (and its WAL and shared-memory files) is
// mode 0600 in the 0700 state directory; rows older than the retention age,
// and rows past the retention count, are deleted on a timer.
package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/torii-browser/torii/internal/pairing"
)

// Defaults of the retention policy (config.json "audit").
const (
	DefaultMaxAge   = 30 * 24 * time.Hour
	DefaultMaxRows  = 100_000
	DefaultInterval = 10 * time.Minute
	// queueLen bounds records waiting for the writer; past it records are
	// dropped (and counted) rather than slow a tool call down.
	queueLen = 4096
	// MaxLimit caps one Query page (the control socket answers one line).
	MaxLimit = 5000
)

// Outcomes.
const (
	OutcomeOK    = "ok"
	OutcomeError = "error"
	// OutcomeRefused: the team gateway refused the call before it reached a
	// browser's broker (no browser, not the user's, draining); nothing ran.
	// The one-machine daemon never writes it (its refusals pass its broker).
	OutcomeRefused = "refused"
)

// Record is one tool call. Only metadata: see SECURITY I-31.
type Record struct {
	ID         int64     `json:"id"`
	Time       time.Time `json:"time"`
	Tool       string    `json:"tool"`
	Session    string    `json:"session"`
	Origin     string    `json:"origin"`
	Outcome    string    `json:"outcome"`
	Code       string    `json:"code"`
	DurationMs int64     `json:"durationMs"`
	Approval   string    `json:"approval"`
	// Secrets names the person's secrets the call used, "NAME on ORIGIN"
	// (SECURITY I-69): names, never values; "" for none.
	Secrets string `json:"secrets,omitempty"`
	// Prev and Hash chain the record to the one before it (chain.go).
	Prev string `json:"prev"`
	Hash string `json:"hash"`
}

// Options configure a Store. Zero values take the defaults.
type Options struct {
	MaxAge   time.Duration
	MaxRows  int
	Interval time.Duration // how often retention runs
	Logger   *slog.Logger
	Now      func() time.Time // tests
	// Key signs retention checkpoints and the head (SECURITY I-74): the
	// daemon's identity. Without it checkpoints are unsigned, and verify
	// reports them.
	Key *pairing.Identity
	// HeadFile is where the signed head is kept, beside the key; "" keeps none.
	HeadFile string
}

// Store is the audit database.
type Store struct {
	db   *sql.DB
	opts Options
	log  *slog.Logger

	q       chan op
	done    chan struct{}
	stop    context.CancelFunc
	mu      sync.Mutex
	closed  bool
	dropped int64

	// wmu serialises what changes the chain (appends and retention), so
	// that records from any number of sessions form one chain.
	wmu sync.Mutex
	// head is the last record written (or the checkpoint when none is
	// kept); guarded by hmu for readers outside the writer.
	hmu  sync.Mutex
	head Link

	// The signed head (anchor.go): a problem found at open freezes it as
	// evidence; headWritten is the writer's last one.
	hfMu        sync.Mutex
	headFrozen  *ChainError
	headWritten *Link
}

// op is a record to write, or a flush marker (rec nil).
type op struct {
	rec  *Record
	done chan struct{}
}

// Open opens (creating when missing) the database at path, migrates it and
// starts the writer and the retention timer.
func Open(path string, opts Options) (*Store, error) {
	if opts.MaxAge <= 0 {
		opts.MaxAge = DefaultMaxAge
	}
	if opts.MaxRows <= 0 {
		opts.MaxRows = DefaultMaxRows
	}
	if opts.Interval <= 0 {
		opts.Interval = DefaultInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("audit: database path must not contain ? or #")
	}
	// SECURITY I-32: create the file 0600 before SQLite opens it; SQLite
	// gives the -wal and -shm files the main file's mode.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit: create %s: %w", path, err)
	}
	fi, err := f.Stat()
	f.Close()
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("audit: chmod %s: %w", path, err)
		}
	}
	for _, sfx := range []string{"-wal", "-shm"} {
		if fi, err := os.Stat(path + sfx); err == nil && fi.Mode().Perm()&0o077 != 0 {
			_ = os.Chmod(path+sfx, 0o600)
		}
	}
	// cache_size: SQLite's page cache lives outside the Go heap (the library's own
	// allocator), up to 2 MiB per connection by default; the audit is append-mostly,
	// so a small cache costs queries little and keeps the daemon's memory bounded.
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=cache_size(-256)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("audit: open %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	if err := migrate(db); err != nil {
		db.Close()
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Store{db: db, opts: opts, log: log, q: make(chan op, queueLen), done: make(chan struct{}), stop: cancel}
	if err := s.loadHead(ctx); err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	if err := s.openHead(ctx); err != nil {
		cancel()
		db.Close()
		return nil, err
	}
	s.warnStart(ctx)
	if _, err := s.Prune(ctx); err != nil {
		log.Warn("audit: retention failed", "err", err)
	}
	go s.writer(ctx)
	return s, nil
}

// Add queues r for writing and never blocks: when the queue is full the
// record is dropped and counted (Dropped). Time defaults to now.
func (s *Store) Add(r Record) {
	if r.Time.IsZero() {
		r.Time = s.opts.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	select {
	case s.q <- op{rec: &r}:
	default:
		s.dropped++
		if s.dropped == 1 || s.dropped%1000 == 0 {
			s.log.Warn("audit: queue full, records dropped", "dropped", s.dropped)
		}
	}
}

// Dropped is how many records were dropped because the queue was full.
func (s *Store) Dropped() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped
}

// Flush waits until every record queued before it is written.
func (s *Store) Flush(ctx context.Context) error {
	ch := make(chan struct{})
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("audit: store closed")
	}
	select {
	case s.q <- op{done: ch}:
	case <-ctx.Done():
		s.mu.Unlock()
		return ctx.Err()
	}
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Close writes what is queued, stops the timer and closes the database.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.q)
	s.mu.Unlock()
	<-s.done
	s.stop()
	return s.db.Close()
}

// writer batches queued records into transactions and runs retention on
// its timer, and early when many rows arrived since the last run.
func (s *Store) writer(ctx context.Context) {
	defer close(s.done)
	tick := time.NewTicker(s.opts.Interval)
	defer tick.Stop()
	since := 0
	var batch []*Record
	var waiters []chan struct{}
	// SECURITY I-74: the head is signed at most every headEvery while
	// records arrive (headDue is armed while a newer one waits), and when
	// the store closes.
	var headDue <-chan time.Time
	lastHead := time.Now()
	signHead := func(stopped bool) {
		headDue, lastHead = nil, time.Now()
		if err := s.writeHead(ctx, stopped); err != nil {
			s.log.Warn("audit: sign the head", "err", err)
		}
	}
	flush := func() {
		if len(batch) > 0 {
			if err := s.insert(ctx, batch); err != nil {
				s.log.Warn("audit: write failed", "records", len(batch), "err", err)
				// A row put in by hand at the next id would fail every later
				// batch: continue after what the database holds (verify
				// shows that row as not the chain's).
				if err := s.loadHead(ctx); err != nil {
					s.log.Warn("audit: read the chain head", "err", err)
				}
			}
			since += len(batch)
			batch = batch[:0]
			if wait := headEvery - time.Since(lastHead); wait <= 0 {
				signHead(false)
			} else if headDue == nil && s.opts.Key != nil {
				headDue = time.After(wait)
			}
		}
		// Decided before the waiters wake: a woken Flush caller owns the
		// store's options again (tests change MaxRows between batches).
		due := since >= max(s.opts.MaxRows/10, 1)
		for _, w := range waiters {
			close(w)
		}
		waiters = waiters[:0]
		if due {
			since = 0
			s.prune(ctx)
		}
	}
	for {
		select {
		case o, ok := <-s.q:
			if !ok {
				flush()
				signHead(true)
				return
			}
			s.take(o, &batch, &waiters)
			// Drain what is already queued into the same transaction.
		drain:
			for len(batch) < 512 {
				select {
				case o, ok := <-s.q:
					if !ok {
						flush()
						signHead(true)
						return
					}
					s.take(o, &batch, &waiters)
				default:
					break drain
				}
			}
			flush()
		case <-tick.C:
			since = 0
			s.prune(ctx)
		case <-headDue:
			signHead(false)
		}
	}
}

func (s *Store) take(o op, batch *[]*Record, waiters *[]chan struct{}) {
	if o.rec != nil {
		*batch = append(*batch, o.rec)
	}
	if o.done != nil {
		*waiters = append(*waiters, o.done)
	}
}

func (s *Store) prune(ctx context.Context) {
	if n, err := s.Prune(ctx); err != nil {
		s.log.Warn("audit: retention failed", "err", err)
	} else if n > 0 {
		s.log.Debug("audit: retention deleted rows", "rows", n)
	}
}

// insert appends recs to the chain in one transaction. SECURITY I-70: the
// chain is extended only here, under wmu, from the head the last commit
// left, so concurrent sessions' records form one chain.
func (s *Store) insert(ctx context.Context, recs []*Record) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, insertSQL)
	if err != nil {
		tx.Rollback()
		return err
	}
	defer st.Close()
	head := s.Head()
	for _, r := range recs {
		seal(r, head)
		if _, err := st.ExecContext(ctx, insertArgs(r)...); err != nil {
			tx.Rollback()
			return err
		}
		head = Link{Seq: r.ID, Hash: r.Hash}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.setHead(head)
	return nil
}

// Head is the chain's last link: the newest record written, or the latest
// checkpoint when no chained record is kept.
func (s *Store) Head() Link {
	s.hmu.Lock()
	defer s.hmu.Unlock()
	return s.head
}

func (s *Store) setHead(l Link) {
	s.hmu.Lock()
	s.head = l
	s.hmu.Unlock()
}

// loadHead reads the head from the database at open.
func (s *Store) loadHead(ctx context.Context) error {
	cp, err := s.LatestCheckpoint(ctx)
	if err != nil {
		return err
	}
	head := cp.Link
	var l Link
	err = s.db.QueryRowContext(ctx, `SELECT id, hash FROM calls ORDER BY id DESC LIMIT 1`).Scan(&l.Seq, &l.Hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("audit: read the chain head: %w", err)
	}
	if err == nil && l.Seq > head.Seq && l.Hash != "" {
		head = l
	}
	s.setHead(head)
	return nil
}

// LatestCheckpoint is where the kept chain starts.
func (s *Store) LatestCheckpoint(ctx context.Context) (Checkpoint, error) {
	return latestCheckpoint(ctx, s.db, true)
}

// latestCheckpoint reads the latest checkpoint; signed when the database
// has the signature columns (signedVersion).
func latestCheckpoint(ctx context.Context, q interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}, signed bool) (Checkpoint, error) {
	var c Checkpoint
	err := scanCheckpoint(q.QueryRowContext(ctx, checkpointsQuery(signed)+` LIMIT 1`), &c)
	if errors.Is(err, sql.ErrNoRows) {
		return c, &ChainError{Problem: ProblemNoCheckpoint, Detail: "the database has no checkpoint, so the chain's start is unknown (the checkpoints table was emptied)"}
	}
	if err != nil {
		return c, fmt.Errorf("audit: read the checkpoint: %w", err)
	}
	return c, nil
}

// HashAt is the hash the store holds for the record seq: ok false when it
// keeps no such record (and it is not the latest checkpoint's).
func (s *Store) HashAt(ctx context.Context, seq int64) (string, bool, error) {
	var h string
	err := s.db.QueryRowContext(ctx, `SELECT hash FROM calls WHERE id = ?`, seq).Scan(&h)
	if err == nil {
		return h, true, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return "", false, err
	}
	err = s.db.QueryRowContext(ctx, `SELECT hash FROM checkpoints WHERE seq = ?`, seq).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	return h, err == nil, err
}

// clip bounds a field: they are names and codes, never free text.
func clip(s string) string {
	const maxField = 256
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, unitSep) >= 0 { // verify's packed read splits on it
		s = strings.ReplaceAll(s, string(rune(unitSep)), "\uFFFD")
	}
	if len(s) <= maxField {
		return s
	}
	return strings.ToValidUTF8(s[:maxField], "")
}

// Prune applies the retention policy now: the oldest rows, up to the first
// one newer than MaxAge, and those past MaxRows. It returns how many rows
// it deleted. SECURITY I-70: it deletes only from the start of the chain
// and, in the same transaction, records the last deleted record's hash as
// the checkpoint the kept chain is verified from.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	cutoff := s.opts.Now().Add(-s.opts.MaxAge).UnixMilli()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	var maxID, firstNew sql.NullInt64
	if err := tx.QueryRowContext(ctx, `SELECT MAX(id) FROM calls`).Scan(&maxID); err != nil || !maxID.Valid {
		return 0, err
	}
	if err := tx.QueryRowContext(ctx, `SELECT MIN(id) FROM calls WHERE ts >= ?`, cutoff).Scan(&firstNew); err != nil {
		return 0, err
	}
	upTo := maxID.Int64 // every row is older than MaxAge
	if firstNew.Valid {
		upTo = firstNew.Int64 - 1
	}
	var byCount int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM calls ORDER BY id DESC LIMIT 1 OFFSET ?`, s.opts.MaxRows).Scan(&byCount)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, err
	}
	upTo = max(upTo, byCount)
	var last Link
	err = tx.QueryRowContext(ctx, `SELECT id, hash FROM calls WHERE id <= ? ORDER BY id DESC LIMIT 1`, upTo).Scan(&last.Seq, &last.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	r, err := tx.ExecContext(ctx, `DELETE FROM calls WHERE id <= ?`, last.Seq)
	if err != nil {
		return 0, err
	}
	if last.Hash != "" { // rows from before the chain need none: genesis is after them
		// SECURITY I-74: signed, so that no one without the key can write one.
		cp := Checkpoint{Link: last, Kind: CheckpointRetention, At: time.UnixMilli(s.opts.Now().UnixMilli()).UTC()}
		if err := signCheckpoint(s.opts.Key, &cp); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO checkpoints(seq, hash, kind, at, sig, key) VALUES (?, ?, ?, ?, ?, ?)`,
			cp.Seq, cp.Hash, cp.Kind, cp.At.UnixMilli(), cp.Sig, cp.Key); err != nil {
			return 0, err
		}
		// The latest checkpoints are enough to verify from; keep a bounded history.
		if _, err := tx.ExecContext(ctx, `DELETE FROM checkpoints WHERE kind = ? AND seq < (SELECT seq FROM checkpoints
			WHERE kind = ? ORDER BY seq DESC LIMIT 1 OFFSET 99)`, CheckpointRetention, CheckpointRetention); err != nil {
			return 0, err
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	n, _ := r.RowsAffected()
	return n, nil
}
