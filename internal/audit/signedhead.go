package audit

// The signed head (SECURITY I-74): the daemon's newest record's link,
// signed with its key and kept in a file beside it, so that records
// deleted from the end of audit.db, or a chain rewritten up to its end,
// show while the daemon is stopped.

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"time"

	"github.com/torii-browser/torii/internal/atomicfile"
	"github.com/torii-browser/torii/internal/pairing"
)

// HeadFormat names the signed-head file's format.
const HeadFormat = "torii-audit-head"

// headEvery bounds how often the daemon rewrites the signed head while
// records arrive; it writes the last one when it stops.
var headEvery = 2 * time.Second

// maxHeadFile bounds what is read of a signed-head file.
const maxHeadFile = 4096

// SignedHead is the file the daemon keeps beside its key: its newest
// record's link, signed (SECURITY I-74).
type SignedHead struct {
	Format  string    `json:"format"`
	Version int       `json:"version"`
	Key     string    `json:"key"` // the signer's daemon ID
	Head    Link      `json:"head"`
	At      time.Time `json:"at"`
	// Stopped: the daemon wrote it as it stopped, so no record after it is
	// the daemon's until it starts again.
	Stopped bool   `json:"stopped,omitempty"`
	Sig     string `json:"sig"`
}

func headMessage(h SignedHead) []byte {
	b := []byte(headLabel)
	b = appendPair(b, "seq", strconv.FormatInt(h.Head.Seq, 10))
	b = appendPair(b, "hash", h.Head.Hash)
	b = appendPair(b, "at", strconv.FormatInt(h.At.UnixMilli(), 10))
	if h.Stopped {
		b = appendPair(b, "stopped", "1")
	}
	return b
}

// ReadSignedHead reads a signed-head file; a missing one is an error that
// wraps fs.ErrNotExist.
func ReadSignedHead(path string) (SignedHead, error) {
	var h SignedHead
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxHeadFile+1))
	if err != nil {
		return h, err
	}
	if len(b) > maxHeadFile {
		return h, fmt.Errorf("over %d bytes", maxHeadFile)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, err
	}
	if h.Format != HeadFormat || h.Version != 1 {
		return h, fmt.Errorf("not a %s version 1 file", HeadFormat)
	}
	return h, nil
}

// signedHeadProblem is a signed-head file that the daemon's key did not
// write as it stands.
func signedHeadProblem(path, why string) *ChainError {
	return &ChainError{Problem: ProblemSignedHeadInvalid, Detail: "signed head invalid: " + path + " " + why}
}

// check reports a head not signed by the key pub.
func (h SignedHead) check(path string, pub []byte) *ChainError {
	sig, err := hex.DecodeString(h.Sig)
	switch {
	case err != nil || len(sig) != 64:
		return signedHeadProblem(path, "has no signature of 64 bytes (cut short or altered)")
	case len(pub) == 0:
		return &ChainError{Problem: ProblemNoKey, Detail: "signed head not checked: there is no daemon key to check " + path + " with"}
	case h.Key != pairing.KeyID(pub):
		return signedHeadProblem(path, fmt.Sprintf("names key %.40q, not this daemon's key %s", h.Key, pairing.KeyID(pub)))
	case !pairing.Verify(pub, headMessage(h), sig):
		return signedHeadProblem(path, "is not signed by this daemon's key "+pairing.KeyID(pub)+" (it was edited)")
	}
	return nil
}

// loadSignedHead reads and checks the file at path: nil when there is none.
func loadSignedHead(path string, pub []byte) (*SignedHead, *ChainError) {
	h, err := ReadSignedHead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, signedHeadProblem(path, "cannot be read: "+err.Error())
	}
	if ce := h.check(path, pub); ce != nil {
		return nil, ce
	}
	return &h, nil
}

