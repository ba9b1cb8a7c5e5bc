package audit

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// chained opens a store at a fresh path with n records written.
func chained(t *testing.T, n int) (string, *Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	s := open(t, path, Options{Now: func() time.Time { return t0 }})
	for i := 1; i <= n; i++ {
		s.Add(Record{Time: t0.Add(time.Duration(i) * time.Second), Tool: fmt.Sprintf("t%d", i), Session: "agent:a", Outcome: OutcomeOK, DurationMs: int64(i)})
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	return path, s
}

// edit runs SQL on the database file behind the store's back (by hand).
func edit(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func wantBroken(t *testing.T, err error, seq int64, problem string) *ChainError {
	t.Helper()
	var ce *ChainError
	if !errors.As(err, &ce) {
		t.Fatalf("want a broken chain at %d (%s), got %v", seq, problem, err)
	}
	if ce.Seq != seq || ce.Problem != problem {
		t.Fatalf("broken at %d (%s), want %d (%s): %v", ce.Seq, ce.Problem, seq, problem, ce)
	}
	if ce.Next() == "" || !strings.Contains(ce.Error(), ce.Next()) || !strings.Contains(ce.Next(), "torii") {
		t.Fatalf("the message names no next step: %v", ce)
	}
	return ce
}

// splitVerify makes verify split even a short chain into parts ranges.
func splitVerify(t *testing.T, parts int) {
	oldSpan, oldParts := verifyMinSpan, verifyParts
	verifyMinSpan, verifyParts = 1, parts
	t.Cleanup(func() { verifyMinSpan, verifyParts = oldSpan, oldParts })
}

// SECURITY I-70: records from many sessions at once form one chain.
func TestConcurrentSessionsFormOneChain(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	s := open(t, path, Options{})
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				s.Add(Record{Tool: "click", Session: fmt.Sprintf("agent:%d", g), Outcome: OutcomeOK})
				if i%50 == 0 {
					_, _ = s.Prune(context.Background()) // retention racing the appends
				}
			}
		}()
	}
	wg.Wait()
	splitVerify(t, 3)
	rep, err := s.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if rep.Records != 1600 || rep.Head.Seq != 1600 || rep.Head != s.Head() {
		t.Fatalf("report %+v, head %+v", rep, s.Head())
	}
	if _, err := VerifyFile(context.Background(), path, keyed); err != nil {
		t.Fatal(err)
	}
}

func TestVerifyEmptyStore(t *testing.T) {
	t.Parallel()
	path, s := chained(t, 0)
	rep, err := VerifyFile(context.Background(), path, keyed)
	if err != nil || rep.Records != 0 || rep.Head.Seq != 0 || rep.Head.Hash != Genesis || rep.Checkpoint.Kind != CheckpointGenesis {
		t.Fatalf("empty: %+v %v", rep, err)
	}
	var b bytes.Buffer
	if err := s.Export(context.Background(), Filter{}, "json", &b); err != nil {
		t.Fatal(err)
	}
	if rep, err := VerifyExport(&b); err != nil || rep.Records != 0 || !rep.Complete {
		t.Fatalf("empty export: %+v %v", rep, err)
	}
	if !strings.Contains(rep.Describe("audit.db"), "0 record(s) verified") {
		t.Fatal(rep.Describe("audit.db"))
	}
}

