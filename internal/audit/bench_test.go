package audit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// benchDB builds (once per run) a database of n chained records the way the
// writer does, in batches.
func benchDB(b *testing.B, n int) string {
	b.Helper()
	dir := os.Getenv("TORII_AUDIT_BENCH_DIR") // reuse a built database across runs
	if dir == "" {
		dir = b.TempDir()
	}
	path := filepath.Join(dir, "audit-"+strconv.Itoa(n)+".db")
	if _, err := os.Stat(path); err == nil {
		return path
	}
	s, err := Open(path, Options{MaxRows: n + 1, MaxAge: 3650 * 24 * time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	start := time.Now()
	batch := make([]*Record, 0, 10000)
	for i := 1; i <= n; i++ {
		batch = append(batch, &Record{Time: time.Now(), Tool: "click", Session: fmt.Sprintf("agent:claude:%d", i%7),
			Origin: "https://shop.example", Outcome: OutcomeOK, DurationMs: int64(i % 900), Approval: "approved"})
		if len(batch) == cap(batch) || i == n {
			if err := s.insert(context.Background(), batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	b.Logf("built %d records in %s", n, time.Since(start))
	return path
}

// BenchmarkVerify1M: `torii audit verify` of a million records (the target
// is at most 5 s).
func BenchmarkVerify1M(b *testing.B) {
	path := benchDB(b, 1_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := VerifyFile(context.Background(), path, keyed)
		if err != nil || rep.Records != 1_000_000 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
}
