package store

// PostgreSQL, for a team run by many replicas (pgx, a pool per replica).
// Every rule that must hold across replicas is the database's: a unique
// name, one decision per pairing request (its row locked in the deciding
// transaction), one audit chain (its head row locked by each append), and
// expiries judged by the database's now(), never a replica's clock.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/torii-browser/torii/internal/pairing"
)

type pgStore struct {
	pool   *pgxpool.Pool
	cfg    *pgxpool.Config
	secret string // the URL's password, dropped from every error text
}

// migrationLock is the advisory lock replicas starting together take
// around migrating, so exactly one applies each migration.
const migrationLock = 0x746f726969 // "torii"

func openPostgres(ctx context.Context, rawURL string) (Store, error) {
	pw := urlPassword(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		return nil, redact(fmt.Errorf("%w: %s is not a PostgreSQL URL pgx can use: %w: set %s to the form postgres://USER:PASSWORD@HOST:5432/DATABASE?sslmode=require", ErrBadURL, redactURL(rawURL), err, urlSetting), pw)
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		// An unreachable host is an error at once, not a hang.
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	if _, set := cfg.ConnConfig.RuntimeParams["synchronous_commit"]; !set {
		// SECURITY I-89: a commit (an audit record, a device, a token) is
		// durable before the store returns, whatever the server's default.
		cfg.ConnConfig.RuntimeParams["synchronous_commit"] = "on"
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, redact(fmt.Errorf("%w: %s: %w", ErrBadURL, redactURL(rawURL), err), pw)
	}
	s := &pgStore{pool: pool, cfg: cfg, secret: pw}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, pgConnError(cfg, err, pw)
	}
	// Migrations run when the server first answers, whenever that is.
	if err := s.migrate(ctx); err != nil {
		// A connection lost mid-way is the server's state, as at Ping;
		// anything else is the migration's.
		ce := migrateError(cfg, err, pw)
		if errors.Is(s.wrap(ctx, err), ErrUnavailable) {
			ce = pgConnError(cfg, err, pw)
		}
		pool.Close()
		return nil, ce
	}
	return s, nil
}

// wrap maps driver errors onto the store's: no row is ErrNotFound, a
// unique key ErrExists, and anything that is not the server's answer to a
// query (a lost connection, a server shutting down) ErrUnavailable. A lost
// connection drops the pool's others too: after a restart they are all
// dead, and the next call gets a fresh one.
func (s *pgStore) wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return ErrNotFound
	}
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrDecided) || errors.Is(err, ErrWrongCode) || errors.Is(err, ErrUnavailable) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case pe.Code == "23505":
			return fmt.Errorf("%w: %s", ErrExists, pe.Message)
		case strings.HasPrefix(pe.Code, "08"), pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03", pe.Code == "53300":
			s.pool.Reset()
			return fmt.Errorf("%w: %w", ErrUnavailable, err)
		}
		return err
	}
	if ctx.Err() != nil {
		return err
	}
	s.pool.Reset()
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

func (s *pgStore) migrate(ctx context.Context) error {
	ms, err := migrations(postgresMigrations, "migrations/postgres")
	if err != nil {
		return err
	}
	c, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	if _, err := c.Exec(ctx, `SELECT pg_advisory_lock($1)`, migrationLock); err != nil {
		return err
	}
	// Released on this session's end too, should the unlock not arrive.
	defer c.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, migrationLock) //nolint:errcheck
	if _, err := c.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	if err := c.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	for _, m := range ms {
		if m.version <= v {
			continue
		}
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("migration %s: %w", m.name, err)
			}
			_, err := tx.Exec(ctx, `INSERT INTO schema_version VALUES ($1)`, m.version)
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Ping says, as a *ConnError, why the server cannot be used now (down,
// or a password changed under a new connection).
func (s *pgStore) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		s.pool.Reset()
		return pgConnError(s.cfg, err, s.secret)
	}
	return nil
}

func (s *pgStore) Close() error { s.pool.Close(); return nil }

func (s *pgStore) tx(ctx context.Context, f func(tx pgx.Tx) error) error {
	return s.wrap(ctx, pgx.BeginFunc(ctx, s.pool, f))
}