// A database edited by hand: verify names the first broken link.
func TestVerifyFindsHandEdits(t *testing.T) {
	for _, c := range []struct {
		name    string
		stmts   []string
		seq     int64
		problem string
	}{
		{"one byte changed", []string{`UPDATE calls SET tool = 't5x' WHERE id = 5`}, 5, ProblemAltered},
		{"one byte of a number", []string{`UPDATE calls SET duration_ms = 6 WHERE id = 5`}, 5, ProblemAltered},
		{"deleted row", []string{`DELETE FROM calls WHERE id = 4`}, 4, ProblemMissing},
		{"reordered pair", []string{
			`UPDATE calls SET id = -6 WHERE id = 6`, `UPDATE calls SET id = 6 WHERE id = 7`, `UPDATE calls SET id = 7 WHERE id = -6`}, 6, ProblemAltered},
		{"swapped contents", []string{
			`CREATE TEMP TABLE x AS SELECT * FROM calls WHERE id IN (3, 4)`,
			`UPDATE calls SET tool = (SELECT tool FROM x WHERE id = 4), hash = (SELECT hash FROM x WHERE id = 4), prev = (SELECT prev FROM x WHERE id = 4), ts = (SELECT ts FROM x WHERE id = 4), duration_ms = 4 WHERE id = 3`,
			`UPDATE calls SET tool = (SELECT tool FROM x WHERE id = 3), hash = (SELECT hash FROM x WHERE id = 3), prev = (SELECT prev FROM x WHERE id = 3), ts = (SELECT ts FROM x WHERE id = 3), duration_ms = 3 WHERE id = 4`}, 3, ProblemAltered},
		// An edit whose hash was recomputed still breaks the next link.
		{"rewritten hash", []string{`UPDATE calls SET tool = 'forged', hash = '` + strings.Repeat("ab", 32) + `' WHERE id = 8`}, 8, ProblemAltered},
		{"checkpoints emptied", []string{`DELETE FROM checkpoints`}, 0, ProblemNoCheckpoint},
		{"deleted first rows", []string{`DELETE FROM calls WHERE id <= 2`}, 1, ProblemCheckpointMissing},
	} {
		for _, parts := range []int{1, 2, 3, 5} { // in one walk, and split into ranges with seams at every record
			t.Run(fmt.Sprintf("%s/%d", c.name, parts), func(t *testing.T) {
				splitVerify(t, parts)
				path, _ := chained(t, 10)
				edit(t, path, c.stmts...)
				_, err := VerifyFile(context.Background(), path, keyed)
				wantBroken(t, err, c.seq, c.problem)
			})
		}
	}
	// A forged record with a correct hash of its own, but a prev of its making.
	path, s := chained(t, 10)
	r := Record{Time: t0, Tool: "forged", Outcome: OutcomeOK}
	seal(&r, Link{Seq: 4, Hash: strings.Repeat("cd", 32)})
	edit(t, path, fmt.Sprintf(`UPDATE calls SET tool = 'forged', ts = %d, session = '', duration_ms = 0, prev = '%s', hash = '%s' WHERE id = 5`, r.Time.UnixMilli(), r.Prev, r.Hash))
	_, err := s.Verify(context.Background())
	wantBroken(t, err, 5, ProblemBrokenLink)
}

