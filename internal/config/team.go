package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
)

// Team is config.json's "team" object: how one replica of `torii serve
// --team` reaches the shared store and bus, and how it listens.
type Team struct {
	// Store is "postgres://…" (many replicas) or "sqlite:PATH" (one).
	Store string `json:"store"`
	// Bus is the NATS URL the replicas route calls and events over.
	Bus string `json:"bus"`
	// PublicURL is the gateway's address as browsers and agents use it
	// (https://, or http:// on loopback; checked by checkPublicURL).
	PublicURL string  `json:"publicURL,omitempty"`
	TLS       TeamTLS `json:"tls,omitzero"`
	// IdentityFile is the gateway's P-256 key, the same file for every
	// replica; "" is daemon.key in the state directory (one replica).
	IdentityFile string `json:"identityFile,omitempty"`
	// AdminTokenFile holds the bootstrap admin secret.
	AdminTokenFile string `json:"adminTokenFile,omitempty"`
	// Replica names this replica on the bus; "" is the host name.
	Replica string `json:"replica,omitempty"`
}

// TeamTLS is where a replica's TLS comes from: a certificate and key, or
// an ingress in front that terminates TLS and is trusted to.
type TeamTLS struct {
	Cert    string `json:"cert,omitempty"`
	Key     string `json:"key,omitempty"`
	Ingress bool   `json:"ingress,omitempty"`
}

// Environment overrides for what a Kubernetes Secret usually holds.
const (
	EnvTeamStore          = "TORII_TEAM_STORE"
	EnvTeamBus            = "TORII_TEAM_BUS"
	EnvTeamAdminTokenFile = "TORII_TEAM_ADMIN_TOKEN_FILE"
)

// Team configuration errors.
var (
	// ErrTeamPlaintext: SECURITY I-92, off loopback a replica speaks TLS
	// only, its own or an explicitly trusted ingress's.
	ErrTeamPlaintext = errors.New(`config: team mode listens off loopback only over TLS: set team.tls.cert and team.tls.key, ` +
		`or "team": {"tls": {"ingress": true}} when a TLS-terminating ingress is in front, or listen on 127.0.0.1`)
	ErrTeamMissing = errors.New(`config: team mode needs team.store and team.bus in config.json ` +
		`(or TORII_TEAM_STORE and TORII_TEAM_BUS), e.g. "team": {"store": "postgres://…", "bus": "nats://…:4222"}`)
	ErrTeamTLS = errors.New("config: team.tls: set both cert and key, or neither")
)

// TeamConfig is the team object with the environment's overrides applied
// (getenv nil means os.Getenv), the TLS files falling back to tlsCert and
// tlsKey, and the replica name defaulting to the host name; it is
// validated with the listen address.
func (c Config) TeamConfig(getenv func(string) string) (Team, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	var t Team
	if c.Team != nil {
		t = *c.Team
	}
	if v := getenv(EnvTeamStore); v != "" {
		t.Store = v
	}
	if v := getenv(EnvTeamBus); v != "" {
		t.Bus = v
	}
	if v := getenv(EnvTeamAdminTokenFile); v != "" {
		t.AdminTokenFile = v
	}
	if t.TLS.Cert == "" && t.TLS.Key == "" {
		t.TLS.Cert, t.TLS.Key = c.TLSCert, c.TLSKey
	}
	if t.Replica == "" {
		t.Replica, _ = os.Hostname()
	}
	if err := t.validate(c.Listen); err != nil {
		return t, err
	}
	if t.PublicURL != "" {
		u, err := checkPublicURL(t.PublicURL)
		if err != nil {
			return t, err
		}
		t.PublicURL = u
	}
	return t, nil
}

func (t Team) validate(listen string) error {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrBadListen, listen, err)
	}
	if strings.TrimSpace(t.Store) == "" || strings.TrimSpace(t.Bus) == "" {
		return ErrTeamMissing
	}
	if (t.TLS.Cert == "") != (t.TLS.Key == "") {
		return ErrTeamTLS
	}
	// SECURITY I-92: an empty host binds every interface: not loopback.
	if !IsLoopbackHost(host) && t.TLS.Cert == "" && !t.TLS.Ingress {
		return fmt.Errorf("%w (listen %q)", ErrTeamPlaintext, listen)
	}
	return nil
}

// Plaintext reports whether the replica serves without TLS of its own.
func (t Team) Plaintext() bool { return t.TLS.Cert == "" }
