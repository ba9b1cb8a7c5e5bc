package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/torii-browser/torii/internal/daemon"
)

// printAudit is status's audit line: the chain's head and the last
// cross-check with a browser (SECURITY I-70), a mismatch with what to do,
// and a chain whose ends the daemon did not sign (SECURITY I-74).
func printAudit(w io.Writer, raw json.RawMessage) {
	var st struct {
		Audit *daemon.AuditStatus `json:"audit"`
	}
	if json.Unmarshal(raw, &st) != nil || st.Audit == nil {
		return
	}
	a := st.Audit
	line := fmt.Sprintf("chain head %d (%.12s), kept from %d", a.Head.Seq, a.Head.Hash, a.Checkpoint.Seq+1)
	switch x := a.CrossCheck; {
	case x == nil:
		line += "; no browser cross-check yet"
	case x.OK:
		line += fmt.Sprintf("; browser cross-check ok (%q, %d link(s), %s ago)", x.DeviceName, x.Checked, time.Since(x.At).Round(time.Second))
	default:
		line += fmt.Sprintf("\n             MISMATCH with browser %q at record %d: %s — run `torii audit verify`; keep audit.db as evidence", x.DeviceName, x.Seq, x.Mismatch)
	}
	// SECURITY I-74: a forged or missing checkpoint, or records deleted from
	// the end, with the next step.
	if p := a.Problem; p != nil {
		line += fmt.Sprintf("\n             BROKEN (%s): %s — run `torii audit verify`; %s", p.Problem, p.Detail, p.Next)
	}
	fmt.Fprintf(w, "audit:       %s\n", line)
}
