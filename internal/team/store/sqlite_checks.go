package store

// The SQLite store's batch reads (see postgres_checks.go), in chunks that
// stay under SQLite's bound on a statement's parameters.

import (
	"context"
	"strings"
)

const sqliteChunk = 500

func (s *sqliteStore) LiveTokens(ctx context.Context, ids []string) ([]string, error) {
	out := []string{}
	for part := range chunks(ids) {
		rows, err := s.db.QueryContext(ctx, `SELECT id FROM tokens WHERE id IN (`+marks(len(part))+`)`, anys(part)...)
		if err != nil {
			return nil, err
		}
		got, err := collect(rows, func(sc interface{ Scan(...any) error }) (string, error) {
			var id string
			return id, sc.Scan(&id)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

func (s *sqliteStore) UsersDevices(ctx context.Context, userIDs []string) ([]Device, error) {
	out := []Device{}
	for part := range chunks(userIDs) {
		rows, err := s.db.QueryContext(ctx, `SELECT `+deviceCols+` FROM devices WHERE user_id IN (`+marks(len(part))+`) ORDER BY created_at, id`, anys(part)...)
		if err != nil {
			return nil, err
		}
		got, err := collect(rows, scanDevice)
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	return out, nil
}

func chunks(ids []string) func(yield func([]string) bool) {
	return func(yield func([]string) bool) {
		for len(ids) > 0 {
			n := min(len(ids), sqliteChunk)
			if !yield(ids[:n]) {
				return
			}
			ids = ids[n:]
		}
	}
}

func marks(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }

func anys(ids []string) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}
