package audit

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/logwait"
	"github.com/torii-browser/torii/internal/pairing"
)

// otherKey is a key that is not the daemon's.
var otherKey = func() *pairing.Identity {
	id, err := pairing.NewIdentityFromScalar(bytes.Repeat([]byte{9}, 32))
	if err != nil {
		panic(err)
	}
	return id
}()

// retained is what the daemon leaves: 10 records written with the
// daemon's key and signed head, retention keeping the newest 6 (signed
// checkpoints at 2 and 4), the store closed. It returns the database, the signed
// head's file and the options that check them.
func retained(t *testing.T) (string, VerifyOptions) {
	t.Helper()
	dir := t.TempDir()
	path, head := filepath.Join(dir, "audit.db"), filepath.Join(dir, "audit.head")
	s, err := Open(path, Options{MaxRows: 6, Interval: time.Hour, Key: testKey, HeadFile: head, Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	// Two batches, retention after each, leaving checkpoints at 2 and 4.
	// They are written as the writer writes a batch, not through Add: how
	// the writer would split queued records into batches depends on timing,
	// and each batch runs retention.
	var recs []*Record
	for i := 1; i <= 10; i++ {
		recs = append(recs, &Record{Time: t0.Add(time.Duration(i) * time.Second), Tool: fmt.Sprintf("t%d", i), Outcome: OutcomeOK})
	}
	for _, batch := range [][]*Record{recs[:8], recs[8:]} {
		if err := s.insert(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Prune(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	o := VerifyOptions{PublicKey: testKey.PublicKey(), HeadFile: head}
	rep, err := VerifyFile(context.Background(), path, o)
	if err != nil || rep.Records != 6 || rep.Checkpoint.Seq != 4 || rep.Checkpoint.Key != testKey.ID() || rep.SignedHead == nil || rep.SignedHead.Seq != 10 {
		t.Fatalf("the daemon's own chain: %+v %v", rep, err)
	}
	var n int
	db := openDB(t, path)
	defer db.Close()
	if err := db.QueryRow(`SELECT COUNT(*) FROM checkpoints WHERE kind = 'retention' AND length(sig) = 128`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d signed checkpoints, want 2 (%v)", n, err)
	}
	return path, o
}

// hashOf is record id's hash in the database.
func hashOf(t *testing.T, path string, id int64) string {
	t.Helper()
	h, ok, err := HashInFile(context.Background(), path, id)
	if err != nil || !ok {
		t.Fatalf("record %d: %v", id, err)
	}
	return h
}

// forgeCheckpoint deletes records up to seq and writes a checkpoint for
// seq, signed by key (none when nil), whose key column names keyID.
func forgeCheckpoint(t *testing.T, path string, seq int64, key *pairing.Identity, keyID string) {
	t.Helper()
	c := Checkpoint{Link: Link{Seq: seq, Hash: hashOf(t, path, seq)}, Kind: CheckpointRetention, At: time.UnixMilli(t0.UnixMilli()).UTC()}
	if err := signCheckpoint(key, &c); err != nil {
		t.Fatal(err)
	}
	if keyID != "" {
		c.Key = keyID
	}
	edit(t, path, fmt.Sprintf(`INSERT INTO checkpoints(seq, hash, kind, at, sig, key) VALUES (%d, '%s', 'retention', %d, '%s', '%s')`, c.Seq, c.Hash, c.At.UnixMilli(), c.Sig, c.Key),
		fmt.Sprintf(`DELETE FROM calls WHERE id <= %d`, seq))
}

// wantProblem checks that verify (and the quick check doctor runs) find
// problem, with detail in its message.
func wantProblem(t *testing.T, path string, o VerifyOptions, seq int64, problem, detail string) {
	t.Helper()
	_, err := VerifyFile(context.Background(), path, o)
	ce := wantBroken(t, err, seq, problem)
	if !strings.Contains(ce.Detail, detail) {
		t.Fatalf("verify: %q does not say %q", ce.Detail, detail)
	}
	qc, err := CheckFile(context.Background(), path, o)
	if err != nil || qc == nil || qc.Problem != problem || !strings.Contains(qc.Detail, detail) {
		t.Fatalf("the quick check: %+v %v, want %s %q", qc, err, problem, detail)
	}
}

// SECURITY I-74: the oldest records deleted through SQL on the real file,
// and a retention checkpoint put in for them: however it is signed, it is
// not the daemon's, and verify (and doctor's quick check) say so.
func TestForgedCheckpointIsFound(t *testing.T) {
	t.Parallel()
	const invalid = "checkpoint signature invalid: the retention checkpoint at record 7 "
	for _, c := range []struct {
		name   string
		forge  func(t *testing.T, path string)
		detail string
	}{
		{"unsigned", func(t *testing.T, path string) { forgeCheckpoint(t, path, 7, nil, "") }, invalid + "carries no signature"},
		{"signed by another key", func(t *testing.T, path string) { forgeCheckpoint(t, path, 7, otherKey, "") },
			invalid + `names key "` + otherKey.ID() + `", not this daemon's key ` + testKey.ID()},
		{"signed by another key, naming the daemon's", func(t *testing.T, path string) { forgeCheckpoint(t, path, 7, otherKey, testKey.ID()) },
			invalid + "is not signed by this daemon's key"},
		{"a bad signature", func(t *testing.T, path string) {
			forgeCheckpoint(t, path, 7, testKey, "")
			edit(t, path, `UPDATE checkpoints SET sig = substr(sig, 1, 10) || (CASE substr(sig, 11, 1) WHEN '0' THEN '1' ELSE '0' END) || substr(sig, 12) WHERE seq = 7`)
		}, invalid + "is not signed by this daemon's key"},
		{"a truncated signature", func(t *testing.T, path string) {
			forgeCheckpoint(t, path, 7, testKey, "")
			edit(t, path, `UPDATE checkpoints SET sig = substr(sig, 1, 100) WHERE seq = 7`)
		}, invalid + "has a signature of 50 bytes, not 64"},
		{"a signature that is not hex", func(t *testing.T, path string) {
			forgeCheckpoint(t, path, 7, testKey, "")
			edit(t, path, `UPDATE checkpoints SET sig = 'zz' || substr(sig, 3) WHERE seq = 7`)
		}, invalid + "has a signature that is not hex"},
		{"the daemon's real signature, moved", func(t *testing.T, path string) {
			forgeCheckpoint(t, path, 7, nil, "")
			edit(t, path, `UPDATE checkpoints SET sig = (SELECT sig FROM checkpoints WHERE seq = 4), key = (SELECT key FROM checkpoints WHERE seq = 4) WHERE seq = 7`)
		}, invalid + "is not signed by this daemon's key"},
		{"its time changed", func(t *testing.T, path string) {
			forgeCheckpoint(t, path, 7, testKey, "")
			edit(t, path, `UPDATE checkpoints SET at = at + 1 WHERE seq = 7`)
		}, invalid + "is not signed by this daemon's key"},
		{"an older checkpoint altered", func(t *testing.T, path string) {
			edit(t, path, `UPDATE checkpoints SET at = at + 1 WHERE seq = 2`)
		}, "checkpoint signature invalid: the retention checkpoint at record 2 is not signed"},
		{"a kind of its own", func(t *testing.T, path string) {
			edit(t, path, `INSERT INTO checkpoints(seq, hash, kind, at) SELECT id, hash, 'manual', 0 FROM calls WHERE id = 7`, `DELETE FROM calls WHERE id <= 7`)
		}, `checkpoint signature invalid: the checkpoint at record 7 is of an unknown kind "manual"`},
		{"a genesis over deleted records", func(t *testing.T, path string) {
			edit(t, path, `INSERT INTO checkpoints(seq, hash, kind, at) SELECT id, hash, 'genesis', 0 FROM calls WHERE id = 7`, `DELETE FROM calls WHERE id <= 7`)
		}, "checkpoint signature invalid: the genesis checkpoint at record 7 has a hash that is not 64 zeros"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, o := retained(t)
			c.forge(t, path)
			wantProblem(t, path, o, 0, ProblemCheckpointForged, c.detail)
		})
	}
	// Verify without the daemon's key says it could not check, not that
	// the chain is fine.
	path, o := retained(t)
	o.PublicKey = nil
	_, err := VerifyFile(context.Background(), path, VerifyOptions{})
	if ce := wantBroken(t, err, 0, ProblemNoKey); !strings.Contains(ce.Detail, "no daemon key") {
		t.Fatal(ce)
	}
}

// SECURITY I-74: records deleted from the start with no checkpoint, or the
// checkpoints deleted and the genesis moved over them: "checkpoint
// missing", in one walk and split into ranges.
func TestMissingCheckpointIsFound(t *testing.T) {
	for _, c := range []struct {
		name  string
		stmts []string
		seq   int64
	}{
		{"records deleted", []string{`DELETE FROM calls WHERE id <= 7`}, 5},
		{"records and checkpoints deleted", []string{`DELETE FROM calls WHERE id <= 7`, `DELETE FROM checkpoints WHERE kind = 'retention'`}, 1},
		{"the genesis moved over them", []string{`DELETE FROM calls WHERE id <= 7`, `DELETE FROM checkpoints WHERE kind = 'retention'`, `UPDATE checkpoints SET seq = 7`}, 8},
	} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", c.name, parts), func(t *testing.T) {
				splitVerify(t, parts)
				path, o := retained(t)
				edit(t, path, c.stmts...)
				wantProblem(t, path, o, c.seq, ProblemCheckpointMissing, "checkpoint missing: records before 8 were deleted")
			})
		}
	}
}

