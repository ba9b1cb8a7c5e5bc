package daemon

import (
	"context"
	"encoding/json"
	"time"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/wire"
)

// openAudit opens the audit database in the state directory with the
// configured retention and registers it as the broker's Observer.
func (d *daemon) openAudit() error {
	// SECURITY I-74: retention checkpoints and the head are signed with the
	// daemon's identity key; the signed head is kept beside it.
	st, err := audit.Open(d.opts.Paths.AuditDB(), audit.Options{MaxAge: d.opts.Config.Audit.MaxAge(),
		MaxRows: d.opts.Config.Audit.Rows(), Interval: d.opts.auditInterval, Logger: d.log,
		Key: d.identity, HeadFile: d.opts.Paths.AuditHead()})
	if err != nil {
		return err
	}
	d.audit = st
	d.broker.SetObserver(auditObserver{st})
	return nil
}

// auditObserver writes the broker's finished calls to the store.
// SECURITY I-31: broker.AuditRecord has no arguments, text or results to
// copy; this adapter copies field by field, nothing else.
type auditObserver struct{ st *audit.Store }

func (o auditObserver) CallDone(r broker.AuditRecord) {
	o.st.Add(audit.Record{Time: r.Time, Tool: r.Tool, Session: r.Session, Origin: r.Origin, Outcome: r.Outcome,
		Code: r.Code, DurationMs: r.Duration.Milliseconds(), Approval: r.Approval, Secrets: r.Secrets})
}

// AuditQueryParams is `audit.query`: audit.Filter's fields (since/until
// RFC 3339, tool, session, outcome, code, origin, beforeId, limit ≤ 5000).
type AuditQueryParams = audit.Filter

// AuditQueryResult is one page, newest first; next is the beforeId of the
// following page (absent on the last).
type AuditQueryResult = audit.Page

func (d *daemon) handleAuditQuery(ctx context.Context, raw json.RawMessage) (any, error) {
	f, err := params[AuditQueryParams](raw, "audit.query")
	if err != nil {
		return nil, err
	}
	if err := f.Validate(); err != nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "audit.query: %v", err)
	}
	if f.Limit > audit.MaxLimit {
		return nil, wire.Errorf(wire.CodeInvalidParams, "audit.query: limit must be at most %d (page with beforeId)", audit.MaxLimit)
	}
	if d.audit == nil {
		return nil, wire.Errorf(wire.CodeInternalError, "audit.query: the audit database is not open")
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return d.audit.Query(ctx, f)
}
