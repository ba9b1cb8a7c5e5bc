package doctor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/torii-browser/torii/internal/audit"
)

// checkAudit fails when a browser's copy of the audit chain's links
// disagrees with the daemon's store (SECURITY I-70): records were edited,
// deleted or the chain rewritten; and when the chain's ends are not what
// the daemon signed (SECURITY I-74): a forged or missing retention
// checkpoint, records deleted from the end. With the daemon stopped it
// checks the ends in the database file itself.
func checkAudit(ctx context.Context, e *Env) Result {
	const name = "audit chain"
	if !e.daemonUp() {
		return checkAuditFile(ctx, e)
	}
	a := e.Status.Audit
	if a == nil {
		return Result{Name: name, Status: Warn, Detail: "the daemon reports no audit chain (an older daemon, or its database did not open)", Fix: e.Self + " restart"}
	}
	if p := a.Problem; p != nil {
		return Result{Name: name, Status: Fail, Detail: p.Detail, Fix: auditFix(e, p.Next)}
	}
	x := a.CrossCheck
	if x != nil && !x.OK {
		return Result{Name: name, Status: Fail,
			Detail: fmt.Sprintf("the audit store disagrees with what browser %q saw at record %d: %s", x.DeviceName, x.Seq, x.Mismatch),
			Fix:    e.Self + " audit verify   (then keep " + e.Paths.AuditDB() + " as evidence, and compare with a saved export: " + e.Self + " audit verify --file EXPORT)"}
	}
	d := fmt.Sprintf("head %d", a.Head.Seq)
	if x != nil {
		return Result{Name: name, Status: OK, Detail: fmt.Sprintf("%s; browser %q cross-checked %d link(s)", d, x.DeviceName, x.Checked)}
	}
	return Result{Name: name, Status: OK, Detail: d + "; no browser has cross-checked it yet"}
}

func auditFix(e *Env, next string) string {
	return e.Self + " audit verify   (it names what is wrong; " + next + ")"
}

// checkAuditFile is the quick check of the chain's ends in audit.db,
// read-only, while the daemon is stopped.
func checkAuditFile(ctx context.Context, e *Env) Result {
	const name = "audit chain"
	path := e.Paths.AuditDB()
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return skipped(name, e)
	}
	o, err := audit.DaemonVerifyOptions(e.Paths.DaemonKey(), e.Paths.AuditHead())
	if err != nil {
		return Result{Name: name, Status: Warn, Detail: "daemon not running; " + err.Error(), Fix: e.Self + " audit verify"}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ce, err := audit.CheckFile(ctx, path, o)
	switch {
	case err != nil:
		return Result{Name: name, Status: Warn, Detail: "daemon not running; " + path + " could not be read: " + err.Error(), Fix: e.Self + " audit verify"}
	case ce != nil && ce.Problem == audit.ProblemNoKey:
		return Result{Name: name, Status: Warn, Detail: ce.Detail, Fix: auditFix(e, ce.Next())}
	case ce != nil:
		return Result{Name: name, Status: Fail, Detail: ce.Detail, Fix: auditFix(e, ce.Next())}
	}
	return Result{Name: name, Status: OK, Detail: "daemon not running; the chain's start and end in " + path + " are what the daemon signed (`" + e.Self + " audit verify` checks every record)"}
}