// SECURITY I-74: the daemon's own checkpoint, and a first record that does
// not follow it (replaced, with a hash of its own).
func TestCheckpointThatDoesNotMatchTheNextRecord(t *testing.T) {
	t.Parallel()
	path, o := retained(t)
	var r Record
	db := openDB(t, path)
	if err := scanRecord(db.QueryRow(`SELECT `+recordCols+` FROM calls WHERE id = 5`), &r); err != nil {
		t.Fatal(err)
	}
	db.Close()
	r.Tool = "replaced"
	r.Prev = strings.Repeat("ef", 32)
	r.Hash = HashRecord(&r)
	edit(t, path, fmt.Sprintf(`UPDATE calls SET tool = 'replaced', prev = '%s', hash = '%s' WHERE id = 5`, r.Prev, r.Hash))
	wantProblem(t, path, o, 5, ProblemBrokenLink, "its prev is not the retention checkpoint's hash: the checkpoint does not match the record after it")
}

// SECURITY I-74: the newest records deleted, or the whole chain rewritten
// with hashes recomputed, while the daemon is stopped: the head it signed
// says so. A signed head that is not the daemon's is refused.
func TestSignedHeadFindsTheEnd(t *testing.T) {
	t.Parallel()
	t.Run("newest deleted", func(t *testing.T) {
		path, o := retained(t)
		edit(t, path, `DELETE FROM calls WHERE id >= 8`)
		wantProblem(t, path, o, 8, ProblemMissing, "records after 7 were deleted: the daemon signed its head at record 10")
	})
	t.Run("all deleted", func(t *testing.T) {
		path, o := retained(t)
		edit(t, path, `DELETE FROM calls`)
		wantProblem(t, path, o, 5, ProblemMissing, "records after 4 were deleted: the daemon signed its head at record 10")
	})
	t.Run("added while stopped", func(t *testing.T) {
		path, o := retained(t)
		appendForged(t, path)
		wantProblem(t, path, o, 11, ProblemHeadMismatch, "records 11 to 11 were added while the daemon was stopped: it signed its head at record 10 as it stopped")
		// The daemon started on it keeps its head as evidence.
		s := open(t, path, Options{MaxRows: 6, Key: testKey, HeadFile: o.HeadFile})
		if ce, err := s.Check(context.Background()); err != nil || ce == nil || ce.Problem != ProblemHeadMismatch {
			t.Fatalf("check: %+v %v", ce, err)
		}
	})
	t.Run("rewritten", func(t *testing.T) {
		path, o := retained(t)
		rewriteFrom(t, path, 6)
		if _, err := VerifyFile(context.Background(), path, VerifyOptions{PublicKey: o.PublicKey}); err != nil {
			t.Fatalf("the rewritten chain verifies on its own: %v", err)
		}
		wantProblem(t, path, o, 10, ProblemHeadMismatch, "record 10 is not the one the daemon signed as its head")
	})
	for _, c := range []struct {
		name   string
		edit   func(h *SignedHead)
		detail string
	}{
		{"its seq changed", func(h *SignedHead) { h.Head.Seq = 7 }, "is not signed by this daemon's key"},
		{"its signature cut short", func(h *SignedHead) { h.Sig = h.Sig[:64] }, "has no signature of 64 bytes"},
		{"signed by another key", func(h *SignedHead) {
			h.Key = otherKey.ID()
			sig, _ := otherKey.Sign(headMessage(*h))
			h.Sig = hex.EncodeToString(sig)
		}, `names key "` + otherKey.ID() + `"`},
		{"not a signed head", func(h *SignedHead) { h.Format = "something" }, "cannot be read"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path, o := retained(t)
			h, err := ReadSignedHead(o.HeadFile)
			if err != nil {
				t.Fatal(err)
			}
			c.edit(&h)
			b, _ := json.Marshal(h)
			if err := os.WriteFile(o.HeadFile, b, 0o600); err != nil {
				t.Fatal(err)
			}
			wantProblem(t, path, o, 0, ProblemSignedHeadInvalid, "signed head invalid: "+o.HeadFile+" ")
			if ce, _ := CheckFile(context.Background(), path, o); !strings.Contains(ce.Detail, c.detail) {
				t.Fatalf("%q does not say %q", ce.Detail, c.detail)
			}
		})
	}
	// No signed head (a database copied elsewhere): the chain is checked, not its end.
	path, o := retained(t)
	o.HeadFile = filepath.Join(t.TempDir(), "none")
	if rep, err := VerifyFile(context.Background(), path, o); err != nil || rep.SignedHead != nil {
		t.Fatalf("no signed head: %+v %v", rep, err)
	}
}

