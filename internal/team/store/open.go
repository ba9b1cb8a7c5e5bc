package store

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Open opens the store a URL names, migrating its schema:
// postgres:// or postgresql:// (many replicas), or sqlite:PATH (one).
// A URL that cannot be used as written is ErrBadURL; a server that cannot
// be reached or refuses is a *ConnError wrapping ErrUnavailable.
// Errors name what is wrong and what to check, and never the URL's password.
func Open(ctx context.Context, rawURL string) (Store, error) {
	scheme, rest, _ := strings.Cut(rawURL, ":")
	switch strings.ToLower(scheme) {
	case "sqlite":
		return openSQLite(ctx, strings.TrimPrefix(rest, "//"))
	case "postgres", "postgresql":
		return openPostgres(ctx, rawURL)
	}
	return nil, fmt.Errorf("%w: %q is not a store URL: set %s to postgres://USER:PASSWORD@HOST:5432/DATABASE or sqlite:/path/to/team.db", ErrBadURL, redactURL(rawURL), urlSetting)
}

// redactURL is u without its password, for messages; a URL that does not
// parse is shown as its scheme only, since where its password is is unknown.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		scheme, _, _ := strings.Cut(u, ":")
		if len(scheme) > 20 || strings.ContainsAny(scheme, "@/ ") {
			return "(unparsable URL)"
		}
		return scheme + ":…"
	}
	return p.Redacted()
}

// urlPassword is the password u carries, "" none.
func urlPassword(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.User == nil {
		return ""
	}
	pw, _ := p.User.Password()
	return pw
}

// redacted is an error whose message never shows a secret (a driver may
// quote the URL or the configuration it parsed), still wrapping the cause.
type redacted struct {
	err    error
	secret string
}

func (r *redacted) Error() string {
	if r.secret == "" {
		return r.err.Error()
	}
	return strings.ReplaceAll(r.err.Error(), r.secret, "xxxxx")
}
func (r *redacted) Unwrap() error { return r.err }

func redact(err error, secret string) error {
	if err == nil || secret == "" {
		return err
	}
	var r *redacted
	if errors.As(err, &r) {
		return err
	}
	return &redacted{err: err, secret: secret}
}
