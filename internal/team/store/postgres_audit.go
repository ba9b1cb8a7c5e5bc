package store

// The PostgreSQL store's audit: the chain (chain.go) in the audit table,
// one line across replicas.

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/pairing"
)

// The audit.

// AppendAudit: SECURITY I-89, the head row's lock makes appends from every
// replica one chain, and the commit is synchronous (openPostgres), so the
// record is durable before the call's reply. Two round trips: BEGIN with the
// head's lock, then the insert, the head's update and COMMIT, so the lock
// that serialises every replica's appends is held for one round trip.
func (s *pgStore) AppendAudit(ctx context.Context, r AuditRecord) (AuditRecord, error) {
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return r, s.wrap(ctx, err)
	}
	// A connection left inside the transaction by an error is closed on
	// release (pgxpool), which ends the transaction and its lock.
	defer c.Release()
	var head audit.Link
	var now time.Time
	b := &pgx.Batch{}
	b.Queue(`BEGIN`)
	b.Queue(`SELECT seq, hash, clock_timestamp() FROM audit_head WHERE id = 1 FOR UPDATE`).QueryRow(func(row pgx.Row) error {
		return row.Scan(&head.Seq, &head.Hash, &now)
	})
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return r, s.wrap(ctx, err)
	}
	seal(&r, head, now)
	b = &pgx.Batch{}
	b.Queue(`INSERT INTO audit (`+auditCols+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`, auditArgs(&r, r.Time)...)
	b.Queue(`UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1`, r.ID, r.Hash)
	b.Queue(`COMMIT`)
	if err := c.SendBatch(ctx, b).Close(); err != nil {
		return r, s.wrap(ctx, err)
	}
	return r, nil
}

func pgAudit(sc scanner) (AuditRecord, error) {
	var r AuditRecord
	err := sc.Scan(&r.ID, &r.Time, &r.Tool, &r.Session, &r.Origin, &r.Outcome, &r.Code, &r.DurationMs, &r.Approval, &r.Secrets, &r.UserID, &r.DeviceID, &r.Replica, &r.Prev, &r.Hash)
	r.Time = r.Time.UTC()
	return r, err
}

func (s *pgStore) AuditRecords(ctx context.Context, userID string, after int64, limit int) ([]AuditRecord, error) {
	return pgCollect(s, ctx, pgAudit, `SELECT `+auditCols+` FROM audit WHERE seq > $1 AND ($2 = '' OR user_id = $2) ORDER BY seq LIMIT $3`, after, userID, auditLimit(limit))
}

func (s *pgStore) Checkpoint(ctx context.Context, id *pairing.Identity) (audit.Checkpoint, error) {
	if id == nil {
		return audit.Checkpoint{}, errors.New("store: a checkpoint needs the gateway's identity to sign it")
	}
	var c audit.Checkpoint
	var now time.Time
	if err := s.pool.QueryRow(ctx, `SELECT seq, hash, now() FROM audit_head WHERE id = 1`).Scan(&c.Seq, &c.Hash, &now); err != nil {
		return c, s.wrap(ctx, err)
	}
	c.Kind, c.At = audit.CheckpointAnchor, time.UnixMilli(now.UnixMilli()).UTC()
	if err := audit.SignCheckpoint(id, &c); err != nil {
		return c, err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO checkpoints (seq, hash, kind, at, sig, key) VALUES ($1, $2, $3, $4, $5, $6)`, c.Seq, c.Hash, c.Kind, c.At, c.Sig, c.Key)
	return c, s.wrap(ctx, err)
}

// VerifyAudit reads the checkpoints and the chain in one snapshot.
func (s *pgStore) VerifyAudit(ctx context.Context, pub []byte) (*audit.ChainError, error) {
	var ce *audit.ChainError
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT seq, hash, kind, at, sig, key FROM checkpoints ORDER BY seq`)
		if err != nil {
			return err
		}
		cps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (audit.Checkpoint, error) {
			var c audit.Checkpoint
			err := row.Scan(&c.Seq, &c.Hash, &c.Kind, &c.At, &c.Sig, &c.Key)
			c.At = c.At.UTC()
			return c, err
		})
		if err != nil {
			return err
		}
		w, bad := newWalk(cps, pub)
		if bad != nil {
			ce = bad
			return nil
		}
		rows, err = tx.Query(ctx, `SELECT `+auditCols+` FROM audit ORDER BY seq`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			r, err := pgAudit(rows)
			if err != nil {
				return err
			}
			if ce = w.next(&r); ce != nil {
				return nil
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		ce = w.end()
		return nil
	})
	if err != nil {
		return nil, s.wrap(ctx, err)
	}
	return ce, nil
}
