package replica

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/pairing"
)

// listen opens the replica's listener: TLS from the configured key pair,
// or plaintext, which config.Team's validation allowed only on loopback or
// behind a trusted ingress (SECURITY I-92).
func listen(addr string, t config.Team) (net.Listener, string, error) {
	if t.Plaintext() && !t.TLS.Ingress {
		host, _, _ := net.SplitHostPort(addr)
		if !config.IsLoopbackHost(host) {
			// SECURITY I-92: checked again here, whoever built the Team.
			return nil, "", fmt.Errorf("%w (listen %q)", config.ErrTeamPlaintext, addr)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, "", fmt.Errorf("replica: listen on %s: %w (is another program using the port?)", addr, err)
	}
	if t.Plaintext() {
		return ln, "http", nil
	}
	cert, err := tls.LoadX509KeyPair(t.TLS.Cert, t.TLS.Key)
	if err != nil {
		ln.Close()
		return nil, "", fmt.Errorf("replica: load TLS key pair (team.tls.cert %s, team.tls.key %s): %w", t.TLS.Cert, t.TLS.Key, err)
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}), "https", nil
}

// loadIdentity reads the gateway's key, shared by every replica, creating
// it when missing. Replicas starting at once must end up with one key:
// each writes its candidate to a private file and links it into place,
// which fails for all but the first; the others then read the winner's.
func loadIdentity(path string) (*pairing.Identity, error) {
	id, err := pairing.LoadIdentity(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	tmpDir, err := os.MkdirTemp(filepath.Dir(path), ".identity-")
	if err != nil {
		if mk := os.MkdirAll(filepath.Dir(path), 0o700); mk != nil {
			return nil, fmt.Errorf("replica: create the identity's folder: %w", mk)
		}
		if tmpDir, err = os.MkdirTemp(filepath.Dir(path), ".identity-"); err != nil {
			return nil, fmt.Errorf("replica: create the identity: %w", err)
		}
	}
	defer os.RemoveAll(tmpDir)
	cand := filepath.Join(tmpDir, "key")
	if _, err := pairing.LoadOrCreateIdentity(cand); err != nil {
		return nil, err
	}
	if err := os.Link(cand, path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("replica: install the identity at %s: %w", path, err)
	}
	return pairing.LoadIdentity(path)
}

// ErrNoAdminSecret: the admin token file is missing or empty.
var ErrNoAdminSecret = errors.New("replica: the bootstrap admin secret is missing: set team.adminTokenFile (or TORII_TEAM_ADMIN_TOKEN_FILE) to a file holding at least 32 characters, e.g. `openssl rand -hex 32 > token`")

// readAdminSecret reads the bootstrap admin secret; a short one is refused,
// since it manages every user.
func readAdminSecret(path string) ([]byte, error) {
	if path == "" {
		return nil, ErrNoAdminSecret
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoAdminSecret, err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) < 32 {
		return nil, fmt.Errorf("%w: %s holds %d characters", ErrNoAdminSecret, path, len(s))
	}
	return []byte(s), nil
}
