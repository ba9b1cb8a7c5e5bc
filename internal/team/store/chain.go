package store

// The team audit's chain. A record hashes as the one-machine audit's does
// (audit.HashRecord's canonical form), extended by its team fields: userId,
// deviceId and replica join the canonical form in key order, as an export
// carrying them is read (audit.HashExtended). So the hash covers who, which
// browser and which replica as well as the call, a record without them
// hashes exactly as the one-machine audit's, and an export of the team
// audit in the one-machine format verifies with `torii audit verify --file`.
//
// SECURITY I-89: every replica appends to one chain, under a lock on the
// head row in the same transaction as the insert, and the append is
// durable before AppendAudit returns (so before the call's reply).

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/torii-browser/torii/internal/audit"
)

// maxField bounds a record's text fields: names and codes, never free text.
const maxField = 256

func clipField(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if strings.IndexByte(s, 0) >= 0 { // PostgreSQL's text holds no NUL
		s = strings.ReplaceAll(s, "\x00", "\uFFFD")
	}
	if len(s) <= maxField {
		return s
	}
	s = s[:maxField]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s
}

func recordHash(r *AuditRecord) string {
	return audit.HashExtended(&r.Record, map[string]string{"userId": r.UserID, "deviceId": r.DeviceID, "replica": r.Replica})
}

// seal makes r the record after prev: bounded fields, the time at the
// stored millisecond (now, the database's, when r has none), its id, prev
// and hash.
func seal(r *AuditRecord, prev audit.Link, now time.Time) {
	r.ID = prev.Seq + 1
	if r.Time.IsZero() {
		r.Time = now
	}
	r.Time = time.UnixMilli(r.Time.UnixMilli()).UTC()
	for _, p := range []*string{&r.Tool, &r.Session, &r.Origin, &r.Outcome, &r.Code, &r.Approval, &r.Secrets, &r.UserID, &r.DeviceID, &r.Replica} {
		*p = clipField(*p)
	}
	r.Prev = prev.Hash
	r.Hash = recordHash(r)
}

// walk verifies the chain one record at a time, oldest first, against the
// checkpoints kept (each must be signed by pub and name the hash its record
// still has).
type walk struct {
	cps  map[int64][]audit.Checkpoint
	last int64 // the newest checkpoint's seq
	head audit.Link
}

func newWalk(cps []audit.Checkpoint, pub []byte) (*walk, *audit.ChainError) {
	w := &walk{cps: map[int64][]audit.Checkpoint{}, head: audit.Link{Hash: audit.Genesis}}
	for _, c := range cps {
		if ce := audit.VerifyCheckpoint(c, pub); ce != nil {
			return nil, ce
		}
		if c.Seq == 0 && c.Hash != audit.Genesis {
			return nil, &audit.ChainError{Problem: audit.ProblemHeadMismatch, Detail: "a checkpoint of the empty chain has a hash that is not 64 zeros"}
		}
		w.cps[c.Seq] = append(w.cps[c.Seq], c)
		w.last = max(w.last, c.Seq)
	}
	return w, nil
}

// next checks r, the record after those walked so far.
func (w *walk) next(r *AuditRecord) *audit.ChainError {
	switch {
	case r.ID > w.head.Seq+1:
		return &audit.ChainError{Seq: w.head.Seq + 1, Problem: audit.ProblemMissing,
			Detail: fmt.Sprintf("records %d to %d are not there (deleted); the next kept one is %d", w.head.Seq+1, r.ID-1, r.ID)}
	case r.ID <= w.head.Seq:
		return &audit.ChainError{Seq: r.ID, Problem: audit.ProblemOutOfOrder, Detail: fmt.Sprintf("it comes after record %d", w.head.Seq)}
	case recordHash(r) != r.Hash:
		return &audit.ChainError{Seq: r.ID, Problem: audit.ProblemAltered, Detail: "its fields do not give its hash: the record was edited, or swapped with another"}
	case r.Prev != w.head.Hash:
		return &audit.ChainError{Seq: r.ID, Problem: audit.ProblemBrokenLink,
			Detail: fmt.Sprintf("its prev is not record %d's hash: a record was replaced, or the chain rewritten from here", w.head.Seq)}
	}
	for _, c := range w.cps[r.ID] {
		if c.Hash != r.Hash {
			return &audit.ChainError{Seq: r.ID, Problem: audit.ProblemHeadMismatch,
				Detail: fmt.Sprintf("it is not the record the gateway signed in its checkpoint of %s: the chain was rewritten up to it", c.At.Format(time.RFC3339))}
		}
	}
	w.head = audit.Link{Seq: r.ID, Hash: r.Hash}
	return nil
}

// end checks that no signed checkpoint lies past the newest record.
func (w *walk) end() *audit.ChainError {
	if w.last > w.head.Seq {
		return &audit.ChainError{Seq: w.head.Seq + 1, Problem: audit.ProblemMissing,
			Detail: fmt.Sprintf("records after %d were deleted: the gateway signed a checkpoint at record %d", w.head.Seq, w.last)}
	}
	return nil
}
