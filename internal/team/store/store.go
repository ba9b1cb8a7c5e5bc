// Package store is team mode's state: users, their tokens and browsers
// (devices, with the public key each pinned at pairing), pairing requests,
// per-user policy, and the audit with its hash chain and signed
// checkpoints. Two implementations keep one contract (storetest): SQLite for
// one replica, Postgres for many. Times that decide anything (a pairing
// request's expiry) are the database's, never a replica's clock, so replicas
// whose clocks disagree still agree on them.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/pairing"
)

// Errors. A refusal the agent or person sees for another user's object is
// the same ErrNotFound as for a missing one.
var (
	ErrNotFound  = errors.New("store: not found")
	ErrExists    = errors.New("store: already exists")
	ErrBadName   = errors.New("store: a user name is 1-64 characters of a-z, 0-9, '.', '_' and '-', starting with a letter or digit")
	ErrBadLabel  = errors.New("store: a label is at most 64 printable characters")
	ErrBadKey    = errors.New("store: public key is not a 65-byte uncompressed P-256 point")
	ErrDecided   = errors.New("store: the pairing request was already decided or has expired")
	ErrWrongCode = errors.New("store: the code does not match the pairing request")
	// ErrUnavailable wraps every failure to reach the database, so callers
	// can tell "down" from "no".
	ErrUnavailable = errors.New("store: database unavailable")
)

// User is one person (or robot account) of the team.
type User struct {
	ID        string    `json:"id"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"createdAt"`
}

// Token is a bearer token as listed: never the secret, never its hash.
// An admin token manages users, tokens, pairing and revocation; a user
// token reaches only its user's browsers.
type Token struct {
	ID        string    `json:"id"`
	UserID    string    `json:"userId"`
	Label     string    `json:"label"`
	Admin     bool      `json:"admin"`
	CreatedAt time.Time `json:"createdAt"`
}

// Device is one paired browser, owned by one user.
type Device struct {
	ID        string    `json:"deviceId"`
	UserID    string    `json:"userId"`
	Name      string    `json:"name"`
	Origin    string    `json:"origin"`
	PublicKey []byte    `json:"publicKey"`
	CreatedAt time.Time `json:"createdAt"`
	LastSeen  time.Time `json:"lastSeen"`
}

// Pairing request states.
const (
	PairPending  = "pending"
	PairApproved = "approved"
	PairDenied   = "denied"
)

// PairRequest is a browser's torii/pair waiting for a person.
type PairRequest struct {
	ID         string    `json:"requestId"`
	DeviceName string    `json:"deviceName"`
	Origin     string    `json:"origin"`
	DeviceKey  []byte    `json:"deviceKey"`
	Code       string    `json:"code"` // the 6 digits both sides show
	State      string    `json:"state"`
	UserID     string    `json:"userId,omitempty"`   // who decided
	DeviceID   string    `json:"deviceId,omitempty"` // the device an approval made
	CreatedAt  time.Time `json:"createdAt"`
	ExpiresAt  time.Time `json:"expiresAt"`
}

// AuditRecord is one finished call, metadata only (SECURITY I-31), chained
// as the one-machine audit is (audit.Record, audit.HashRecord).
type AuditRecord struct {
	audit.Record
	UserID   string `json:"userId"`
	DeviceID string `json:"deviceId"`
	Replica  string `json:"replica"`
}

// OTP is a live one-time pairing secret for a managed launch, bound to the
// user who asked for it.
type OTP struct {
	Secret    string    `json:"secret"`
	UserID    string    `json:"userId"`
	ExpiresAt time.Time `json:"expiresAt"`
}

