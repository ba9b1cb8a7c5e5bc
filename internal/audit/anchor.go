package audit

// The chain's two ends, anchored to the daemon's identity key (docs/audit.md,
// "Signed checkpoints and head"). The chain's hashes have no key: whoever
// can write audit.db can delete its oldest records and write a retention
// checkpoint of their own that the rest verifies from, or delete its newest
// records. SECURITY I-74: so every retention checkpoint carries the daemon's
// signature over its seq, hash, kind and time, and the daemon keeps its
// newest record's link, signed, in a file beside its key (audit.head). A
// person who can write the database but not read the key can make neither.
// This file signs and checks the checkpoints; signedhead.go keeps the head;
// check.go is the quick check `status` and `doctor` run.

import (
	"context"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/torii-browser/torii/internal/pairing"
)

// The signed messages start with their own labels, so a signature over one
// is never valid as the other, nor as a pairing transcript (those start
// with a binary length).
const (
	checkpointLabel = "torii-audit-checkpoint-1\n"
	headLabel       = "torii-audit-head-1\n"
)

func checkpointMessage(c Checkpoint) []byte {
	b := []byte(checkpointLabel)
	b = appendPair(b, "seq", strconv.FormatInt(c.Seq, 10))
	b = appendPair(b, "hash", c.Hash)
	b = appendPair(b, "kind", c.Kind)
	return appendPair(b, "at", strconv.FormatInt(c.At.UnixMilli(), 10))
}

// signCheckpoint sets c's signature and key: none without a key.
func signCheckpoint(id *pairing.Identity, c *Checkpoint) error {
	if id == nil {
		return nil
	}
	sig, err := id.Sign(checkpointMessage(*c))
	if err != nil {
		return err
	}
	c.Sig, c.Key = hex.EncodeToString(sig), id.ID()
	return nil
}

// SignCheckpoint sets c's signature and key with id: team mode's anchors.
func SignCheckpoint(id *pairing.Identity, c *Checkpoint) error {
	if id == nil {
		return errors.New("audit: no key to sign the checkpoint with")
	}
	return signCheckpoint(id, c)
}

// VerifyCheckpoint is nil when c is a checkpoint the key pub signed (or a
// genesis one), else why not: ProblemNoKey without pub, else
// ProblemCheckpointForged.
func VerifyCheckpoint(c Checkpoint, pub []byte) *ChainError {
	why, noKey := checkpointSigned(c, pub)
	switch {
	case why == "":
		return nil
	case noKey:
		return &ChainError{Problem: ProblemNoKey, Detail: "checkpoint signature not checked: " + why}
	}
	return &ChainError{Seq: c.Seq, Problem: ProblemCheckpointForged, Detail: "checkpoint signature invalid: " + why}
}

// checkpointSigned reports why c is not a checkpoint the daemon's key pub
// wrote ("" when it is). A genesis checkpoint is not signed: its hash is
// 64 zeros, so the record after it must be the chain's first.
func checkpointSigned(c Checkpoint, pub []byte) (why string, noKey bool) {
	at := fmt.Sprintf("the %s checkpoint at record %d", c.Kind, c.Seq)
	switch c.Kind {
	case CheckpointGenesis:
		if c.Hash != Genesis {
			return at + " has a hash that is not 64 zeros", false
		}
		return "", false
	case CheckpointRetention, CheckpointAnchor:
	default:
		return fmt.Sprintf("the checkpoint at record %d is of an unknown kind %q", c.Seq, c.Kind), false
	}
	if c.Sig == "" {
		return at + " carries no signature", false
	}
	sig, err := hex.DecodeString(c.Sig)
	switch {
	case err != nil:
		return at + " has a signature that is not hex", false
	case len(sig) != 64:
		return fmt.Sprintf("%s has a signature of %d bytes, not 64 (cut short or altered)", at, len(sig)), false
	case len(pub) == 0:
		return at + " is signed, but there is no daemon key to check it with", true
	case c.Key != "" && c.Key != pairing.KeyID(pub):
		return fmt.Sprintf("%s names key %.40q, not this daemon's key %s", at, c.Key, pairing.KeyID(pub)), false
	case !pairing.Verify(pub, checkpointMessage(c), sig):
		return fmt.Sprintf("%s is not signed by this daemon's key %s (its seq, hash or time was changed, or another key signed it)", at, pairing.KeyID(pub)), false
	}
	return "", false
}

// checkpointsQuery reads every checkpoint, newest first; a database the
// daemon has not migrated to signatures yet has none.
func checkpointsQuery(signed bool) string {
	if signed {
		return `SELECT seq, hash, kind, at, sig, key FROM checkpoints ORDER BY seq DESC`
	}
	return `SELECT seq, hash, kind, at, '', '' FROM checkpoints ORDER BY seq DESC`
}

