package replica

import (
	"sync"
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
	switch r.refusals.take(f.userID) {
	case overBudget:
		return res
	case firstOverBudget:
		code = refusalsOverBudget
	}
	rec := audit.Record{Time: f.start, Tool: f.tool, Session: sessionLabel(f.session), Outcome: audit.OutcomeRefused,
		Code: code, DurationMs: time.Since(f.start).Milliseconds()}
	if err := r.appendAudit(rec, f.userID, f.deviceID); err != nil {
		r.log.Error("replica: audit record of a refused call not written", "user", f.userID, "code", code, "err", err)
	}
	return res
}

// refusalsPerMinute is how many refused calls of one user a minute are
// recorded one by one. A refusal costs the agent nothing but costs every
// replica a turn at the audit chain's one lock, so past the budget the
// first refusal is recorded with code refusalsOverBudget and the rest of
// that minute's are answered as before but not recorded (SECURITY I-95).
const refusalsPerMinute = 600

// refusalsOverBudget is the code of the record that says a user's refused
// calls are no longer recorded one by one until the minute ends.
const refusalsOverBudget = "refusals_over_budget"

type budgetState int

const (
	withinBudget budgetState = iota
	firstOverBudget
	overBudget
)

// refusalBudget counts each user's refusals in fixed one-minute windows.
type refusalBudget struct {
	max int              // 0: refusalsPerMinute
	now func() time.Time // nil: time.Now

	mu     sync.Mutex
	window time.Time      // the current minute
	counts map[string]int // refusals per user in it
}

func (b *refusalBudget) take(userID string) budgetState {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if b.now != nil {
		now = b.now()
	}
	max := b.max
	if max == 0 {
		max = refusalsPerMinute
	}
	if w := now.Truncate(time.Minute); !w.Equal(b.window) || b.counts == nil {
		b.window, b.counts = w, map[string]int{}
	}
	b.counts[userID]++
	switch n := b.counts[userID]; {
	case n <= max:
		return withinBudget
	case n == max+1:
		return firstOverBudget
	}
	return overBudget
}