// Retention deletes from the start and leaves a checkpoint: verify passes,
// an export made afterwards verifies, and the checkpoint is kept in history.
func TestRetentionKeepsTheChainVerifiable(t *testing.T) {
	splitVerify(t, 2)
	now := t0.Add(20 * time.Minute)
	path := filepath.Join(t.TempDir(), "audit.db")
	s := open(t, path, Options{MaxAge: 30 * time.Minute, MaxRows: 6, Interval: time.Hour, Now: func() time.Time { return now }})
	for i := 1; i <= 10; i++ {
		s.Add(Record{Time: t0.Add(time.Duration(i) * time.Minute), Tool: fmt.Sprintf("t%d", i), Outcome: OutcomeOK})
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	head := s.Head()
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := tools(all(t, s, Filter{})); g != "t10,t9,t8,t7,t6,t5" {
		t.Fatalf("after count retention: %s", g)
	}
	rep, err := VerifyFile(context.Background(), path, keyed)
	if err != nil || rep.Records != 6 || rep.Checkpoint.Seq != 4 || rep.Checkpoint.Kind != CheckpointRetention || rep.Head != head {
		t.Fatalf("after retention: %+v %v", rep, err)
	}
	// Age: everything is old now; the checkpoint is then the head itself.
	now = t0.Add(48 * time.Hour)
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Verify(context.Background())
	if err != nil || rep.Records != 0 || rep.Checkpoint.Link != head || rep.Head != head {
		t.Fatalf("all pruned: %+v %v", rep, err)
	}
	// The chain goes on from the checkpoint.
	s.Add(Record{Time: now, Tool: "after", Outcome: OutcomeOK})
	rep, err = s.Verify(context.Background())
	if err != nil || rep.Records != 1 || rep.Head.Seq != 11 {
		t.Fatalf("after: %+v %v", rep, err)
	}
	var b bytes.Buffer
	if err := s.Export(context.Background(), Filter{}, "json", &b); err != nil {
		t.Fatal(err)
	}
	if _, err := VerifyExport(&b); err != nil {
		t.Fatal(err)
	}
}

// A database from before the chain: its rows stay, before a genesis
// checkpoint after the highest id; the chain starts after it.
func TestMigrationStartsAtGenesis(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.db")
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL)`,
		migrations[0],
		`INSERT INTO schema_migrations VALUES (1, 0)`,
		fmt.Sprintf(`INSERT INTO calls(ts, tool, outcome) VALUES (%[1]d, 'old1', 'ok'), (%[1]d, 'old2', 'ok'), (%[1]d, 'old3', 'ok')`, t0.UnixMilli()),
		`DELETE FROM calls WHERE id = 3`, // the highest id ever used is 3, not 2
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	db.Close()
	s := open(t, path, Options{MaxRows: 100, Now: func() time.Time { return t0 }})
	cp, err := s.LatestCheckpoint(context.Background())
	if err != nil || cp.Seq != 3 || cp.Kind != CheckpointGenesis || cp.Hash != Genesis {
		t.Fatalf("genesis %+v %v", cp, err)
	}
	s.Add(Record{Time: t0, Tool: "new", Outcome: OutcomeOK})
	rep, err := s.Verify(context.Background())
	if err != nil || rep.Records != 1 || rep.Legacy != 2 || rep.Head.Seq != 4 {
		t.Fatalf("verify %+v %v", rep, err)
	}
	if !strings.Contains(rep.Describe("db"), "2 older record(s) predate the chain") {
		t.Fatal(rep.Describe("db"))
	}
	var b bytes.Buffer
	if err := s.Export(context.Background(), Filter{}, "json", &b); err != nil {
		t.Fatal(err)
	}
	if rep, err := VerifyExport(&b); err != nil || rep.Records != 1 || rep.Legacy != 2 {
		t.Fatalf("export %+v %v", rep, err)
	}
	// Retention of only pre-chain rows adds no checkpoint; past them it does.
	s.opts.MaxRows = 2
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cp, _ := s.LatestCheckpoint(context.Background()); cp.Kind != CheckpointGenesis {
		t.Fatalf("checkpoint %+v", cp)
	}
	s.opts.MaxRows = 1
	s.Add(Record{Time: t0, Tool: "new2", Outcome: OutcomeOK})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	if cp, _ := s.LatestCheckpoint(context.Background()); cp.Kind != CheckpointRetention || cp.Seq != 4 {
		t.Fatalf("checkpoint %+v", cp)
	}
	if rep, err := s.Verify(context.Background()); err != nil || rep.Records != 1 || rep.Legacy != 0 {
		t.Fatalf("verify %+v %v", rep, err)
	}
}

func TestVerifyNotChainedOrMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if _, err := VerifyFile(context.Background(), filepath.Join(dir, "none.db"), keyed); err == nil || !strings.Contains(err.Error(), "daemon creates it") {
		t.Fatalf("missing: %v", err)
	}
	path := filepath.Join(dir, "v1.db")
	db, _ := sql.Open("sqlite", "file:"+path)
	_, _ = db.Exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at INTEGER NOT NULL); INSERT INTO schema_migrations VALUES (1, 0)`)
	db.Close()
	_, err := VerifyFile(context.Background(), path, keyed)
	wantBroken(t, err, 0, ProblemNotChained)
}

