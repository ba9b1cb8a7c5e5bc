-- Team state for one replica. Times are Unix milliseconds.
CREATE TABLE users (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);
-- Only a token's SHA-256 is kept (SECURITY I-88).
CREATE TABLE tokens (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	hash       BLOB NOT NULL UNIQUE,
	label      TEXT NOT NULL,
	admin      INTEGER NOT NULL,
	created_at INTEGER NOT NULL
);
CREATE INDEX tokens_user ON tokens(user_id);
CREATE TABLE devices (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name       TEXT NOT NULL,
	origin     TEXT NOT NULL,
	public_key BLOB NOT NULL,
	created_at INTEGER NOT NULL,
	last_seen  INTEGER NOT NULL
);
CREATE INDEX devices_user ON devices(user_id);
CREATE TABLE pair_requests (
	id          TEXT PRIMARY KEY,
	device_name TEXT NOT NULL,
	origin      TEXT NOT NULL,
	device_key  BLOB NOT NULL,
	code        TEXT NOT NULL,
	state       TEXT NOT NULL,
	user_id     TEXT NOT NULL DEFAULT '',
	device_id   TEXT NOT NULL DEFAULT '',
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL
);
CREATE INDEX pair_requests_state ON pair_requests(state, expires_at);
CREATE TABLE otps (
	secret     TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	expires_at INTEGER NOT NULL
);
CREATE INDEX otps_user ON otps(user_id);
CREATE TABLE policies (
	user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
	policy  TEXT NOT NULL
);
-- The audit keeps user and device IDs as text, not references: records
-- outlive the users and browsers they name.
CREATE TABLE audit (
	seq         INTEGER PRIMARY KEY,
	time        INTEGER NOT NULL,
	tool        TEXT NOT NULL,
	session     TEXT NOT NULL,
	origin      TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	code        TEXT NOT NULL,
	duration_ms INTEGER NOT NULL,
	approval    TEXT NOT NULL,
	secrets     TEXT NOT NULL,
	user_id     TEXT NOT NULL,
	device_id   TEXT NOT NULL,
	replica     TEXT NOT NULL,
	prev        TEXT NOT NULL,
	hash        TEXT NOT NULL
);
CREATE INDEX audit_user ON audit(user_id, seq);
-- The chain's head: one row, locked by every append.
CREATE TABLE audit_head (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	seq  INTEGER NOT NULL,
	hash TEXT NOT NULL
);
INSERT INTO audit_head VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
CREATE TABLE checkpoints (
	id   INTEGER PRIMARY KEY AUTOINCREMENT,
	seq  INTEGER NOT NULL,
	hash TEXT NOT NULL,
	kind TEXT NOT NULL,
	at   INTEGER NOT NULL,
	sig  TEXT NOT NULL,
	key  TEXT NOT NULL
);
