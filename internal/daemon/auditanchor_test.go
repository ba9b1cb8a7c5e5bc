package daemon_test

import (
	"database/sql"
	"os"
	"strings"
	"testing"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
)

// daemonKeyed checks a database against the daemon's key and signed head.
func daemonKeyed(t *testing.T, p config.Paths) audit.VerifyOptions {
	t.Helper()
	o, err := audit.DaemonVerifyOptions(p.DaemonKey(), p.AuditHead())
	if err != nil || o.PublicKey == nil {
		t.Fatalf("the daemon's key: %+v %v", o, err)
	}
	return o
}

// SECURITY I-74: the real daemon signs its retention checkpoints and its
// head; a checkpoint written into audit.db behind its back, over deleted
// records, is reported by `status` with the next step, while it runs.
func TestAuditStatusReportsAForgedCheckpoint(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, func(o *daemon.Options) { o.Config.Audit.MaxRows = 2 })
	ctx := tctx(t)
	for i := 0; i < 5; i++ {
		d.Exec(t, "agent", "nope", nil)
	}
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	if st.Audit == nil || st.Audit.Problem != nil || st.Audit.Head.Seq != 5 || st.Audit.Checkpoint.Kind != audit.CheckpointRetention ||
		st.Audit.Checkpoint.Seq != 3 || st.Audit.Checkpoint.Key != st.DaemonID || len(st.Audit.Checkpoint.Sig) != 128 {
		t.Fatalf("the daemon's own retention: %+v", st.Audit)
	}
	rep, err := audit.VerifyFile(ctx, d.Paths.AuditDB(), daemonKeyed(t, d.Paths))
	if err != nil || rep.Records != 2 || rep.SignedHead == nil {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	if fi, err := os.Stat(d.Paths.AuditHead()); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the signed head file: %v %v", fi, err)
	}

	// Record 4 deleted, and a checkpoint for it written by hand: it carries
	// the signature of the daemon's real checkpoint at 3, copied.
	db, err := sql.Open("sqlite", "file:"+d.Paths.AuditDB()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`INSERT INTO checkpoints(seq, hash, kind, at, sig, key) SELECT c.id, c.hash, 'retention', k.at, k.sig, k.key FROM calls c, checkpoints k WHERE c.id = 4 AND k.seq = 3`,
		`DELETE FROM calls WHERE id <= 4`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	d.Call(t, "status", nil, &st)
	p := st.Audit.Problem
	if p == nil || p.Problem != audit.ProblemCheckpointForged || !strings.Contains(p.Detail, "checkpoint signature invalid") ||
		!strings.Contains(p.Detail, "record 4") || !strings.Contains(p.Next, "evidence") {
		t.Fatalf("status after the forgery: %+v", p)
	}
	_, err = audit.VerifyFile(ctx, d.Paths.AuditDB(), daemonKeyed(t, d.Paths))
	if ce, ok := err.(*audit.ChainError); !ok || ce.Problem != audit.ProblemCheckpointForged {
		t.Fatalf("verify after the forgery: %v", err)
	}
}

// SECURITY I-74: records deleted from the end while the daemon runs: its
// status compares the database with the head it wrote.
func TestAuditStatusReportsDeletedNewestRecords(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	for i := 0; i < 4; i++ {
		d.Exec(t, "agent", "nope", nil)
	}
	db, err := sql.Open("sqlite", "file:"+d.Paths.AuditDB()+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st) // every record written
	if st.Audit == nil || st.Audit.Problem != nil || st.Audit.Head.Seq != 4 {
		t.Fatalf("before: %+v", st.Audit)
	}
	if _, err := db.Exec(`DELETE FROM calls WHERE id >= 3`); err != nil {
		t.Fatal(err)
	}
	d.Call(t, "status", nil, &st)
	if p := st.Audit.Problem; p == nil || p.Problem != audit.ProblemMissing || p.Seq != 3 || !strings.Contains(p.Detail, "records after 2 were deleted: the daemon wrote records up to 4") {
		t.Fatalf("status: %+v", p)
	}
}
