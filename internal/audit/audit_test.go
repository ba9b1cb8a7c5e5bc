package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/logwait"
	"github.com/torii-browser/torii/internal/pairing"
)

var t0 = time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)

// testKey is the daemon's key in these tests; verify checks retention
// checkpoints against it (keyed).
var testKey = func() *pairing.Identity {
	id, err := pairing.NewIdentityFromScalar(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		panic(err)
	}
	return id
}()

var keyed = VerifyOptions{PublicKey: testKey.PublicKey()}

// open opens a store that signs with testKey unless opts names a key.
func open(t *testing.T, path string, opts Options) *Store {
	t.Helper()
	if opts.Key == nil {
		opts.Key = testKey
	}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func all(t *testing.T, s *Store, f Filter) []Record {
	t.Helper()
	var out []Record
	if err := s.Each(context.Background(), f, func(r Record) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func tools(rs []Record) string {
	var n []string
	for _, r := range rs {
		n = append(n, r.Tool)
	}
	return strings.Join(n, ",")
}

func TestInsertFiltersAndPaging(t *testing.T) {
	t.Parallel()
	now := t0
	s := open(t, filepath.Join(t.TempDir(), "audit.db"), Options{Now: func() time.Time { return now }})
	recs := []Record{
		{Time: t0.Add(-3 * time.Hour), Tool: "navigate", Session: "a", Origin: "https://a.example", Outcome: OutcomeOK, DurationMs: 5},
		{Time: t0.Add(-2 * time.Hour), Tool: "click", Session: "a", Origin: "https://a.example", Outcome: OutcomeError, Code: "stale_ref", DurationMs: 7},
		{Time: t0.Add(-1 * time.Hour), Tool: "fill", Session: "b", Origin: "https://b.example", Outcome: OutcomeOK, Approval: "approved", DurationMs: 9},
		{Time: t0.Add(-1 * time.Minute), Tool: "click", Session: "b", Outcome: OutcomeError, Code: "origin_not_allowed"},
	}
	for _, r := range recs {
		s.Add(r)
	}
	got := all(t, s, Filter{})
	if tools(got) != "click,fill,click,navigate" {
		t.Fatalf("newest first: %s", tools(got))
	}
	if got[1].ID <= 0 || !got[1].Time.Equal(recs[2].Time) || got[1].Approval != "approved" || got[1].DurationMs != 9 || got[1].Origin != "https://b.example" {
		t.Fatalf("round trip: %+v", got[1])
	}
	for _, c := range []struct {
		f    Filter
		want string
	}{
		{Filter{Tool: "click"}, "click,click"},
		{Filter{Session: "a"}, "click,navigate"},
		{Filter{Outcome: OutcomeError}, "click,click"},
		{Filter{Code: "stale_ref"}, "click"},
		{Filter{Origin: "https://b.example"}, "fill"},
		{Filter{Since: t0.Add(-90 * time.Minute)}, "click,fill"},
		{Filter{Until: t0.Add(-90 * time.Minute)}, "click,navigate"},
		{Filter{Since: t0.Add(-150 * time.Minute), Until: t0.Add(-30 * time.Minute)}, "fill,click"},
		{Filter{Session: "b", Outcome: OutcomeOK}, "fill"},
		{Filter{Limit: 1}, "click"},
		{Filter{Tool: "nope"}, ""},
	} {
		if g := tools(all(t, s, c.f)); g != c.want {
			t.Errorf("%+v: %q, want %q", c.f, g, c.want)
		}
	}
	// Paging with Query.
	p, err := s.Query(context.Background(), Filter{Limit: 3})
	if err != nil || len(p.Records) != 3 || p.Next != p.Records[2].ID {
		t.Fatalf("page 1: %+v %v", p, err)
	}
	p2, err := s.Query(context.Background(), Filter{Limit: 3, BeforeID: p.Next})
	if err != nil || tools(p2.Records) != "navigate" || p2.Next != 0 {
		t.Fatalf("page 2: %+v %v", p2, err)
	}
	if _, err := s.Query(context.Background(), Filter{Outcome: "maybe"}); err == nil {
		t.Fatal("bad outcome accepted")
	}
}

func TestRetentionByAgeAndCount(t *testing.T) {
	t.Parallel()
	now := t0
	s := open(t, filepath.Join(t.TempDir(), "audit.db"), Options{MaxAge: 24 * time.Hour, MaxRows: 5, Interval: time.Hour,
		Now: func() time.Time { return now }})
	s.Add(Record{Time: t0.Add(-48 * time.Hour), Tool: "old", Outcome: OutcomeOK})
	for i := 0; i < 8; i++ {
		s.Add(Record{Time: t0.Add(time.Duration(i) * time.Second), Tool: "t" + string(rune('0'+i)), Outcome: OutcomeOK})
	}
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The writer prunes early once MaxRows/10 rows arrived; run it anyway.
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := tools(all(t, s, Filter{})); g != "t7,t6,t5,t4,t3" {
		t.Fatalf("after count retention: %s", g)
	}
	now = t0.Add(24*time.Hour + 4*time.Second)
	if _, err := s.Prune(context.Background()); err != nil {
		t.Fatal(err)
	}
	if g := tools(all(t, s, Filter{})); g != "t7,t6,t5,t4" {
		t.Fatalf("after age retention: %s", g)
	}
}

func TestRetentionRunsOnTimer(t *testing.T) {
	t.Parallel()
	now := t0
	var mu = make(chan struct{}, 1)
	mu <- struct{}{}
	clock := func() time.Time { <-mu; defer func() { mu <- struct{}{} }(); return now }
	var logs logwait.Buffer
	s := open(t, filepath.Join(t.TempDir(), "audit.db"), Options{MaxAge: time.Hour, Interval: 20 * time.Millisecond, Now: clock,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	s.Add(Record{Time: t0, Tool: "x", Outcome: OutcomeOK})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	<-mu
	now = t0.Add(2 * time.Hour)
	mu <- struct{}{}
	if err := logs.Wait(`msg="audit: retention deleted rows" rows=1`, 5*time.Second); err != nil {
		t.Fatalf("the timer never pruned the expired row: %v", err)
	}
	if n := len(all(t, s, Filter{})); n != 0 {
		t.Fatalf("%d rows after retention", n)
	}
}

func TestExportShape(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "audit.db"), Options{Now: func() time.Time { return t0 }})
	s.Add(Record{Time: t0, Tool: "click", Session: "agent:x", Origin: "https://a.example", Outcome: OutcomeError, Code: "stale_ref", DurationMs: 12})
	s.Add(Record{Time: t0.Add(1500 * time.Millisecond), Tool: "fill", Session: "=HYPERLINK(\"x\")", Outcome: OutcomeOK, Approval: "approved", DurationMs: 3})
	var j, c bytes.Buffer
	if err := s.Export(context.Background(), Filter{}, "json", &j); err != nil {
		t.Fatal(err)
	}
	const h1 = "b260618eada4283134266b695ee14470ff64592b302feb99cbc0129381753014"
	const h2 = "579213bf1b7a97baa3c6d31c6080c681be137d4d630d42955a36b28fba0656c6"
	cp, _ := s.LatestCheckpoint(context.Background())
	at, _ := json.Marshal(cp.At)
	wantJSON := `{"format":"torii-audit-export","version":1,"chain":{"head":{"seq":2,"hash":"` + h2 + `"},"checkpoint":{"seq":0,"hash":"` + Genesis + `","kind":"genesis","at":` + string(at) + `}},"complete":true,
"records": [
{"id":2,"time":"2026-08-01T12:00:01.5Z","tool":"fill","session":"=HYPERLINK(\"x\")","origin":"","outcome":"ok","code":"","durationMs":3,"approval":"approved","prev":"` + h1 + `","hash":"` + h2 + `"},
{"id":1,"time":"2026-08-01T12:00:00Z","tool":"click","session":"agent:x","origin":"https://a.example","outcome":"error","code":"stale_ref","durationMs":12,"approval":"","prev":"` + Genesis + `","hash":"` + h1 + `"}
],
"count": 2}
`
	if j.String() != wantJSON {
		t.Fatalf("json:\n%s\nwant:\n%s", j.String(), wantJSON)
	}
	var parsed struct {
		Records []Record `json:"records"`
		Count   int      `json:"count"`
	}
	if err := json.Unmarshal(j.Bytes(), &parsed); err != nil || len(parsed.Records) != 2 || parsed.Count != 2 {
		t.Fatalf("json does not parse: %v", err)
	}
	if err := s.Export(context.Background(), Filter{}, "csv", &c); err != nil {
		t.Fatal(err)
	}
	wantCSV := "id,time,tool,session,origin,outcome,code,durationMs,approval,secrets,prev,hash\n" +
		"2,2026-08-01T12:00:01.5Z,fill,\"'=HYPERLINK(\"\"x\"\")\",,ok,,3,approved,," + h1 + "," + h2 + "\n" +
		"1,2026-08-01T12:00:00Z,click,agent:x,https://a.example,error,stale_ref,12,,," + Genesis + "," + h1 + "\n"
	if c.String() != wantCSV {
		t.Fatalf("csv:\n%s\nwant:\n%s", c.String(), wantCSV)
	}
	// Empty exports are still well formed.
	j.Reset()
	c.Reset()
	_ = s.Export(context.Background(), Filter{Tool: "none"}, "json", &j)
	_ = s.Export(context.Background(), Filter{Tool: "none"}, "csv", &c)
	if !strings.HasSuffix(j.String(), `"records": [],`+"\n"+`"count": 0}`+"\n") || c.String() != "id,time,tool,session,origin,outcome,code,durationMs,approval,secrets,prev,hash\n" {
		t.Fatalf("empty: %q %q", j.String(), c.String())
	}
	if err := s.Export(context.Background(), Filter{}, "xml", &j); err == nil {
		t.Fatal("unknown format accepted")
	}
}

func TestFileModeAndReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Add(Record{Tool: "snapshot", Outcome: OutcomeOK})
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			if p == path {
				t.Fatal(err)
			}
			continue
		}
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %o, want 600", filepath.Base(p), fi.Mode().Perm())
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.Add(Record{Tool: "after-close"}) // ignored, no panic
	// A file made readable by others is tightened on open.
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, path, Options{})
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode after reopen %o", fi.Mode().Perm())
	}
	if v, err := s2.SchemaVersion(); err != nil || v != len(migrations) {
		t.Fatalf("schema version %d %v", v, err)
	}
	got := all(t, s2, Filter{})
	if len(got) != 1 || got[0].Tool != "snapshot" {
		t.Fatalf("after reopen: %+v", got)
	}
}

func TestNewerSchemaRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_migrations(version, applied_at) VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path, Options{}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Fatalf("newer schema: %v", err)
	}
}

// A Record has only metadata fields (SECURITY I-31): adding a field that
// could hold arguments, text or results must be a deliberate change here.
func TestRecordFieldsAreMetadataOnly(t *testing.T) {
	t.Parallel()
	var names []string
	rt := reflect.TypeFor[Record]()
	for i := 0; i < rt.NumField(); i++ {
		names = append(names, rt.Field(i).Name)
	}
	if got := strings.Join(names, ","); got != "ID,Time,Tool,Session,Origin,Outcome,Code,DurationMs,Approval,Secrets,Prev,Hash" {
		t.Fatalf("Record fields changed: %s — the audit is metadata only (SECURITY I-31)", got)
	}
}

func TestClip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("é", 200) // 400 bytes
	if c := clip(long); len(c) > 256 || !strings.HasPrefix(long, c) {
		t.Fatalf("clip: %d bytes", len(c))
	}
}