func (s *pgStore) exec1(ctx context.Context, q string, args ...any) error {
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return s.wrap(ctx, err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

type scanner interface{ Scan(...any) error }

func pgCollect[T any](s *pgStore, ctx context.Context, scan func(scanner) (T, error), q string, args ...any) ([]T, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, s.wrap(ctx, err)
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, s.wrap(ctx, err)
		}
		out = append(out, v)
	}
	return out, s.wrap(ctx, rows.Err())
}

// Users.

func pgUser(sc scanner) (User, error) {
	var u User
	err := sc.Scan(&u.ID, &u.Name, &u.CreatedAt)
	u.CreatedAt = u.CreatedAt.UTC()
	return u, err
}

func (s *pgStore) CreateUser(ctx context.Context, name string) (User, error) {
	if err := validName(name); err != nil {
		return User{}, err
	}
	u, err := pgUser(s.pool.QueryRow(ctx, `INSERT INTO users VALUES ($1, $2, now()) RETURNING id, name, created_at`, newID(), name))
	if err = s.wrap(ctx, err); errors.Is(err, ErrExists) {
		return User{}, fmt.Errorf("%w: user %q", ErrExists, name)
	}
	return u, err
}

func (s *pgStore) User(ctx context.Context, id string) (User, error) {
	u, err := pgUser(s.pool.QueryRow(ctx, `SELECT id, name, created_at FROM users WHERE id = $1`, id))
	return u, s.wrap(ctx, err)
}

func (s *pgStore) UserByName(ctx context.Context, name string) (User, error) {
	if err := validName(name); err != nil {
		return User{}, err
	}
	u, err := pgUser(s.pool.QueryRow(ctx, `SELECT id, name, created_at FROM users WHERE name = $1`, name))
	return u, s.wrap(ctx, err)
}

func (s *pgStore) Users(ctx context.Context) ([]User, error) {
	return pgCollect(s, ctx, pgUser, `SELECT id, name, created_at FROM users ORDER BY name`)
}

// DeleteUser: the user's tokens, devices, secrets and policy go with it
// (ON DELETE CASCADE, in the same statement).
func (s *pgStore) DeleteUser(ctx context.Context, id string) error {
	return s.exec1(ctx, `DELETE FROM users WHERE id = $1`, id)
}

// Tokens.

func pgToken(sc scanner) (Token, error) {
	var t Token
	err := sc.Scan(&t.ID, &t.UserID, &t.Label, &t.Admin, &t.CreatedAt)
	t.CreatedAt = t.CreatedAt.UTC()
	return t, err
}

func (s *pgStore) CreateToken(ctx context.Context, userID, label string, admin bool) (Token, string, error) {
	if err := validLabel(label, false); err != nil {
		return Token{}, "", err
	}
	secret := newSecret(tokenPrefix)
	t, err := pgToken(s.pool.QueryRow(ctx, `INSERT INTO tokens SELECT $1, id, $2, $3, $4, now() FROM users WHERE id = $5 RETURNING `+tokenCols,
		newID(), tokenHash(secret), label, admin, userID))
	if err != nil {
		return Token{}, "", s.wrap(ctx, err)
	}
	return t, secret, nil
}

