package storetest

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/team/store"
)

func rec(i int, user string) store.AuditRecord {
	return store.AuditRecord{Record: audit.Record{Tool: fmt.Sprintf("tool%d", i), Session: "agent", Outcome: audit.OutcomeOK, DurationMs: int64(i)},
		UserID: user, DeviceID: "dev-" + user, Replica: "r1"}
}

func verified(t *testing.T, s store.Store, pub []byte) {
	t.Helper()
	ce, err := s.VerifyAudit(ctx, pub)
	if err != nil || ce != nil {
		t.Fatalf("VerifyAudit: %v %v", ce, err)
	}
}

func testAudit(t *testing.T, b Backend) {
	s := Open(t, b.NewDB(t))
	verified(t, s, nil)
	at := time.Date(2026, 1, 2, 3, 4, 5, 678_900_000, time.UTC)
	r := rec(1, "u1")
	r.Time = at
	r.Tool = "a\x00b" // PostgreSQL text holds no NUL: stored replaced
	first := must[store.AuditRecord](t)(s.AppendAudit(ctx, r))
	if first.ID != 1 || first.Prev != audit.Genesis || first.Hash == "" || !first.Time.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("first record: %+v", first)
	}
	// Without its team fields a record hashes as the one-machine audit's.
	plain := must[store.AuditRecord](t)(s.AppendAudit(ctx, store.AuditRecord{Record: audit.Record{Tool: "x", Outcome: audit.OutcomeOK}}))
	if plain.Time.IsZero() || plain.Hash != audit.HashRecord(&plain.Record) || plain.Prev != first.Hash {
		t.Fatalf("plain record: %+v", plain)
	}
	for i := 3; i <= 6; i++ {
		must[store.AuditRecord](t)(s.AppendAudit(ctx, rec(i, []string{"u1", "u2"}[i%2])))
	}
	all := must[[]store.AuditRecord](t)(s.AuditRecords(ctx, "", 0, 0))
	if len(all) != 6 || all[0] != first {
		t.Fatalf("AuditRecords: %d, first %+v, want %+v", len(all), all[0], first)
	}
	u2 := must[[]store.AuditRecord](t)(s.AuditRecords(ctx, "u2", 0, 0))
	if len(u2) != 2 || u2[0].ID != 3 || u2[1].ID != 5 {
		t.Fatalf("u2's records: %+v", u2)
	}
	if page := must[[]store.AuditRecord](t)(s.AuditRecords(ctx, "", 2, 2)); len(page) != 2 || page[0].ID != 3 {
		t.Fatalf("page after 2: %+v", page)
	}
	verified(t, s, nil)
}

