package bus

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ErrBadURL: the bus URL cannot be used as written. Retrying cannot help,
// so a replica refuses to start with it; a server that cannot be reached
// or refuses is a *ConnError, which a replica retries.
var ErrBadURL = errors.New("bus: the bus URL is not usable")

// urlSetting is where the bus URL is set, named in every fix.
const urlSetting = "the bus URL (team.bus in config.json, or TORII_TEAM_BUS)"

// ConnError is why NATS cannot be used now, typed so that a replica's
// /readyz and log say what is wrong and the next step. It wraps
// ErrUnavailable and the client's error; its texts carry no credentials.
type ConnError struct {
	// Code is one of bus_unreachable, bus_auth, bus_no_jetstream, bus_refused.
	Code string
	Msg  string // what is wrong
	Fix  string // what to check or do
	err  error
}

func (e *ConnError) Error() string   { return e.Msg + " (" + e.Fix + ")" }
func (e *ConnError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// checkURL refuses what nats.go would try anyway and never reach: a URL
// that does not parse, another scheme, no host, a bad port. A list of
// servers is comma-separated, as nats.go takes it.
func checkURL(raw string) error {
	bad := func(u, why string) error {
		return fmt.Errorf("%w: %s %s: set %s to nats://HOST:4222 or tls://USER:PASSWORD@HOST:4222", ErrBadURL, redact(u), why, urlSetting)
	}
	n := 0
	for _, u := range strings.Split(raw, ",") {
		u = strings.TrimSpace(u)
		if u == "" {
			continue
		}
		n++
		full := u
		if !strings.Contains(u, "://") {
			full = "nats://" + u
		}
		p, err := url.Parse(full)
		if err != nil {
			// url.Parse's message quotes the URL, password and all.
			return bad(u, "is not a URL")
		}
		switch p.Scheme {
		case "nats", "tls", "ws", "wss":
		default:
			return bad(u, "has scheme "+strconv.Quote(p.Scheme)+": NATS takes nats://, tls://, ws:// or wss://")
		}
		if p.Hostname() == "" {
			return bad(u, "names no host")
		}
		if port := p.Port(); port != "" {
			if v, err := strconv.Atoi(port); err != nil || v < 1 || v > 65535 {
				return bad(u, "has port "+strconv.Quote(port))
			}
		}
	}
	if n == 0 {
		return fmt.Errorf("%w: it is empty: set %s", ErrBadURL, urlSetting)
	}
	return nil
}

// connError classifies a failure to connect to NATS at url, or to set up
// JetStream once connected.
func connError(url string, err error) *ConnError {
	where := "NATS at " + redact(url)
	e := &ConnError{err: err}
	switch {
	case errors.Is(err, nats.ErrAuthorization), errors.Is(err, nats.ErrAuthExpired), errors.Is(err, nats.ErrAuthRevoked),
		errors.Is(err, nats.ErrAccountAuthExpired):
		e.Code = "bus_auth"
		e.Msg = fmt.Sprintf("%s refused this replica's credentials: %v", where, err)
		e.Fix = "check the user and password (or token) in " + urlSetting + " against the server's authorization; the gateway retries by itself"
	case errors.Is(err, jetstream.ErrJetStreamNotEnabled), errors.Is(err, jetstream.ErrJetStreamNotEnabledForAccount),
		errors.Is(err, nats.ErrJetStreamNotEnabled), errors.Is(err, nats.ErrJetStreamNotEnabledForAccount):
		e.Code = "bus_no_jetstream"
		e.Msg = where + " has no JetStream for this account"
		e.Fix = "run nats-server with JetStream (-js, or jetstream {} in its configuration); the gateway retries by itself"
	case errors.Is(err, nats.ErrNoServers), isNetError(err):
		e.Code = "bus_unreachable"
		e.Msg = fmt.Sprintf("cannot reach %s: %v", where, err)
		e.Fix = "check the host and port in " + urlSetting + ", and that nats-server runs and accepts connections from here; the gateway retries by itself"
	default:
		e.Code = "bus_refused"
		e.Msg = fmt.Sprintf("%s cannot be used: %v", where, err)
		e.Fix = "see nats-server's log; the gateway retries by itself"
	}
	return e
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}