// CheckToken is one indexed lookup by the secret's hash (SECURITY I-88).
func (s *pgStore) CheckToken(ctx context.Context, secret string) (Token, error) {
	if secret == "" || len(secret) > maxSecret {
		return Token{}, ErrNotFound
	}
	t, err := pgToken(s.pool.QueryRow(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = $1`, tokenHash(secret)))
	return t, s.wrap(ctx, err)
}

func (s *pgStore) Tokens(ctx context.Context, userID string) ([]Token, error) {
	return pgCollect(s, ctx, pgToken, `SELECT `+tokenCols+` FROM tokens WHERE $1 = '' OR user_id = $1 ORDER BY created_at, id`, userID)
}

func (s *pgStore) RevokeToken(ctx context.Context, id string) error {
	return s.exec1(ctx, `DELETE FROM tokens WHERE id = $1`, id)
}

// Devices.

func pgDevice(sc scanner) (Device, error) {
	var d Device
	err := sc.Scan(&d.ID, &d.UserID, &d.Name, &d.Origin, &d.PublicKey, &d.CreatedAt, &d.LastSeen)
	d.CreatedAt, d.LastSeen = d.CreatedAt.UTC(), d.LastSeen.UTC()
	return d, err
}

const pgInsertDevice = `INSERT INTO devices SELECT $1, id, $2, $3, $4, now(), now() FROM users WHERE id = $5 RETURNING ` + deviceCols

func (s *pgStore) AddDevice(ctx context.Context, userID, name, origin string, publicKey []byte) (Device, error) {
	if err := validDevice(name, origin, publicKey); err != nil {
		return Device{}, err
	}
	d, err := pgDevice(s.pool.QueryRow(ctx, pgInsertDevice, newID(), name, origin, publicKey, userID))
	return d, s.wrap(ctx, err)
}

func (s *pgStore) Device(ctx context.Context, id string) (Device, error) {
	d, err := pgDevice(s.pool.QueryRow(ctx, `SELECT `+deviceCols+` FROM devices WHERE id = $1`, id))
	return d, s.wrap(ctx, err)
}

// UserDevice: SECURITY I-88, the user is in the query, so another user's
// device reads exactly as a missing one.
func (s *pgStore) UserDevice(ctx context.Context, userID, id string) (Device, error) {
	d, err := pgDevice(s.pool.QueryRow(ctx, `SELECT `+deviceCols+` FROM devices WHERE id = $1 AND user_id = $2`, id, userID))
	return d, s.wrap(ctx, err)
}

func (s *pgStore) Devices(ctx context.Context, userID string) ([]Device, error) {
	return pgCollect(s, ctx, pgDevice, `SELECT `+deviceCols+` FROM devices WHERE $1 = '' OR user_id = $1 ORDER BY created_at, id`, userID)
}

func (s *pgStore) TouchDevice(ctx context.Context, id string, t time.Time) error {
	return s.exec1(ctx, `UPDATE devices SET last_seen = GREATEST(last_seen, $2) WHERE id = $1`, id, t)
}

func (s *pgStore) RevokeDevice(ctx context.Context, id string) error {
	return s.exec1(ctx, `DELETE FROM devices WHERE id = $1`, id)
}

func (s *pgStore) RevokeUserDevice(ctx context.Context, userID, id string) error {
	return s.exec1(ctx, `DELETE FROM devices WHERE id = $1 AND user_id = $2`, id, userID)
}

// Pairing requests.

func pgPair(sc scanner) (PairRequest, error) {
	var r PairRequest
	err := sc.Scan(&r.ID, &r.DeviceName, &r.Origin, &r.DeviceKey, &r.Code, &r.State, &r.UserID, &r.DeviceID, &r.CreatedAt, &r.ExpiresAt)
	r.CreatedAt, r.ExpiresAt = r.CreatedAt.UTC(), r.ExpiresAt.UTC()
	return r, err
}

const ms1 = `interval '1 millisecond'`

func (s *pgStore) CreatePairRequest(ctx context.Context, r PairRequest, ttl time.Duration) (PairRequest, error) {
	if err := preparePair(&r); err != nil {
		return PairRequest{}, err
	}
	var out PairRequest
	err := s.tx(ctx, func(tx pgx.Tx) error {
		// Requests long gone are dropped here, not by a timer.
		if _, err := tx.Exec(ctx, `DELETE FROM pair_requests WHERE expires_at < now() - interval '1 day'`); err != nil {
			return err
		}
		var err error
		out, err = pgPair(tx.QueryRow(ctx, `INSERT INTO pair_requests VALUES ($1, $2, $3, $4, $5, $6, '', '', now(), now() + $7 * `+ms1+`) RETURNING `+pairCols,
			newID(), r.DeviceName, r.Origin, r.DeviceKey, r.Code, PairPending, ttl.Milliseconds()))
		return err
	})
	return out, err
}

func (s *pgStore) PairRequest(ctx context.Context, id string) (PairRequest, error) {
	r, err := pgPair(s.pool.QueryRow(ctx, `SELECT `+pairCols+` FROM pair_requests WHERE id = $1`, id))
	return r, s.wrap(ctx, err)
}

func (s *pgStore) PendingPairRequests(ctx context.Context) ([]PairRequest, error) {
	return pgCollect(s, ctx, pgPair, `SELECT `+pairCols+` FROM pair_requests WHERE state = $1 AND expires_at > now() ORDER BY created_at, id`, PairPending)
}

// DecidePair locks the request's row: of two replicas deciding at once,
// the second sees it decided. SECURITY I-89: its expiry is judged by the
// database's clock in the same transaction.
func (s *pgStore) DecidePair(ctx context.Context, id, code, userID string, approve bool) (PairRequest, error) {
	var out PairRequest
	err := s.tx(ctx, func(tx pgx.Tx) error {
		var live bool
		r, err := pgPair(tx.QueryRow(ctx, `SELECT `+pairCols+` FROM pair_requests WHERE id = $1 FOR UPDATE`, id))
		if err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT $1::timestamptz > now()`, r.ExpiresAt).Scan(&live); err != nil {
			return err
		}
		if err := checkDecision(r, live, code, approve); err != nil {
			return err
		}
		if approve {
			d, err := pgDevice(tx.QueryRow(ctx, pgInsertDevice, newID(), r.DeviceName, r.Origin, r.DeviceKey, userID))
			if err != nil {
				return err
			}
			r.DeviceID, r.State = d.ID, PairApproved
		} else {
			r.State = PairDenied
		}
		r.UserID = userID
		_, err = tx.Exec(ctx, `UPDATE pair_requests SET state = $1, user_id = $2, device_id = $3 WHERE id = $4`, r.State, r.UserID, r.DeviceID, id)
		out = r
		return err
	})
	return out, err
}

