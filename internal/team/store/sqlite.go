package store

// SQLite, for a team run by one replica: the same schema and rules as
// Postgres, in one file (modernc.org/sqlite, pure Go). Writes take the
// database's write lock at BEGIN (_txlock=immediate), so even two
// processes on the file serialise; the database's clock is this machine's.

import (
	"context"
	"crypto/subtle"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/torii-browser/torii/internal/pairing"
)

// nowMS is the database's now, in Unix milliseconds.
const nowMS = `CAST(unixepoch('subsec') * 1000 AS INTEGER)`

type sqliteStore struct {
	db  *sql.DB
	wmu sync.Mutex // one writer of this process at a time, without busy waits
}

func openSQLite(ctx context.Context, path string) (Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("%w: sqlite:%s: give a file path without ? or #, as sqlite:/var/lib/torii/team.db", ErrBadURL, path)
	}
	// SECURITY I-88: the file holds token hashes and live pairing secrets: 0600.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: open sqlite:%s: %w (check the directory exists and is writable)", path, err)
	}
	f.Close()
	db, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate&_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=foreign_keys(1)")
	if err != nil {
		return nil, err
	}
	s := &sqliteStore{db: db}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: sqlite:%s: %w", path, err)
	}
	return s, nil
}

func (s *sqliteStore) migrate(ctx context.Context) error {
	ms, err := migrations(sqliteMigrations, "migrations/sqlite")
	if err != nil {
		return err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
		return err
	}
	var v int
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return err
	}
	for _, m := range ms {
		if m.version <= v {
			continue
		}
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version VALUES (?)`, m.version); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func (s *sqliteStore) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return nil
}

func (s *sqliteStore) Close() error { return s.db.Close() }

func ms(t time.Time) int64     { return t.UnixMilli() }
func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

func isUnique(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && (se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY)
}

// write runs f in a write transaction.
func (s *sqliteStore) write(ctx context.Context, f func(tx *sql.Tx) error) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := f(tx); err != nil {
		return err
	}
	return tx.Commit()
}

func (s *sqliteStore) exec1(ctx context.Context, q string, args ...any) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	res, err := s.db.ExecContext(ctx, q, args...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}

func notFound(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	return err
}

// Users.

func (s *sqliteStore) CreateUser(ctx context.Context, name string) (User, error) {
	if err := validName(name); err != nil {
		return User{}, err
	}
	u := User{ID: newID(), Name: name}
	var at int64
	s.wmu.Lock()
	err := s.db.QueryRowContext(ctx, `INSERT INTO users VALUES (?, ?, `+nowMS+`) RETURNING created_at`, u.ID, name).Scan(&at)
	s.wmu.Unlock()
	if isUnique(err) {
		return User{}, fmt.Errorf("%w: user %q", ErrExists, name)
	}
	u.CreatedAt = fromMS(at)
	return u, err
}

func scanUser(sc interface{ Scan(...any) error }) (User, error) {
	var u User
	var at int64
	err := sc.Scan(&u.ID, &u.Name, &at)
	u.CreatedAt = fromMS(at)
	return u, notFound(err)
}

func (s *sqliteStore) User(ctx context.Context, id string) (User, error) {
	return scanUser(s.db.QueryRowContext(ctx, `SELECT id, name, created_at FROM users WHERE id = ?`, id))
}

func (s *sqliteStore) UserByName(ctx context.Context, name string) (User, error) {
	if err := validName(name); err != nil {
		return User{}, err
	}
	return scanUser(s.db.QueryRowContext(ctx, `SELECT id, name, created_at FROM users WHERE name = ?`, name))
}

func (s *sqliteStore) Users(ctx context.Context) ([]User, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, name, created_at FROM users ORDER BY name`)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanUser)
}