// against checks that the database still holds the head the daemon signed:
// cp is where the kept chain starts and newest its newest record (cp when
// none is kept). Retention may have deleted the signed head since.
func (h SignedHead) against(ctx context.Context, q querier, cp Checkpoint, newest Link) (*ChainError, error) {
	a := h.Head
	when := h.At.Format(time.RFC3339)
	switch {
	case a.Seq < cp.Seq:
		return nil, nil
	case a.Seq == cp.Seq && a.Hash != cp.Hash:
		return &ChainError{Seq: a.Seq, Problem: ProblemHeadMismatch, Detail: fmt.Sprintf("the checkpoint at record %d is not the record the daemon signed as its head on %s", a.Seq, when)}, nil
	case a.Seq == cp.Seq:
		return added(h, newest, when), nil
	case a.Seq > newest.Seq:
		return &ChainError{Seq: newest.Seq + 1, Problem: ProblemMissing, Detail: fmt.Sprintf("records after %d were deleted: the daemon signed its head at record %d on %s", newest.Seq, a.Seq, when)}, nil
	}
	var hash string
	err := q.QueryRowContext(ctx, `SELECT hash FROM calls WHERE id = ?`, a.Seq).Scan(&hash)
	if errors.Is(err, sql.ErrNoRows) {
		// Read after verify's walk, which held it: the daemon's retention
		// may have deleted it since, leaving a checkpoint at or past it.
		var seq int64
		err = q.QueryRowContext(ctx, `SELECT seq, hash FROM checkpoints WHERE seq >= ? ORDER BY seq LIMIT 1`, a.Seq).Scan(&seq, &hash)
		if err == nil && seq > a.Seq {
			return nil, nil
		}
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return &ChainError{Seq: a.Seq, Problem: ProblemMissing, Detail: fmt.Sprintf("record %d, which the daemon signed as its head on %s, is not there", a.Seq, when)}, nil
	case err != nil:
		return nil, err
	case hash != a.Hash:
		return &ChainError{Seq: a.Seq, Problem: ProblemHeadMismatch, Detail: fmt.Sprintf("record %d is not the one the daemon signed as its head on %s: the chain was rewritten up to it", a.Seq, when)}, nil
	}
	return added(h, newest, when), nil
}

// added is records after a head signed as the daemon stopped: none is the
// daemon's.
func added(h SignedHead, newest Link, when string) *ChainError {
	if !h.Stopped || newest.Seq <= h.Head.Seq {
		return nil
	}
	return &ChainError{Seq: h.Head.Seq + 1, Problem: ProblemHeadMismatch, Detail: fmt.Sprintf(
		"records %d to %d were added while the daemon was stopped: it signed its head at record %d as it stopped on %s", h.Head.Seq+1, newest.Seq, h.Head.Seq, when)}
}

// openHead runs at open, before retention. Without a signed head yet (a new
// state directory, or a database a torii before signatures wrote) the
// daemon takes the retention checkpoints it finds as its own and signs
// them: trust on first use, as the person's own copy of what was there. A
// signed head the database contradicts is kept as it is, as evidence, and
// no later head replaces it; `status`, `doctor` and `verify` report it
// until the person moves the file aside.
func (s *Store) openHead(ctx context.Context) error {
	if s.opts.Key == nil || s.opts.HeadFile == "" {
		return nil
	}
	sh, ce := loadSignedHead(s.opts.HeadFile, s.publicKey())
	if ce == nil && sh == nil {
		n, err := s.adoptCheckpoints(ctx)
		if err != nil {
			return err
		}
		if n > 0 {
			s.log.Info("audit: signed the retention checkpoints found before any signed head", "checkpoints", n)
		}
	}
	if ce == nil && sh != nil {
		cp, err := s.LatestCheckpoint(ctx)
		if err != nil {
			return err
		}
		newest, err := newestLink(ctx, s.db, cp)
		if err != nil {
			return err
		}
		if ce, err = sh.against(ctx, s.db, cp, newest); err != nil {
			return err
		}
	}
	if ce != nil {
		s.hfMu.Lock()
		s.headFrozen = ce
		s.hfMu.Unlock()
		s.log.Warn("audit: the database is not what the daemon signed; the signed head is kept as evidence", "problem", ce.Detail,
			"fix", "run `torii audit verify`; "+ce.Next())
		return nil
	}
	return s.writeHead(ctx, false)
}

// writeHead signs the head and writes it beside the key, once the records
// up to it are on disk (a WAL checkpoint syncs them first), so a power cut
// never leaves a signed head the database does not hold; stopped as the
// store closes, so that records added while the daemon is stopped show.
func (s *Store) writeHead(ctx context.Context, stopped bool) error {
	if s.opts.Key == nil || s.opts.HeadFile == "" || s.headProblem() != nil {
		return nil
	}
	head := s.Head()
	if !stopped && s.headWritten != nil && *s.headWritten == head {
		return nil
	}
	var busy, logFrames, done int
	if err := s.db.QueryRowContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`).Scan(&busy, &logFrames, &done); err != nil {
		return fmt.Errorf("audit: sync before signing the head: %w", err)
	}
	h := SignedHead{Format: HeadFormat, Version: 1, Key: s.opts.Key.ID(), Head: head, At: time.UnixMilli(s.opts.Now().UnixMilli()).UTC(), Stopped: stopped}
	sig, err := s.opts.Key.Sign(headMessage(h))
	if err != nil {
		return err
	}
	h.Sig = hex.EncodeToString(sig)
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	if err := atomicfile.Write(s.opts.HeadFile, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("audit: write the signed head: %w", err)
	}
	s.headWritten = &head
	s.log.Debug("audit: head signed", "seq", head.Seq, "stopped", stopped)
	return nil
}
