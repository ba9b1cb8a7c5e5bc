package store

// The SQLite store's audit: the chain (chain.go) in the audit table.

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/pairing"
)

// The audit.

const auditCols = `seq, time, tool, session, origin, outcome, code, duration_ms, approval, secrets, user_id, device_id, replica, prev, hash`

func auditArgs(r *AuditRecord, t any) []any {
	return []any{r.ID, t, r.Tool, r.Session, r.Origin, r.Outcome, r.Code, r.DurationMs, r.Approval, r.Secrets, r.UserID, r.DeviceID, r.Replica, r.Prev, r.Hash}
}

func (s *sqliteStore) AppendAudit(ctx context.Context, r AuditRecord) (AuditRecord, error) {
	err := s.write(ctx, func(tx *sql.Tx) error {
		var head audit.Link
		var now int64
		if err := tx.QueryRowContext(ctx, `SELECT seq, hash, `+nowMS+` FROM audit_head WHERE id = 1`).Scan(&head.Seq, &head.Hash, &now); err != nil {
			return err
		}
		seal(&r, head, fromMS(now))
		if _, err := tx.ExecContext(ctx, `INSERT INTO audit (`+auditCols+`) VALUES (?`+strings.Repeat(", ?", 14)+`)`, auditArgs(&r, ms(r.Time))...); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE audit_head SET seq = ?, hash = ? WHERE id = 1`, r.ID, r.Hash)
		return err
	})
	return r, err
}

func scanAudit(sc interface{ Scan(...any) error }) (AuditRecord, error) {
	var r AuditRecord
	var t int64
	err := sc.Scan(&r.ID, &t, &r.Tool, &r.Session, &r.Origin, &r.Outcome, &r.Code, &r.DurationMs, &r.Approval, &r.Secrets, &r.UserID, &r.DeviceID, &r.Replica, &r.Prev, &r.Hash)
	r.Time = fromMS(t)
	return r, err
}

func auditLimit(limit int) int {
	if limit <= 0 || limit > audit.MaxLimit {
		return audit.MaxLimit
	}
	return limit
}

func (s *sqliteStore) AuditRecords(ctx context.Context, userID string, after int64, limit int) ([]AuditRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+auditCols+` FROM audit WHERE seq > ? AND (? = '' OR user_id = ?) ORDER BY seq LIMIT ?`, after, userID, userID, auditLimit(limit))
	if err != nil {
		return nil, err
	}
	return collect(rows, scanAudit)
}

func (s *sqliteStore) Checkpoint(ctx context.Context, id *pairing.Identity) (audit.Checkpoint, error) {
	if id == nil {
		return audit.Checkpoint{}, errors.New("store: a checkpoint needs the gateway's identity to sign it")
	}
	var c audit.Checkpoint
	err := s.write(ctx, func(tx *sql.Tx) error {
		var now int64
		if err := tx.QueryRowContext(ctx, `SELECT seq, hash, `+nowMS+` FROM audit_head WHERE id = 1`).Scan(&c.Seq, &c.Hash, &now); err != nil {
			return err
		}
		c.Kind, c.At = audit.CheckpointAnchor, fromMS(now)
		if err := audit.SignCheckpoint(id, &c); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO checkpoints (seq, hash, kind, at, sig, key) VALUES (?, ?, ?, ?, ?, ?)`, c.Seq, c.Hash, c.Kind, ms(c.At), c.Sig, c.Key)
		return err
	})
	return c, err
}

func (s *sqliteStore) VerifyAudit(ctx context.Context, pub []byte) (*audit.ChainError, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT seq, hash, kind, at, sig, key FROM checkpoints ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	cps, err := collect(rows, func(sc interface{ Scan(...any) error }) (audit.Checkpoint, error) {
		var c audit.Checkpoint
		var at int64
		err := sc.Scan(&c.Seq, &c.Hash, &c.Kind, &at, &c.Sig, &c.Key)
		c.At = fromMS(at)
		return c, err
	})
	if err != nil {
		return nil, err
	}
	w, ce := newWalk(cps, pub)
	if ce != nil {
		return ce, nil
	}
	rows, err = s.db.QueryContext(ctx, `SELECT `+auditCols+` FROM audit ORDER BY seq`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanAudit(rows)
		if err != nil {
			return nil, err
		}
		if ce := w.next(&r); ce != nil {
			return ce, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return w.end(), nil
}