func collect[T any](rows *sql.Rows, scan func(sc interface{ Scan(...any) error }) (T, error)) ([]T, error) {
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// DeleteUser: the user's tokens, devices, secrets and policy go with it
// (ON DELETE CASCADE, in the same statement).
func (s *sqliteStore) DeleteUser(ctx context.Context, id string) error {
	return s.exec1(ctx, `DELETE FROM users WHERE id = ?`, id)
}

// Tokens.

func (s *sqliteStore) CreateToken(ctx context.Context, userID, label string, admin bool) (Token, string, error) {
	if err := validLabel(label, false); err != nil {
		return Token{}, "", err
	}
	secret := newSecret(tokenPrefix)
	t := Token{ID: newID(), UserID: userID, Label: label, Admin: admin}
	var at int64
	s.wmu.Lock()
	err := s.db.QueryRowContext(ctx, `INSERT INTO tokens SELECT ?, id, ?, ?, ?, `+nowMS+` FROM users WHERE id = ? RETURNING created_at`,
		t.ID, tokenHash(secret), label, admin, userID).Scan(&at)
	s.wmu.Unlock()
	if err != nil {
		return Token{}, "", notFound(err)
	}
	t.CreatedAt = fromMS(at)
	return t, secret, nil
}

const tokenCols = `id, user_id, label, admin, created_at`

func scanToken(sc interface{ Scan(...any) error }) (Token, error) {
	var t Token
	var at int64
	err := sc.Scan(&t.ID, &t.UserID, &t.Label, &t.Admin, &at)
	t.CreatedAt = fromMS(at)
	return t, notFound(err)
}

// CheckToken is one indexed lookup by the secret's hash (SECURITY I-88).
func (s *sqliteStore) CheckToken(ctx context.Context, secret string) (Token, error) {
	if secret == "" || len(secret) > maxSecret {
		return Token{}, ErrNotFound
	}
	return scanToken(s.db.QueryRowContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE hash = ?`, tokenHash(secret)))
}

func (s *sqliteStore) Tokens(ctx context.Context, userID string) ([]Token, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+tokenCols+` FROM tokens WHERE ? = '' OR user_id = ? ORDER BY created_at, id`, userID, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanToken)
}

func (s *sqliteStore) RevokeToken(ctx context.Context, id string) error {
	return s.exec1(ctx, `DELETE FROM tokens WHERE id = ?`, id)
}

// Devices.

func (s *sqliteStore) AddDevice(ctx context.Context, userID, name, origin string, publicKey []byte) (Device, error) {
	if err := validDevice(name, origin, publicKey); err != nil {
		return Device{}, err
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return scanDevice(s.db.QueryRowContext(ctx, `INSERT INTO devices SELECT ?, id, ?, ?, ?, `+nowMS+`, `+nowMS+` FROM users WHERE id = ? RETURNING `+deviceCols,
		newID(), name, origin, publicKey, userID))
}

func validDevice(name, origin string, key []byte) error {
	if err := validLabel(name, true); err != nil {
		return err
	}
	if err := validOrigin(origin); err != nil {
		return err
	}
	return validKey(key)
}

const deviceCols = `id, user_id, name, origin, public_key, created_at, last_seen`

func scanDevice(sc interface{ Scan(...any) error }) (Device, error) {
	var d Device
	var at, seen int64
	err := sc.Scan(&d.ID, &d.UserID, &d.Name, &d.Origin, &d.PublicKey, &at, &seen)
	d.CreatedAt, d.LastSeen = fromMS(at), fromMS(seen)
	return d, notFound(err)
}

func (s *sqliteStore) Device(ctx context.Context, id string) (Device, error) {
	return scanDevice(s.db.QueryRowContext(ctx, `SELECT `+deviceCols+` FROM devices WHERE id = ?`, id))
}

// UserDevice: SECURITY I-88, the user is in the query, so another user's
// device reads exactly as a missing one.
func (s *sqliteStore) UserDevice(ctx context.Context, userID, id string) (Device, error) {
	return scanDevice(s.db.QueryRowContext(ctx, `SELECT `+deviceCols+` FROM devices WHERE id = ? AND user_id = ?`, id, userID))
}

func (s *sqliteStore) Devices(ctx context.Context, userID string) ([]Device, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+deviceCols+` FROM devices WHERE ? = '' OR user_id = ? ORDER BY created_at, id`, userID, userID)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanDevice)
}

func (s *sqliteStore) TouchDevice(ctx context.Context, id string, t time.Time) error {
	return s.exec1(ctx, `UPDATE devices SET last_seen = MAX(last_seen, ?) WHERE id = ?`, ms(t), id)
}

func (s *sqliteStore) RevokeDevice(ctx context.Context, id string) error {
	return s.exec1(ctx, `DELETE FROM devices WHERE id = ?`, id)
}

func (s *sqliteStore) RevokeUserDevice(ctx context.Context, userID, id string) error {
	return s.exec1(ctx, `DELETE FROM devices WHERE id = ? AND user_id = ?`, id, userID)
}

// Pairing requests.

const pairCols = `id, device_name, origin, device_key, code, state, user_id, device_id, created_at, expires_at`

func scanPair(sc interface{ Scan(...any) error }) (PairRequest, error) {
	var r PairRequest
	var at, exp int64
	err := sc.Scan(&r.ID, &r.DeviceName, &r.Origin, &r.DeviceKey, &r.Code, &r.State, &r.UserID, &r.DeviceID, &at, &exp)
	r.CreatedAt, r.ExpiresAt = fromMS(at), fromMS(exp)
	return r, notFound(err)
}

func preparePair(r *PairRequest) error {
	if err := validDevice(r.DeviceName, r.Origin, r.DeviceKey); err != nil {
		return err
	}
	if r.Code == "" {
		r.Code = newCode()
	}
	return validCode(r.Code)
}

func (s *sqliteStore) CreatePairRequest(ctx context.Context, r PairRequest, ttl time.Duration) (PairRequest, error) {
	if err := preparePair(&r); err != nil {
		return PairRequest{}, err
	}
	var out PairRequest
	err := s.write(ctx, func(tx *sql.Tx) error {
		// Requests long gone are dropped here, not by a timer.
		if _, err := tx.ExecContext(ctx, `DELETE FROM pair_requests WHERE expires_at < `+nowMS+` - 86400000`); err != nil {
			return err
		}
		var err error
		out, err = scanPair(tx.QueryRowContext(ctx, `INSERT INTO pair_requests VALUES (?, ?, ?, ?, ?, ?, '', '', `+nowMS+`, `+nowMS+` + ?) RETURNING `+pairCols,
			newID(), r.DeviceName, r.Origin, r.DeviceKey, r.Code, PairPending, ttl.Milliseconds()))
		return err
	})
	return out, err
}

func (s *sqliteStore) PairRequest(ctx context.Context, id string) (PairRequest, error) {
	return scanPair(s.db.QueryRowContext(ctx, `SELECT `+pairCols+` FROM pair_requests WHERE id = ?`, id))
}

func (s *sqliteStore) PendingPairRequests(ctx context.Context) ([]PairRequest, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+pairCols+` FROM pair_requests WHERE state = ? AND expires_at > `+nowMS+` ORDER BY created_at, id`, PairPending)
	if err != nil {
		return nil, err
	}
	return collect(rows, scanPair)
}

// DecidePair: SECURITY I-89, the request's expiry is judged by the
// database's clock, inside the transaction that decides it.
func (s *sqliteStore) DecidePair(ctx context.Context, id, code, userID string, approve bool) (PairRequest, error) {
	var out PairRequest
	err := s.write(ctx, func(tx *sql.Tx) error {
		var live bool
		r, err := scanPair(tx.QueryRowContext(ctx, `SELECT `+pairCols+` FROM pair_requests WHERE id = ?`, id))
		if err != nil {
			return err
		}
		if err := tx.QueryRowContext(ctx, `SELECT expires_at > `+nowMS+` FROM pair_requests WHERE id = ?`, id).Scan(&live); err != nil {
			return err
		}
		if err := checkDecision(r, live, code, approve); err != nil {
			return err
		}
		if approve {
			d, err := scanDevice(tx.QueryRowContext(ctx, `INSERT INTO devices SELECT ?, id, ?, ?, ?, `+nowMS+`, `+nowMS+` FROM users WHERE id = ? RETURNING `+deviceCols,
				newID(), r.DeviceName, r.Origin, r.DeviceKey, userID))
			if err != nil {
				return err
			}
			r.DeviceID, r.State = d.ID, PairApproved
		} else {
			r.State = PairDenied
		}
		r.UserID = userID
		_, err = tx.ExecContext(ctx, `UPDATE pair_requests SET state = ?, user_id = ?, device_id = ? WHERE id = ?`, r.State, r.UserID, r.DeviceID, id)
		out = r
		return err
	})
	return out, err
}

// checkDecision is whether a request may be decided now: pending and live,
// and for an approval the code it shows (compared in constant time).
func checkDecision(r PairRequest, live bool, code string, approve bool) error {
	if r.State != PairPending || !live {
		return ErrDecided
	}
	if approve && subtle.ConstantTimeCompare([]byte(code), []byte(r.Code)) != 1 {
		return ErrWrongCode
	}
	return nil
}

// One-time secrets.

func (s *sqliteStore) CreateOTP(ctx context.Context, userID string, ttl time.Duration) (string, error) {
	secret := pairing.EncodeB64(pairing.NewNonce())
	err := s.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM otps WHERE expires_at <= `+nowMS); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM otps WHERE user_id = ? AND secret NOT IN
			(SELECT secret FROM otps WHERE user_id = ? ORDER BY expires_at DESC, rowid DESC LIMIT ?)`, userID, userID, maxLiveOTPs-1); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO otps SELECT ?, id, `+nowMS+` + ? FROM users WHERE id = ?`, secret, ttl.Milliseconds(), userID)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return secret, nil
}