// One-time secrets.

func (s *pgStore) CreateOTP(ctx context.Context, userID string, ttl time.Duration) (string, error) {
	secret := pairing.EncodeB64(pairing.NewNonce())
	err := s.tx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM otps WHERE expires_at <= now()`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM otps WHERE user_id = $1 AND secret NOT IN
			(SELECT secret FROM otps WHERE user_id = $1 ORDER BY expires_at DESC LIMIT $2)`, userID, maxLiveOTPs-1); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO otps SELECT $1, id, now() + $2 * `+ms1+` FROM users WHERE id = $3`, secret, ttl.Milliseconds(), userID)
		if err == nil && tag.RowsAffected() == 0 {
			return ErrNotFound
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

func (s *pgStore) OTPs(ctx context.Context) ([]OTP, error) {
	return pgCollect(s, ctx, func(sc scanner) (OTP, error) {
		var o OTP
		err := sc.Scan(&o.Secret, &o.UserID, &o.ExpiresAt)
		o.ExpiresAt = o.ExpiresAt.UTC()
		return o, err
	}, `SELECT secret, user_id, expires_at FROM otps WHERE expires_at > now() ORDER BY expires_at`)
}

func (s *pgStore) ConsumeOTP(ctx context.Context, secret string) (string, error) {
	var user string
	err := s.pool.QueryRow(ctx, `DELETE FROM otps WHERE secret = $1 AND expires_at > now() RETURNING user_id`, secret).Scan(&user)
	return user, s.wrap(ctx, err)
}

// Policy.

func (s *pgStore) Policy(ctx context.Context, userID string) (json.RawMessage, error) {
	var p *string
	if err := s.pool.QueryRow(ctx, `SELECT p.policy FROM users u LEFT JOIN policies p ON p.user_id = u.id WHERE u.id = $1`, userID).Scan(&p); err != nil {
		return nil, s.wrap(ctx, err)
	}
	if p == nil {
		return nil, nil
	}
	return json.RawMessage(*p), nil
}

func (s *pgStore) SetPolicy(ctx context.Context, userID string, policy json.RawMessage) error {
	if err := validPolicy(policy); err != nil {
		return err
	}
	if policy == nil {
		return s.tx(ctx, func(tx pgx.Tx) error {
			var one int
			if err := tx.QueryRow(ctx, `SELECT 1 FROM users WHERE id = $1`, userID).Scan(&one); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DELETE FROM policies WHERE user_id = $1`, userID)
			return err
		})
	}
	return s.exec1(ctx, `INSERT INTO policies SELECT id, $2 FROM users WHERE id = $1 ON CONFLICT (user_id) DO UPDATE SET policy = excluded.policy`, userID, string(policy))
}
