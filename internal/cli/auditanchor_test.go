package cli

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/audit"
)

// auditedState runs the real daemon with a retention of 4 rows, makes 8
// calls through it (each audited, as tool_not_found) and stops it: audit.db
// then keeps records 5 to 8, after the retention checkpoint at 4 that the
// daemon wrote.
func auditedState(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	if err := os.WriteFile(filepath.Join(e.config, "config.json"), []byte(`{"listen":"127.0.0.1:0","audit":{"maxRows":4}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	e.serve()
	for i := 0; i < 8; i++ {
		if r := e.run("", "exec", "nope"); r.code == 0 {
			t.Fatalf("exec of an unknown tool succeeded: %+v", r)
		}
	}
	if r := e.run("", "stop"); r.code != 0 {
		t.Fatalf("stop: %+v", r)
	}
	r := e.run("", "audit", "verify")
	if r.code != 0 || !strings.Contains(r.stdout, "chain ok: 4 record(s) verified (5 to 8)") || !strings.Contains(r.stdout, "retention checkpoint at 4") {
		t.Fatalf("the daemon's own chain: %+v", r)
	}
	return e
}

// doctorAudit is doctor's "audit chain" check, from its JSON.
func doctorAudit(t *testing.T, e *env) (status, detail, fix string) {
	t.Helper()
	r := e.run("", "doctor", "--json")
	var rs struct {
		Checks []struct {
			Name, Status, Detail, Fix string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rs); err != nil {
		t.Fatalf("doctor --json: %v\n%+v", err, r)
	}
	for _, x := range rs.Checks {
		if x.Name == "audit chain" {
			return x.Status, x.Detail, x.Fix
		}
	}
	t.Fatalf("doctor has no audit chain check:\n%s", r.stdout)
	return
}

// SECURITY I-74: someone who can write audit.db, but not the daemon's key,
// deletes records through SQL on the real file: the oldest ones with a
// retention checkpoint of their own making, the oldest ones alone, or the
// newest ones; or adds one after the newest, chained with a hash of its own. `torii audit verify` (the daemon stopped, then running),
// `torii status` and `torii doctor` each name what is wrong and the next
// step, through the real binary and a real daemon.
func TestAuditCheckpointForgedOrMissing(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		stmts []string
		want  string
	}{
		{"forged retention checkpoint", []string{
			`INSERT INTO checkpoints(seq, hash, kind, at) SELECT id, hash, 'retention', CAST(strftime('%s', 'now') AS INTEGER) * 1000 FROM calls WHERE id = 6`,
			`DELETE FROM calls WHERE id <= 6`,
		}, "checkpoint signature invalid"},
		{"oldest deleted, no checkpoint", []string{`DELETE FROM calls WHERE id <= 6`}, "checkpoint missing: records before 7 were deleted"},
		{"every checkpoint deleted but genesis", []string{
			`DELETE FROM calls WHERE id <= 6`,
			`DELETE FROM checkpoints WHERE kind = 'retention'`,
			`UPDATE checkpoints SET seq = 6 WHERE kind = 'genesis'`,
		}, "checkpoint missing: records before 7 were deleted"},
		{"newest deleted", []string{`DELETE FROM calls WHERE id >= 7`}, "records after 6 were deleted"},
		{"one added while the daemon was stopped", nil, "records 9 to 9 were added while the daemon was stopped"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := auditedState(t)
			path := filepath.Join(e.state, "audit.db")
			if c.stmts == nil {
				c.stmts = []string{forgedNext(t, path)}
			}
			sqlEdit(t, path, c.stmts...)

			r := e.run("", "audit", "verify")
			if r.code != 1 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "evidence") {
				t.Fatalf("verify, daemon stopped: %+v", r)
			}
			e.serve()
			if r := e.run("", "audit", "verify"); r.code != 1 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("verify, daemon running: %+v", r)
			}
			if r := e.run("", "status"); r.code != 0 || !strings.Contains(r.stdout, c.want) || !strings.Contains(r.stdout, "torii audit verify") {
				t.Fatalf("status: %+v", r)
			}
			st, detail, fix := doctorAudit(t, e)
			if st != "FAIL" || !strings.Contains(detail, c.want) || !strings.Contains(fix, "audit verify") {
				t.Fatalf("doctor: %s %q fix %q", st, detail, fix)
			}
			// The daemon still stands by what it signed: once stopped again the
			// file still fails, and doctor checks it without the daemon.
			if r := e.run("", "stop"); r.code != 0 {
				t.Fatalf("stop: %+v", r)
			}
			if r := e.run("", "audit", "verify"); r.code != 1 || !strings.Contains(r.stderr, c.want) {
				t.Fatalf("verify after a restart: %+v", r)
			}
			if st, detail, _ := doctorAudit(t, e); st != "FAIL" || !strings.Contains(detail, c.want) {
				t.Fatalf("doctor, daemon stopped: %s %q", st, detail)
			}
		})
	}
}

// forgedNext is an INSERT of a record after the newest, chained to it with
// a correct hash: the chain alone verifies it.
func forgedNext(t *testing.T, path string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var last audit.Record
	var ts int64
	if err := db.QueryRow(`SELECT id, ts, hash FROM calls ORDER BY id DESC LIMIT 1`).Scan(&last.ID, &ts, &last.Hash); err != nil {
		t.Fatal(err)
	}
	r := audit.Record{ID: last.ID + 1, Time: time.UnixMilli(ts).UTC(), Tool: "forged", Session: "exec", Outcome: audit.OutcomeOK, Prev: last.Hash}
	r.Hash = audit.HashRecord(&r)
	return fmt.Sprintf(`INSERT INTO calls(id, ts, tool, session, outcome, prev, hash) VALUES (%d, %d, 'forged', 'exec', 'ok', '%s', '%s')`, r.ID, ts, r.Prev, r.Hash)
}