func (s *sqliteStore) OTPs(ctx context.Context) ([]OTP, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT secret, user_id, expires_at FROM otps WHERE expires_at > `+nowMS+` ORDER BY expires_at`)
	if err != nil {
		return nil, err
	}
	return collect(rows, func(sc interface{ Scan(...any) error }) (OTP, error) {
		var o OTP
		var exp int64
		err := sc.Scan(&o.Secret, &o.UserID, &exp)
		o.ExpiresAt = fromMS(exp)
		return o, err
	})
}

func (s *sqliteStore) ConsumeOTP(ctx context.Context, secret string) (string, error) {
	var user string
	s.wmu.Lock()
	defer s.wmu.Unlock()
	err := s.db.QueryRowContext(ctx, `DELETE FROM otps WHERE secret = ? AND expires_at > `+nowMS+` RETURNING user_id`, secret).Scan(&user)
	return user, notFound(err)
}

// Policy.

func (s *sqliteStore) Policy(ctx context.Context, userID string) (json.RawMessage, error) {
	var p sql.NullString
	if err := s.db.QueryRowContext(ctx, `SELECT p.policy FROM users u LEFT JOIN policies p ON p.user_id = u.id WHERE u.id = ?`, userID).Scan(&p); err != nil {
		return nil, notFound(err)
	}
	if !p.Valid {
		return nil, nil
	}
	return json.RawMessage(p.String), nil
}

func (s *sqliteStore) SetPolicy(ctx context.Context, userID string, policy json.RawMessage) error {
	if err := validPolicy(policy); err != nil {
		return err
	}
	return s.write(ctx, func(tx *sql.Tx) error {
		var one int
		if err := tx.QueryRowContext(ctx, `SELECT 1 FROM users WHERE id = ?`, userID).Scan(&one); err != nil {
			return notFound(err)
		}
		var err error
		if policy == nil {
			_, err = tx.ExecContext(ctx, `DELETE FROM policies WHERE user_id = ?`, userID)
		} else {
			_, err = tx.ExecContext(ctx, `INSERT INTO policies VALUES (?, ?) ON CONFLICT(user_id) DO UPDATE SET policy = excluded.policy`, userID, string(policy))
		}
		return err
	})
}

const maxPolicy = 64 << 10

func validPolicy(p json.RawMessage) error {
	if p != nil && (len(p) > maxPolicy || !json.Valid(p)) {
		return fmt.Errorf("store: a policy is a JSON document of at most %d bytes", maxPolicy)
	}
	return nil
}
