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
}

// Options configure a Store. Zero values take the defaults.
type Options struct {
	MaxAge   time.Duration
	MaxRows  int
	Interval time.Duration // how often retention runs
	Logger   *slog.Logger
	Now      func() time.Time // tests
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
}

// op is a record to write, or a flush marker (rec nil).
type op struct {
	rec  *Record
	done chan struct{}
}

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
	if _, err := s.Prune(ctx); err != nil {
		log.Warn("audit: retention failed", "err", err)
	}
	go s.writer(ctx)
	return s, nil
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
	flush := func() {
		if len(batch) > 0 {
			if err := s.insert(ctx, batch); err != nil {
				s.log.Warn("audit: write failed", "records", len(batch), "err", err)
			}
			since += len(batch)
			batch = batch[:0]
		}
		for _, w := range waiters {
			close(w)
		}
		waiters = waiters[:0]
		if since >= max(s.opts.MaxRows/10, 1) {
			since = 0
			s.prune(ctx)
		}
	}
	for {
		select {
		case o, ok := <-s.q:
			if !ok {
				flush()
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

func (s *Store) insert(ctx context.Context, recs []*Record) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO calls(ts, tool, session, origin, outcome, code, duration_ms, approval)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		tx.Rollback()
		return err
	}
	defer st.Close()
	for _, r := range recs {
		if _, err := st.ExecContext(ctx, r.Time.UnixMilli(), clip(r.Tool), clip(r.Session), clip(r.Origin),
			clip(r.Outcome), clip(r.Code), r.DurationMs, clip(r.Approval)); err != nil {
			tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

// clip bounds a field: they are names and codes, never free text.
func clip(s string) string {
	const maxField = 256
	if len(s) <= maxField {
		return s
	}
	return strings.ToValidUTF8(s[:maxField], "")
}

// Prune applies the retention policy now: rows older than MaxAge, then the
// oldest rows past MaxRows. It returns how many rows it deleted.
func (s *Store) Prune(ctx context.Context) (int64, error) {
	cutoff := s.opts.Now().Add(-s.opts.MaxAge).UnixMilli()
	r1, err := s.db.ExecContext(ctx, `DELETE FROM calls WHERE ts < ?`, cutoff)
	if err != nil {
		return 0, err
	}
	r2, err := s.db.ExecContext(ctx, `DELETE FROM calls WHERE id <= (SELECT id FROM calls ORDER BY id DESC LIMIT 1 OFFSET ?)`, s.opts.MaxRows)
	if err != nil {
		return 0, err
	}
	n1, _ := r1.RowsAffected()
	n2, _ := r2.RowsAffected()
	return n1 + n2, nil
}