// Exports edited by hand, or cut short.
func TestVerifyExportFindsEdits(t *testing.T) {
	t.Parallel()
	_, s := chained(t, 6)
	var b bytes.Buffer
	if err := s.Export(context.Background(), Filter{}, "json", &b); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	if rep, err := VerifyExport(strings.NewReader(good)); err != nil || rep.Records != 6 || !rep.Complete || rep.Head != s.Head() {
		t.Fatalf("intact export: %+v %v", rep, err)
	}
	lines := strings.Split(good, "\n") // 0 header, 1 "records": [, 2..7 records 6..1, 8 ], 9 count
	line := func(id int) int { return 2 + 6 - id }
	join := func(ls []string) string { return strings.Join(ls, "\n") }
	fixComma := func(ls []string) []string { // keep the JSON well formed after moving lines
		for i := 2; i < len(ls); i++ {
			if strings.HasPrefix(ls[i], "{") {
				ls[i] = strings.TrimSuffix(ls[i], ",")
				if i+1 < len(ls) && strings.HasPrefix(ls[i+1], "{") {
					ls[i] += ","
				}
			}
		}
		return ls
	}
	for _, c := range []struct {
		name    string
		text    func() string
		seq     int64
		problem string
	}{
		{"one byte changed", func() string { return strings.Replace(good, `"tool":"t3"`, `"tool":"t8"`, 1) }, 3, ProblemAltered},
		{"a number changed", func() string { return strings.Replace(good, `"durationMs":4,`, `"durationMs":5,`, 1) }, 4, ProblemAltered},
		{"deleted row", func() string {
			ls := append([]string{}, lines...)
			ls = append(ls[:line(3)], ls[line(3)+1:]...)
			return strings.Replace(join(fixComma(ls)), `"count": 6`, `"count": 5`, 1)
		}, 3, ProblemMissing},
		{"deleted row, count left", func() string {
			ls := append([]string{}, lines...)
			return join(fixComma(append(ls[:line(3)], ls[line(3)+1:]...)))
		}, 3, ProblemMissing},
		{"reordered pair", func() string {
			ls := append([]string{}, lines...)
			ls[line(4)], ls[line(5)] = ls[line(5)], ls[line(4)]
			return join(fixComma(ls))
		}, 4, ProblemOutOfOrder},
		{"newest removed", func() string {
			ls := append([]string{}, lines...)
			return strings.Replace(join(fixComma(append(ls[:line(6)], ls[line(6)+1:]...))), `"count": 6`, `"count": 5`, 1)
		}, 6, ProblemMissing},
		{"oldest removed", func() string {
			ls := append([]string{}, lines...)
			return strings.Replace(join(fixComma(append(ls[:line(1)], ls[line(1)+1:]...))), `"count": 6`, `"count": 5`, 1)
		}, 1, ProblemMissing},
		{"truncated mid-record", func() string { return good[:len(good)/2] }, 0, ProblemTruncated},
		{"truncated after the records", func() string { return good[:strings.Index(good, `"count"`)] }, 0, ProblemTruncated},
		{"no count", func() string { return good[:strings.Index(good, `,`+"\n"+`"count"`)] + "}\n" }, 0, ProblemTruncated},
		{"an old array export", func() string { return "[\n]\n" }, 0, ProblemNotExport},
		{"not JSON", func() string { return "id,time\n" }, 0, ProblemNotExport},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := VerifyExport(strings.NewReader(c.text()))
			wantBroken(t, err, c.seq, c.problem)
		})
	}
}