func scanCheckpoint(sc interface{ Scan(...any) error }, c *Checkpoint) error {
	var at int64
	if err := sc.Scan(&c.Seq, &c.Hash, &c.Kind, &at, &c.Sig, &c.Key); err != nil {
		return err
	}
	c.At = time.UnixMilli(at).UTC()
	return nil
}

// checkCheckpoints checks every checkpoint kept (the latest is where the
// chain starts; an older one the daemon did not write is evidence too),
// newest first.
func checkCheckpoints(ctx context.Context, q querier, pub []byte, signed bool) (*ChainError, error) {
	rows, err := q.QueryContext(ctx, checkpointsQuery(signed))
	if err != nil {
		return nil, fmt.Errorf("audit: read the checkpoints: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var c Checkpoint
		if err := scanCheckpoint(rows, &c); err != nil {
			return nil, err
		}
		if why, noKey := checkpointSigned(c, pub); why != "" {
			if noKey {
				return &ChainError{Problem: ProblemNoKey, Detail: "checkpoint signature not checked: " + why}, nil
			}
			return &ChainError{Problem: ProblemCheckpointForged, Detail: "checkpoint signature invalid: " + why +
				fmt.Sprintf(", so nothing shows that the daemon's retention deleted the records up to %d", c.Seq)}, nil
		}
	}
	return nil, rows.Err()
}

// querier is a database or a transaction.
type querier interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
	QueryRowContext(context.Context, string, ...any) *sql.Row
}

// gap is records head.Seq+1 to next-1 not being there: right after the
// checkpoint, no checkpoint accounts for them.
func gap(head Link, cp Checkpoint, next int64) *ChainError {
	if head.Seq == cp.Seq {
		return &ChainError{Seq: head.Seq + 1, Problem: ProblemCheckpointMissing, Detail: fmt.Sprintf(
			"checkpoint missing: records before %d were deleted (%d to %d are not there, and no checkpoint the daemon signed says its retention removed them)", next, head.Seq+1, next-1)}
	}
	return &ChainError{Seq: head.Seq + 1, Problem: ProblemMissing, Detail: fmt.Sprintf("records %d to %d are not there (deleted); the next kept one is %d", head.Seq+1, next-1, next)}
}

// badPrev is record seq's prev not being head's hash. Right after a
// genesis checkpoint past 0 whose first record does not start the chain,
// the records before it were deleted and the checkpoint moved over them.
func badPrev(seq int64, prev string, head Link, cp Checkpoint) *ChainError {
	if head.Seq == cp.Seq && cp.Kind == CheckpointGenesis && cp.Seq > 0 && prev != Genesis {
		return &ChainError{Seq: seq, Problem: ProblemCheckpointMissing, Detail: fmt.Sprintf(
			"checkpoint missing: records before %d were deleted (record %d follows a record that is not there, and no checkpoint the daemon signed says its retention removed it)", seq, seq)}
	}
	return brokenLink(seq, head, cp)
}

// checkStart checks where the kept chain starts: every checkpoint's
// signature, and that the first record after the latest follows it.
func checkStart(ctx context.Context, q querier, cp Checkpoint, pub []byte, signed bool) (*ChainError, error) {
	if ce, err := checkCheckpoints(ctx, q, pub, signed); ce != nil || err != nil {
		return ce, err
	}
	var first Link
	err := q.QueryRowContext(ctx, `SELECT id, prev FROM calls WHERE id > ? ORDER BY id LIMIT 1`, cp.Seq).Scan(&first.Seq, &first.Hash)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, err
	case first.Seq > cp.Seq+1:
		return gap(cp.Link, cp, first.Seq), nil
	case first.Hash != cp.Hash:
		return badPrev(first.Seq, first.Hash, cp.Link, cp), nil
	}
	return nil, nil
}

// adoptCheckpoints signs every retention checkpoint this key has not.
func (s *Store) adoptCheckpoints(ctx context.Context) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, checkpointsQuery(true))
	if err != nil {
		return 0, err
	}
	var todo []Checkpoint
	for rows.Next() {
		var c Checkpoint
		if err := scanCheckpoint(rows, &c); err != nil {
			rows.Close()
			return 0, err
		}
		if why, _ := checkpointSigned(c, s.publicKey()); why != "" && c.Kind == CheckpointRetention {
			todo = append(todo, c)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, c := range todo {
		if err := signCheckpoint(s.opts.Key, &c); err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE checkpoints SET sig = ?, key = ? WHERE seq = ?`, c.Sig, c.Key, c.Seq); err != nil {
			return 0, err
		}
	}
	return len(todo), tx.Commit()
}
