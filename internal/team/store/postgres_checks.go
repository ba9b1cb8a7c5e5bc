package store

// The PostgreSQL store's batch reads: a replica re-confirms the tokens and
// devices it remembers in one query each, however many.

import "context"

func (s *pgStore) LiveTokens(ctx context.Context, ids []string) ([]string, error) {
	if len(ids) == 0 {
		return []string{}, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT id FROM tokens WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, s.wrap(ctx, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, s.wrap(ctx, err)
		}
		out = append(out, id)
	}
	return out, s.wrap(ctx, rows.Err())
}

func (s *pgStore) UsersDevices(ctx context.Context, userIDs []string) ([]Device, error) {
	if len(userIDs) == 0 {
		return []Device{}, nil
	}
	return pgCollect(s, ctx, pgDevice, `SELECT `+deviceCols+` FROM devices WHERE user_id = ANY($1) ORDER BY created_at, id`, userIDs)
}
