package doctor

import (
	"context"
	"fmt"
)

// checkAudit fails when a browser's copy of the audit chain's links
// disagrees with the daemon's store (SECURITY I-70): records were edited,
// deleted or the chain rewritten.
func checkAudit(_ context.Context, e *Env) Result {
	const name = "audit chain"
	if !e.daemonUp() {
		return skipped(name, e)
	}
	a := e.Status.Audit
	if a == nil {
		return Result{Name: name, Status: Warn, Detail: "the daemon reports no audit chain (an older daemon, or its database did not open)", Fix: e.Self + " restart"}
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