// A saved export still verifies after more records were written, and a
// filtered one verifies record by record.
func TestExportVerifiesLater(t *testing.T) {
	t.Parallel()
	_, s := chained(t, 5)
	var saved, filtered bytes.Buffer
	if err := s.Export(context.Background(), Filter{}, "json", &saved); err != nil {
		t.Fatal(err)
	}
	if err := s.Export(context.Background(), Filter{Tool: "t3"}, "json", &filtered); err != nil {
		t.Fatal(err)
	}
	headThen := s.Head()
	for i := 0; i < 20; i++ {
		s.Add(Record{Tool: "later", Outcome: OutcomeOK})
	}
	if _, err := s.Verify(context.Background()); err != nil {
		t.Fatal(err)
	}
	rep, err := VerifyExport(bytes.NewReader(saved.Bytes()))
	if err != nil || rep.Head != headThen || rep.Records != 5 {
		t.Fatalf("saved export: %+v %v", rep, err)
	}
	// The store still holds the record the export names as its head.
	if h, ok, err := s.HashAt(context.Background(), headThen.Seq); err != nil || !ok || h != headThen.Hash {
		t.Fatalf("HashAt %q %v %v", h, ok, err)
	}
	rep, err = VerifyExport(bytes.NewReader(filtered.Bytes()))
	if err != nil || rep.Complete || rep.Records != 1 {
		t.Fatalf("filtered export: %+v %v", rep, err)
	}
	_, err = VerifyExport(strings.NewReader(strings.Replace(filtered.String(), `"t3"`, `"t4"`, 1)))
	wantBroken(t, err, 3, ProblemAltered)
}

// A field Record gains later is covered by the hash without editing the
// canonical form, and left out while empty.
func TestCanonicalFormCoversEveryField(t *testing.T) {
	t.Parallel()
	r := Record{ID: 7, Time: t0, Tool: "click", Outcome: OutcomeOK, Prev: Genesis}
	c := string(Canonical(&r))
	want := HashPrefix + "id=1:7\noutcome=2:ok\nprev=64:" + Genesis + "\ntime=20:2026-08-01T12:00:00Z\ntool=5:click\n"
	if c != want {
		t.Fatalf("canonical:\n%q\nwant\n%q", c, want)
	}
	fields := map[string]string{"id": "7", "time": "2026-08-01T12:00:00Z", "tool": "click", "outcome": "ok", "prev": Genesis}
	if hashFields(fields) != HashRecord(&r) {
		t.Fatal("the export's generic hash differs from the record's")
	}
	fields["secret"] = "NAME" // a kind of record a later torii writes
	if hashFields(fields) == HashRecord(&r) {
		t.Fatal("a new field is not covered")
	}
	if len(canonFields) != 11 {
		t.Fatalf("%d canonical fields", len(canonFields))
	}
}

func TestVerifyWhileTheDaemonWrites(t *testing.T) {
	t.Parallel()
	path, s := chained(t, 100)
	stop := make(chan struct{})
	done := make(chan struct{})
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
	for i := 0; i < 5; i++ {
		if _, err := VerifyFile(context.Background(), path, keyed); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	<-done
}

// A row inserted by hand at the next id does not stop the audit: the
// writer goes on after it, and verify names the forged row.
func TestWriterGoesOnAfterAForgedRow(t *testing.T) {
	t.Parallel()
	path, s := chained(t, 3)
	edit(t, path, `INSERT INTO calls(id, ts, tool, outcome, prev, hash) VALUES (4, 0, 'forged', 'ok', '', '`+strings.Repeat("ab", 32)+`')`)
	s.Add(Record{Tool: "t5", Outcome: OutcomeOK}) // collides with 4, dropped
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.Add(Record{Tool: "t6", Outcome: OutcomeOK})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := tools(all(t, s, Filter{})); g != "t6,forged,t3,t2,t1" {
		t.Fatalf("records: %s", g)
	}
	_, err := s.Verify(context.Background())
	wantBroken(t, err, 4, ProblemAltered)
}
