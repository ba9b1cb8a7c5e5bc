-- Team state for every replica. Times are the database's (now()).
CREATE TABLE users (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at TIMESTAMPTZ NOT NULL
);
-- Only a token's SHA-256 is kept (SECURITY I-88).
CREATE TABLE tokens (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	hash       BYTEA NOT NULL UNIQUE,
	label      TEXT NOT NULL,
	admin      BOOLEAN NOT NULL,
	created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX tokens_user ON tokens(user_id);
CREATE TABLE devices (
	id         TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	name       TEXT NOT NULL,
	origin     TEXT NOT NULL,
	public_key BYTEA NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	last_seen  TIMESTAMPTZ NOT NULL
);
CREATE INDEX devices_user ON devices(user_id);
CREATE TABLE pair_requests (
	id          TEXT PRIMARY KEY,
	device_name TEXT NOT NULL,
	origin      TEXT NOT NULL,
	device_key  BYTEA NOT NULL,
	code        TEXT NOT NULL,
	state       TEXT NOT NULL,
	user_id     TEXT NOT NULL DEFAULT '',
	device_id   TEXT NOT NULL DEFAULT '',
	created_at  TIMESTAMPTZ NOT NULL,
	expires_at  TIMESTAMPTZ NOT NULL
);
CREATE INDEX pair_requests_state ON pair_requests(state, expires_at);
CREATE TABLE otps (
	secret     TEXT PRIMARY KEY,
	user_id    TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
	expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX otps_user ON otps(user_id);
CREATE TABLE policies (
	user_id TEXT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
	policy  TEXT NOT NULL
);
-- The audit keeps user and device IDs as text, not references: records
-- outlive the users and browsers they name.
CREATE TABLE audit (
	seq         BIGINT PRIMARY KEY,
	time        TIMESTAMPTZ NOT NULL,
	tool        TEXT NOT NULL,
	session     TEXT NOT NULL,
	origin      TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	code        TEXT NOT NULL,
	duration_ms BIGINT NOT NULL,
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
	seq  BIGINT NOT NULL,
	hash TEXT NOT NULL
);
INSERT INTO audit_head VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000');
CREATE TABLE checkpoints (
	id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	seq  BIGINT NOT NULL,
	hash TEXT NOT NULL,
	kind TEXT NOT NULL,
	at   TIMESTAMPTZ NOT NULL,
	sig  TEXT NOT NULL,
	key  TEXT NOT NULL
);
