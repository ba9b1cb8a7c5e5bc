package replica

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/toolerr"
)

// refusal is a call refused before it reached a browser's broker: nothing
// ran. The broker records what it refuses itself; these never reach one.
type refusal struct {
	start    time.Time
	userID   string // the token's user: whose audit the record is in
	deviceID string // only a device of that user's, else ""
	tool     string // as the agent named it
	session  string // as the agent named it
}

// auditRefusal writes the refusal's record (outcome "refused", the code the
// agent got) and returns res. SECURITY I-93: the record holds only what
// the agent named and its own user and devices, so a refusal for another
// user's device reads exactly as one for a missing device, in the audit as
// in the reply. Nothing ran, so a record that cannot be written is logged
// and the refusal still returned.
func (r *replica) auditRefusal(f refusal, res *mcp.CallToolResult) *mcp.CallToolResult {
	if f.userID == "" {
		return res
	}
	code := string(toolerr.Internal)
	if e := toolerr.FromResult(res); e != nil {
		code = string(e.Code)
	}
	rec := audit.Record{Time: f.start, Tool: f.tool, Session: sessionLabel(f.session), Outcome: audit.OutcomeRefused,
		Code: code, DurationMs: time.Since(f.start).Milliseconds()}
	if err := r.appendAudit(rec, f.userID, f.deviceID); err != nil {
		r.log.Error("replica: audit record of a refused call not written", "user", f.userID, "code", code, "err", err)
	}
	return res
}