// Store is the contract both implementations keep.
type Store interface {
	// Ping reports whether the database answers now (readiness).
	Ping(ctx context.Context) error
	Close() error

	CreateUser(ctx context.Context, name string) (User, error)
	User(ctx context.Context, id string) (User, error)
	UserByName(ctx context.Context, name string) (User, error)
	Users(ctx context.Context) ([]User, error)
	// DeleteUser removes the user and revokes its tokens and devices.
	DeleteUser(ctx context.Context, id string) error

	// CreateToken returns the token and its secret, shown once; only its
	// SHA-256 is kept.
	CreateToken(ctx context.Context, userID, label string, admin bool) (Token, string, error)
	// CheckToken finds the live token whose secret this is (ErrNotFound).
	CheckToken(ctx context.Context, secret string) (Token, error)
	Tokens(ctx context.Context, userID string) ([]Token, error) // "" lists all
	RevokeToken(ctx context.Context, id string) error
	// LiveTokens returns those of ids that are still live tokens, in one
	// query: a replica re-confirms the tokens it remembers with it.
	LiveTokens(ctx context.Context, ids []string) ([]string, error)

	AddDevice(ctx context.Context, userID, name, origin string, publicKey []byte) (Device, error)
	Device(ctx context.Context, id string) (Device, error)
	// UserDevice is Device when it is userID's, else ErrNotFound, as for
	// a missing one: what a user token may reach.
	UserDevice(ctx context.Context, userID, id string) (Device, error)
	Devices(ctx context.Context, userID string) ([]Device, error) // "" lists all
	// UsersDevices is Devices of each of userIDs, in one query.
	UsersDevices(ctx context.Context, userIDs []string) ([]Device, error)
	TouchDevice(ctx context.Context, id string, t time.Time) error
	RevokeDevice(ctx context.Context, id string) error
	// RevokeUserDevice is RevokeDevice of userID's own device only.
	RevokeUserDevice(ctx context.Context, userID, id string) error

	// CreatePairRequest records a pending request expiring ttl from now
	// (the database's now; a ttl <= 0 makes it expired at once). An empty
	// Code gets 6 random digits.
	CreatePairRequest(ctx context.Context, r PairRequest, ttl time.Duration) (PairRequest, error)
	PairRequest(ctx context.Context, id string) (PairRequest, error)
	// PendingPairRequests lists the undecided, unexpired requests.
	PendingPairRequests(ctx context.Context) ([]PairRequest, error)
	// DecidePair decides a pending, unexpired request, once: an approval
	// needs its code (ErrWrongCode) and adds the device for userID in the
	// same transaction; a denial needs no code. A second decision, on any
	// replica, gets ErrDecided.
	DecidePair(ctx context.Context, id, code, userID string, approve bool) (PairRequest, error)

	// One-time pairing secrets for managed launches (`torii launch
	// --server`): valid ttl (database time; <= 0 is expired at once), bound
	// to a user, consumed once by the first pairing whose proof matches.
	CreateOTP(ctx context.Context, userID string, ttl time.Duration) (secret string, err error)
	// OTPs lists the live ones, for the replica to try proofs against.
	OTPs(ctx context.Context) ([]OTP, error)
	// ConsumeOTP uses a live secret up: ErrNotFound when gone, expired or used.
	ConsumeOTP(ctx context.Context, secret string) (userID string, err error)

	Policy(ctx context.Context, userID string) (json.RawMessage, error) // nil when none
	SetPolicy(ctx context.Context, userID string, policy json.RawMessage) error

	// AppendAudit chains r after the newest record and makes it durable
	// before returning; concurrent appends from many replicas form one chain.
	AppendAudit(ctx context.Context, r AuditRecord) (AuditRecord, error)
	// AuditRecords lists records after seq, oldest first; userID "" for all.
	AuditRecords(ctx context.Context, userID string, after int64, limit int) ([]AuditRecord, error)
	// Checkpoint signs the chain's head with the gateway's identity and
	// keeps it, anchoring everything up to it (SECURITY I-74).
	Checkpoint(ctx context.Context, id *pairing.Identity) (audit.Checkpoint, error)
	// VerifyAudit walks the whole chain, checks every checkpoint's
	// signature with pub and that the record at its seq still has the
	// hash it signed, and returns the first break, or nil.
	VerifyAudit(ctx context.Context, pub []byte) (*audit.ChainError, error)
}