// SECURITY I-74: the daemon, started on a database that no longer holds
// the head it signed, keeps that head as evidence: it is never replaced,
// and the store's own check reports it while new records arrive.
func TestOpenKeepsAContradictedHead(t *testing.T) {
	t.Parallel()
	path, o := retained(t)
	edit(t, path, `DELETE FROM calls WHERE id >= 9`)
	before, err := os.ReadFile(o.HeadFile)
	if err != nil {
		t.Fatal(err)
	}
	s := open(t, path, Options{MaxRows: 6, Key: testKey, HeadFile: o.HeadFile})
	for i := 0; i < 3; i++ {
		s.Add(Record{Tool: "after", Outcome: OutcomeOK})
	}
	ce, err := s.Check(context.Background())
	if err != nil || ce == nil || ce.Problem != ProblemMissing || !strings.Contains(ce.Detail, "records after 8 were deleted") {
		t.Fatalf("check: %+v %v", ce, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.ReadFile(o.HeadFile); !bytes.Equal(before, after) {
		t.Fatalf("the signed head was replaced:\n%s\n%s", before, after)
	}
	// Record 10 now exists again, written anew: not the one signed.
	wantProblem(t, path, o, 10, ProblemHeadMismatch, "record 10 is not the one the daemon signed as its head")
}

// The store signs its head while records arrive (at most every headEvery)
// and when it closes; its own check passes on its own chain, and reports
// records deleted from the end behind its back.
func TestHeadSignedAsRecordsArrive(t *testing.T) {
	old := headEvery
	headEvery = 20 * time.Millisecond
	t.Cleanup(func() { headEvery = old })
	dir := t.TempDir()
	path, head := filepath.Join(dir, "audit.db"), filepath.Join(dir, "audit.head")
	var logs logwait.Buffer
	s := open(t, path, Options{Key: testKey, HeadFile: head, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if h, err := ReadSignedHead(head); err != nil || h.Head != (Link{Seq: 0, Hash: Genesis}) {
		t.Fatalf("the head at open: %+v %v", h, err)
	}
	for i := 0; i < 3; i++ {
		s.Add(Record{Tool: "t", Outcome: OutcomeOK})
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := logs.Wait(`msg="audit: head signed" seq=3`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if h, err := ReadSignedHead(head); err != nil || h.Head != s.Head() {
		t.Fatalf("the signed head %+v (%v), the store's %+v", h, err, s.Head())
	}
	if ce, err := s.Check(context.Background()); ce != nil || err != nil {
		t.Fatalf("check: %v %v", ce, err)
	}
	edit(t, path, `DELETE FROM calls WHERE id = 3`)
	if ce, err := s.Check(context.Background()); err != nil || ce == nil || ce.Problem != ProblemMissing || !strings.Contains(ce.Detail, "the daemon wrote records up to 3") {
		t.Fatalf("check after a deletion: %+v %v", ce, err)
	}
	s.Add(Record{Tool: "last", Outcome: OutcomeOK})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if h, _ := ReadSignedHead(head); h.Head.Seq != 4 || !h.Stopped {
		t.Fatalf("the head at close: %+v", h)
	}
	if fi, err := os.Stat(head); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode: %v %v", fi, err)
	}
}

// Verify reads the signed head before the database: while the daemon
// writes, signs heads and deletes by retention, every verify passes.
func TestVerifyWhileTheDaemonSignsAndPrunes(t *testing.T) {
	old := headEvery
	headEvery = time.Millisecond
	t.Cleanup(func() { headEvery = old })
	dir := t.TempDir()
	path, head := filepath.Join(dir, "audit.db"), filepath.Join(dir, "audit.head")
	s := open(t, path, Options{MaxRows: 50, Key: testKey, HeadFile: head})
	o := VerifyOptions{PublicKey: testKey.PublicKey(), HeadFile: head}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				s.Add(Record{Tool: "more", Outcome: OutcomeOK})
				_ = s.Flush(context.Background()) // one record on disk before the next
			}
		}
	}()
	defer func() { close(stop); <-done }()
	// Until retention has run a few times.
	deadline := time.Now().Add(20 * time.Second)
	for verified := 0; ; verified++ {
		cp, err := s.LatestCheckpoint(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if cp.Kind == CheckpointRetention && cp.Seq > 100 && verified > 10 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retention did not run in 20 s: %+v, head %+v", cp, s.Head())
		}
		if _, err := VerifyFile(context.Background(), path, o); err != nil {
			t.Fatal(err)
		}
		if ce, err := CheckFile(context.Background(), path, o); ce != nil || err != nil {
			t.Fatal(ce, err)
		}
	}
}

// A database with retention checkpoints from a torii before signatures:
// the daemon signs them the first time it starts with no signed head (trust
// on first use), and never again once it has one.
func TestCheckpointsAdoptedOnlyBeforeAnySignedHead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, head := filepath.Join(dir, "audit.db"), filepath.Join(dir, "audit.head")
	s, err := Open(path, Options{MaxRows: 2, Interval: time.Hour}) // no key: as an older torii wrote it
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		s.Add(Record{Tool: "old", Outcome: OutcomeOK})
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	o := VerifyOptions{PublicKey: testKey.PublicKey(), HeadFile: head}
	wantProblem(t, path, o, 0, ProblemCheckpointForged, "carries no signature")

	s = open(t, path, Options{MaxRows: 2, Interval: time.Hour, Key: testKey, HeadFile: head})
	if rep, err := s.Verify(context.Background()); err != nil || rep.Checkpoint.Key != testKey.ID() || rep.SignedHead == nil {
		t.Fatalf("adopted: %+v %v", rep, err)
	}
	s.Close()
	// With a signed head in place, an unsigned checkpoint is never adopted.
	forgeCheckpoint(t, path, 4, nil, "")
	s = open(t, path, Options{MaxRows: 2, Interval: time.Hour, Key: testKey, HeadFile: head})
	ce, err := s.Check(context.Background())
	if err != nil || ce == nil || ce.Problem != ProblemCheckpointForged {
		t.Fatalf("after the forgery: %+v %v", ce, err)
	}
}

// A database an older torii left at schema 3 (no signature columns):
// verify reads it, and its retention checkpoint is unsigned.
func TestVerifyUnmigratedDatabase(t *testing.T) {
	t.Parallel()
	path, o := retained(t)
	edit(t, path, `ALTER TABLE checkpoints DROP COLUMN sig`, `ALTER TABLE checkpoints DROP COLUMN key`, `DELETE FROM schema_migrations WHERE version = 4`)
	o.HeadFile = ""
	wantProblem(t, path, o, 0, ProblemCheckpointForged, "the retention checkpoint at record 4 carries no signature")
}

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// rewriteFrom edits record from and recomputes its hash and every later
// one, as someone covering their tracks would.
func rewriteFrom(t *testing.T, path string, from int64) {
	t.Helper()
	db := openDB(t, path)
	defer db.Close()
	rows, err := db.Query(`SELECT `+recordCols+` FROM calls WHERE id >= ? ORDER BY id`, from)
	if err != nil {
		t.Fatal(err)
	}
	var recs []Record
	for rows.Next() {
		var r Record
		if err := scanRecord(rows, &r); err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
	rows.Close()
	prev := recs[0].Prev
	for i := range recs {
		r := &recs[i]
		if i == 0 {
			r.Tool = "forged"
		}
		r.Prev = prev
		r.Hash = HashRecord(r)
		prev = r.Hash
		if _, err := db.Exec(`UPDATE calls SET tool = ?, prev = ?, hash = ? WHERE id = ?`, r.Tool, r.Prev, r.Hash, r.ID); err != nil {
			t.Fatal(err)
		}
	}
}

// appendForged adds a record after the newest, chained to it with a hash
// of its own: a chain that verifies on its own.
func appendForged(t *testing.T, path string) {
	t.Helper()
	db := openDB(t, path)
	defer db.Close()
	var last Record
	if err := scanRecord(db.QueryRow(`SELECT `+recordCols+` FROM calls ORDER BY id DESC LIMIT 1`), &last); err != nil {
		t.Fatal(err)
	}
	r := Record{Time: last.Time, Tool: "forged", Outcome: OutcomeOK}
	seal(&r, Link{Seq: last.ID, Hash: last.Hash})
	if _, err := db.Exec(insertSQL, insertArgs(&r)...); err != nil {
		t.Fatal(err)
	}
}
