package replica

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/toolerr"
)

// calls are the calls this replica runs for browsers homed here, by call
// ID, so a revocation can cancel a token's calls and the audit observer
// knows whose call a record is; and the named sessions each token made
// here, so a revocation can end them.
type calls struct {
	mu       sync.Mutex
	by       map[string]*call
	sessions map[string]map[string]string // token ID → session key → user ID
}

type call struct {
	req    callRequest
	cancel context.CancelFunc
	mu     sync.Mutex
	err    error // the audit write's failure
}

func (c *call) auditErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (cs *calls) init() {
	cs.by = map[string]*call{}
	cs.sessions = map[string]map[string]string{}
}

func (cs *calls) add(req callRequest, cancel context.CancelFunc) *call {
	c := &call{req: req, cancel: cancel}
	cs.mu.Lock()
	cs.by[req.CallID] = c
	cs.mu.Unlock()
	return c
}

func (cs *calls) done(id string) {
	cs.mu.Lock()
	delete(cs.by, id)
	cs.mu.Unlock()
}

func (cs *calls) get(id string) *call {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.by[id]
}

func (cs *calls) session(tokenID, userID, key string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	m := cs.sessions[tokenID]
	if m == nil {
		m = map[string]string{}
		cs.sessions[tokenID] = m
	}
	m[key] = userID
}

// revoke cancels the calls of a token (or, with userID set, of every token
// of a user) and returns the named session keys they made here, forgotten.
func (cs *calls) revoke(tokenID, userID string) []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	for _, c := range cs.by {
		if (tokenID != "" && c.req.TokenID == tokenID) || (userID != "" && c.req.UserID == userID) {
			c.cancel()
		}
	}
	var keys []string
	for tok, m := range cs.sessions {
		for k, u := range m {
			if tok == tokenID || (userID != "" && u == userID) {
				keys = append(keys, k)
				delete(m, k)
			}
		}
		if len(m) == 0 {
			delete(cs.sessions, tok)
		}
	}
	return keys
}

// auditTimeout bounds one audit write; a slower store fails the reply.
const auditTimeout = 10 * time.Second

// auditObserver writes each finished call to the store. It is synchronous
// on purpose: the broker calls CallDone on the calling goroutine before
// the result returns, so the record is durable before the agent hears
// anything (SECURITY I-95); a failed write is kept on the call, whose
// result is then withheld.
type auditObserver struct{ r *replica }

func (o auditObserver) CallDone(a broker.AuditRecord) {
	c := o.r.calls.get(a.Tag)
	if c == nil {
		return // not a bus call (none other reaches this broker)
	}
	err := o.r.appendAudit(audit.Record{Time: a.Time, Tool: a.Tool, Session: a.Session, Origin: a.Origin, Outcome: a.Outcome,
		Code: a.Code, DurationMs: a.Duration.Milliseconds(), Approval: a.Approval, Secrets: a.Secrets}, c.req.UserID, c.req.DeviceID)
	c.mu.Lock()
	c.err = err
	c.mu.Unlock()
}

// appendAudit makes one record durable in the store.
func (r *replica) appendAudit(rec audit.Record, userID, deviceID string) error {
	ctx, cancel := context.WithTimeout(context.Background(), auditTimeout)
	defer cancel()
	_, err := r.st.AppendAudit(ctx, store.AuditRecord{Record: rec, UserID: userID, DeviceID: deviceID, Replica: r.team.Replica})
	r.checks.failed(err) // the next calls ask the store, and hear it is down
	return err
}

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// noBrowser is the one refusal for a browser that is missing, revoked, not
// connected or another user's (SECURITY I-93): the same words whichever.
func noBrowser(nameOrID string) *mcp.CallToolResult {
	e := toolerr.New(toolerr.ExtensionNotConnected, "no browser of yours named %q is connected to the gateway; nothing ran", nameOrID)
	e.Hint = "Call without ?browser= to use your browser that connected last, or pair one (torii pair --server, torii launch --server)."
	return e.Result()
}

// noBrowserAtAll is the refusal when the user has no connected browser.
func noBrowserAtAll() *mcp.CallToolResult {
	e := toolerr.New(toolerr.ExtensionNotConnected, "none of your browsers is connected to the gateway; nothing ran")
	e.Hint = "Open the Torii popup in your paired browser, or pair one (torii pair --server, torii launch --server), then call again."
	return e.Result()
}

func storeDown(ran string) *mcp.CallToolResult {
	e := toolerr.New(toolerr.Internal, "the gateway's database is unavailable; %s", ran)
	e.Hint = "Call again shortly; the gateway's /readyz says when its database is back."
	return e.Result()
}

func auditDown(tool string) *mcp.CallToolResult {
	e := toolerr.New(toolerr.Internal, "%s ran, but its audit record could not be written, so its result is withheld; it may have changed the page", tool)
	e.Hint = "Check the gateway's database (/readyz); call tabs or snapshot to see the page's state before acting again."
	return e.Result()
}

// homeLost is the typed error of a call whose home replica stopped
// answering mid-call: it may have run.
func homeLost(tool string) *mcp.CallToolResult {
	e := toolerr.New(toolerr.DaemonRestarted, "the gateway replica holding your browser stopped answering during %s; it may have run", tool)
	e.Hint = "Your browser reconnects to another replica within seconds; call tabs or snapshot to see the page's state, then call again if needed."
	return e.Result()
}

func draining() *mcp.CallToolResult {
	e := toolerr.New(toolerr.DaemonRestarted, "this gateway replica is shutting down; nothing ran")
	e.Hint = "Call again: another replica takes the call."
	return e.Result()
}