// SECURITY I-89: appends from many goroutines and two stores (replicas)
// on one database form one chain.
func testAuditConcurrent(t *testing.T, b Backend) {
	url := b.NewDB(t)
	s1, s2 := Open(t, url), Open(t, url)
	const per = 20
	var wg sync.WaitGroup
	for g := range 8 {
		s := []store.Store{s1, s2}[g%2]
		wg.Go(func() {
			for i := range per {
				if _, err := s.AppendAudit(ctx, rec(g*per+i, fmt.Sprint("u", g))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	all := must[[]store.AuditRecord](t)(s1.AuditRecords(ctx, "", 0, 0))
	if len(all) != 8*per {
		t.Fatalf("%d records, want %d", len(all), 8*per)
	}
	verified(t, s2, nil)
}

func testAuditTampered(t *testing.T, b Backend) {
	for _, c := range []struct {
		name, sql string
		seq       int64
		problem   string
	}{
		{"tool edited", `UPDATE audit SET tool = 'evil' WHERE seq = 3`, 3, audit.ProblemAltered},
		{"user edited", `UPDATE audit SET user_id = 'u9' WHERE seq = 2`, 2, audit.ProblemAltered},
		{"replica edited", `UPDATE audit SET replica = 'r9' WHERE seq = 4`, 4, audit.ProblemAltered},
		{"row deleted", `DELETE FROM audit WHERE seq = 2`, 2, audit.ProblemMissing},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			url := b.NewDB(t)
			s := Open(t, url)
			for i := 1; i <= 5; i++ {
				must[store.AuditRecord](t)(s.AppendAudit(ctx, rec(i, "u1")))
			}
			verified(t, s, nil)
			b.Exec(t, url, c.sql)
			ce, err := s.VerifyAudit(ctx, nil)
			if err != nil || ce == nil || ce.Seq != c.seq || ce.Problem != c.problem {
				t.Fatalf("after %s: %v %v, want record %d %s", c.sql, ce, err, c.seq, c.problem)
			}
		})
	}
}

// The chain's head signed with the gateway's identity: a rewrite of the
// chain up to it, or a forged checkpoint, shows.
func testAuditCheckpoint(t *testing.T, b Backend) {
	url := b.NewDB(t)
	s := Open(t, url)
	id, err := pairing.NewIdentityFromScalar(bytes.Repeat([]byte{3}, 32))
	if err != nil {
		t.Fatal(err)
	}
	pub := id.PublicKey()
	if _, err := s.Checkpoint(ctx, nil); err == nil {
		t.Fatal("checkpoint without a key")
	}
	empty := must[audit.Checkpoint](t)(s.Checkpoint(ctx, id))
	if empty.Seq != 0 || empty.Hash != audit.Genesis || empty.Sig == "" {
		t.Fatalf("checkpoint of an empty chain: %+v", empty)
	}
	for i := 1; i <= 4; i++ {
		must[store.AuditRecord](t)(s.AppendAudit(ctx, rec(i, "u1")))
	}
	cp := must[audit.Checkpoint](t)(s.Checkpoint(ctx, id))
	if cp.Seq != 4 || cp.Kind != audit.CheckpointAnchor || cp.Key != id.ID() || cp.At.IsZero() {
		t.Fatalf("checkpoint: %+v", cp)
	}
	must[store.AuditRecord](t)(s.AppendAudit(ctx, rec(5, "u1")))
	verified(t, s, pub)
	if ce, _ := s.VerifyAudit(ctx, nil); ce == nil || ce.Problem != audit.ProblemNoKey {
		t.Fatalf("without the key: %v, want %s", ce, audit.ProblemNoKey)
	}
	other, _ := pairing.NewIdentityFromScalar(bytes.Repeat([]byte{4}, 32))
	if ce, _ := s.VerifyAudit(ctx, other.PublicKey()); ce == nil || ce.Problem != audit.ProblemCheckpointForged {
		t.Fatalf("another key: %v, want %s", ce, audit.ProblemCheckpointForged)
	}
	// Deleting the records up to the end, the checkpoint included, shows.
	b.Exec(t, url, `DELETE FROM audit WHERE seq >= 4`)
	if ce, _ := s.VerifyAudit(ctx, pub); ce == nil || ce.Problem != audit.ProblemMissing || ce.Seq != 4 {
		t.Fatalf("records cut from the end past a checkpoint: %v", ce)
	}
	b.Exec(t, url, `UPDATE checkpoints SET seq = 3 WHERE seq = 4`)
	if ce, _ := s.VerifyAudit(ctx, pub); ce == nil || ce.Problem != audit.ProblemCheckpointForged {
		t.Fatalf("a moved checkpoint: %v", ce)
	}
}

// Whoever can write the database can rewrite the chain with hashes that
// agree (they have no key), but not past the gateway's signed checkpoint.
func testAuditRewritten(t *testing.T, b Backend) {
	url := b.NewDB(t)
	s := Open(t, url)
	id, err := pairing.NewIdentityFromScalar(bytes.Repeat([]byte{8}, 32))
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 5; i++ {
		must[store.AuditRecord](t)(s.AppendAudit(ctx, rec(i, "u1")))
		if i == 4 {
			must[audit.Checkpoint](t)(s.Checkpoint(ctx, id))
		}
	}
	all := must[[]store.AuditRecord](t)(s.AuditRecords(ctx, "", 0, 0))
	prev := all[0].Hash
	for _, r := range all[1:] {
		if r.ID == 2 {
			r.Tool = "rewritten"
		}
		r.Prev = prev
		r.Hash = audit.HashExtended(&r.Record, map[string]string{"userId": r.UserID, "deviceId": r.DeviceID, "replica": r.Replica})
		prev = r.Hash
		b.Exec(t, url, fmt.Sprintf(`UPDATE audit SET tool = '%s', prev = '%s', hash = '%s' WHERE seq = %d`, r.Tool, r.Prev, r.Hash, r.ID))
	}
	b.Exec(t, url, fmt.Sprintf(`UPDATE audit_head SET hash = '%s' WHERE id = 1`, prev))
	ce, err := s.VerifyAudit(ctx, id.PublicKey())
	if err != nil || ce == nil || ce.Seq != 4 || ce.Problem != audit.ProblemHeadMismatch {
		t.Fatalf("a chain rewritten past a checkpoint: %v %v, want record 4 %s", ce, err, audit.ProblemHeadMismatch)
	}
}
