package store

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrBadURL: the store URL cannot be used as written (a syntax error, an
// unknown scheme or option). Retrying cannot help, so a replica refuses to
// start with it; every other open failure is retried.
var ErrBadURL = errors.New("store: the store URL is not usable")

// ConnError is why the store cannot be used now, typed so that a replica's
// /readyz and log say what is wrong and the next step. It wraps
// ErrUnavailable (a replica retries it) and the driver's error. Its texts
// never carry the URL's password.
type ConnError struct {
	// Code is one of store_unreachable, store_auth, store_no_database,
	// store_refused, store_migrate.
	Code string
	Msg  string // what is wrong
	Fix  string // what to check or do
	err  error
}

func (e *ConnError) Error() string   { return e.Msg + " (" + e.Fix + ")" }
func (e *ConnError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// Where the store URL is set, named in every fix.
const urlSetting = "the store URL (team.store in config.json, or TORII_TEAM_STORE)"

// pgConnError classifies a failure to connect to or query PostgreSQL at
// cfg; secret is dropped from every text.
func pgConnError(cfg *pgxpool.Config, err error, secret string) *ConnError {
	c := cfg.ConnConfig
	where := fmt.Sprintf("PostgreSQL at %s:%d", c.Host, c.Port)
	e := &ConnError{err: redact(err, secret)}
	var pe *pgconn.PgError
	switch {
	case errors.As(err, &pe) && pe.Code == "28P01":
		e.Code = "store_auth"
		e.Msg = fmt.Sprintf("%s refused the password for user %q", where, c.User)
		e.Fix = "check the user and password in " + urlSetting + ", or set the role's password on the server; the gateway retries by itself"
	case errors.As(err, &pe) && pe.Code == "28000":
		// No such role, or pg_hba.conf has no line letting it in from here.
		e.Code = "store_auth"
		e.Msg = fmt.Sprintf("%s refused the credentials of user %q: %s", where, c.User, pe.Message)
		e.Fix = "check the user name in " + urlSetting + ", that the role exists and that pg_hba.conf lets it connect from this host; the gateway retries by itself"
	case errors.As(err, &pe) && pe.Code == "3D000":
		e.Code = "store_no_database"
		e.Msg = fmt.Sprintf("%s has no database %q", where, c.Database)
		e.Fix = fmt.Sprintf("create it (CREATE DATABASE %s OWNER %s) or correct the database name in %s; the gateway retries by itself", c.Database, c.User, urlSetting)
	case errors.As(err, &pe):
		e.Code = "store_refused"
		e.Msg = fmt.Sprintf("%s refused the connection: %s (SQLSTATE %s)", where, pe.Message, pe.Code)
		e.Fix = "see the PostgreSQL server's log; the gateway retries by itself"
	default:
		e.Code = "store_unreachable"
		e.Msg = fmt.Sprintf("cannot reach %s: %s", where, netCause(err))
		e.Fix = "check the host and port in " + urlSetting + ", and that the server runs and accepts connections from here; the gateway retries by itself"
	}
	e.Msg = scrub(e.Msg, secret)
	return e
}

// migrateError is a schema migration that failed on a reachable server,
// most often a user that may not create tables.
func migrateError(cfg *pgxpool.Config, err error, secret string) *ConnError {
	if ce := (*ConnError)(nil); errors.As(err, &ce) {
		return ce
	}
	msg := scrub(err.Error(), secret)
	return &ConnError{Code: "store_migrate", err: redact(err, secret),
		Msg: fmt.Sprintf("cannot set up the schema in database %q: %s", cfg.ConnConfig.Database, msg),
		Fix: fmt.Sprintf("user %q needs to create tables in that database (make it the owner, or GRANT CREATE ON SCHEMA public); the gateway retries by itself", cfg.ConnConfig.User)}
}

// scrub drops secret from s.
func scrub(s, secret string) string {
	if secret == "" {
		return s
	}
	return strings.ReplaceAll(s, secret, "xxxxx")
}

// netCause is the part of a dial error a person acts on ("connect:
// connection refused", "no such host"), else the whole error.
func netCause(err error) string {
	var dns *net.DNSError
	if errors.As(err, &dns) {
		return dns.Error()
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Error()
	}
	return err.Error()
}
