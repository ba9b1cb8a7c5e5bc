package audit

// The quick check of the chain's ends, for `torii status` and `torii
// doctor` (SECURITY I-74): what verify checks at the start and the end of
// the chain, without walking every record.

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"

	"github.com/torii-browser/torii/internal/pairing"
)

// newestLink is the newest record's link, cp's when none is kept.
func newestLink(ctx context.Context, q querier, cp Checkpoint) (Link, error) {
	var l Link
	err := q.QueryRowContext(ctx, `SELECT id, hash FROM calls WHERE id > ? ORDER BY id DESC LIMIT 1`, cp.Seq).Scan(&l.Seq, &l.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return cp.Link, nil
	}
	return l, err
}

// DaemonVerifyOptions are the options to check a database against the
// daemon whose key is at keyFile (its public half only is kept) and whose
// signed head is at headFile ("" for none). A missing key leaves
// PublicKey nil: a signature then cannot be checked, and says so.
func DaemonVerifyOptions(keyFile, headFile string) (VerifyOptions, error) {
	o := VerifyOptions{HeadFile: headFile}
	id, err := pairing.LoadIdentity(keyFile)
	if errors.Is(err, fs.ErrNotExist) {
		return o, nil
	}
	if err != nil {
		return o, fmt.Errorf("audit: read the daemon key to check signatures: %w", err)
	}
	o.PublicKey = id.PublicKey()
	return o, nil
}

// CheckFile is the quick check of the chain's ends in the database at path,
// read-only, for `torii doctor` with the daemon stopped: every checkpoint's
// signature, the first kept record's link to the latest, and the signed
// head (o.HeadFile) against the newest record. nil when they hold.
func CheckFile(ctx context.Context, path string, o VerifyOptions) (*ChainError, error) {
	db, err := openReadOnly(path, "")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	v, err := schemaVersion(ctx, db)
	if err != nil {
		return nil, err
	}
	if v < 2 {
		return &ChainError{Problem: ProblemNotChained, Detail: fmt.Sprintf("the database is at schema version %d, from before the chain", v)}, nil
	}
	var sh *SignedHead
	if o.HeadFile != "" {
		var ce *ChainError
		if sh, ce = loadSignedHead(o.HeadFile, o.PublicKey); ce != nil {
			return ce, nil
		}
	}
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	cp, err := latestCheckpoint(ctx, tx, v >= signedVersion)
	if err != nil {
		var ce *ChainError
		if errors.As(err, &ce) {
			return ce, nil
		}
		return nil, err
	}
	if ce, err := checkStart(ctx, tx, cp, o.PublicKey, v >= signedVersion); ce != nil || err != nil {
		return ce, err
	}
	if sh == nil {
		return nil, nil
	}
	newest, err := newestLink(ctx, tx, cp)
	if err != nil {
		return nil, err
	}
	return sh.against(ctx, tx, cp, newest)
}

// Check is the quick check of the chain's ends for `torii status`: what
// CheckFile checks, with the head this store wrote (it knows its newest
// record) in place of the signed head, and a signed head found at open
// that the database contradicts. nil when they hold.
func (s *Store) Check(ctx context.Context) (*ChainError, error) {
	if err := s.Flush(ctx); err != nil {
		return nil, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if ce := s.headProblem(); ce != nil {
		return ce, nil
	}
	cp, err := s.LatestCheckpoint(ctx)
	if err != nil {
		var ce *ChainError
		if errors.As(err, &ce) {
			return ce, nil
		}
		return nil, err
	}
	if ce, err := checkStart(ctx, s.db, cp, s.publicKey(), true); ce != nil || err != nil {
		return ce, err
	}
	newest, err := newestLink(ctx, s.db, cp)
	if err != nil {
		return nil, err
	}
	head := s.Head()
	switch {
	case head.Seq > cp.Seq && newest.Seq < head.Seq:
		return &ChainError{Seq: newest.Seq + 1, Problem: ProblemMissing, Detail: fmt.Sprintf("records after %d were deleted: the daemon wrote records up to %d", newest.Seq, head.Seq)}, nil
	case newest.Seq == head.Seq && newest.Hash != head.Hash:
		return &ChainError{Seq: head.Seq, Problem: ProblemHeadMismatch, Detail: fmt.Sprintf("record %d is not the one the daemon wrote: the chain was rewritten up to it", head.Seq)}, nil
	}
	return nil, nil
}

// warnStart logs, at open, a chain whose start is not what the daemon's
// retention left.
func (s *Store) warnStart(ctx context.Context) {
	cp, err := s.LatestCheckpoint(ctx)
	if err != nil {
		return
	}
	if ce, err := checkStart(ctx, s.db, cp, s.publicKey(), true); err == nil && ce != nil {
		s.log.Warn("audit: the chain's start is not what the daemon's retention left", "problem", ce.Detail, "fix", "run `torii audit verify`; "+ce.Next())
	}
}

func (s *Store) publicKey() []byte {
	if s.opts.Key == nil {
		return nil
	}
	return s.opts.Key.PublicKey()
}

func (s *Store) headProblem() *ChainError {
	s.hfMu.Lock()
	defer s.hfMu.Unlock()
	return s.headFrozen
}
