// Package pairing holds the daemon's identity, the byte-exact transcripts
// of the pairing and authentication handshakes, the paired-device store and
// the one-time secrets of managed launch.
package pairing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/asn1"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/big"

	"github.com/torii-browser/torii/internal/atomicfile"
)

// Identity is the daemon's P-256 key, stored PKCS#8 PEM mode 0600.
type Identity struct {
	priv *ecdsa.PrivateKey
	pub  []byte // 65-byte uncompressed point, cached
}

// Errors about the key file and keys.
var (
	// ErrBadKeyFile: the key file exists but is not a PKCS#8 PEM P-256 key.
	ErrBadKeyFile = errors.New("pairing: key file is not a PKCS#8 PEM P-256 private key")
	// ErrBadScalar: the scalar is not 32 bytes in [1, n-1].
	ErrBadScalar = errors.New("pairing: invalid P-256 private scalar")
)

const pemType = "PRIVATE KEY"

// LoadOrCreateIdentity reads the key at path, or creates one there (0600,
// atomic) if the file does not exist. A key file with group or other
// permissions is refused with an *atomicfile.PermError that names the fix.
func LoadOrCreateIdentity(path string) (*Identity, error) {
	// SECURITY I-9: a key others could read is no longer the daemon's alone.
	data, exists, err := atomicfile.ReadPrivate(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		return createIdentity(path)
	}
	return parseIdentity(path, data)
}

// LoadIdentity reads the key at path and never creates one: a missing file
// is an error that wraps fs.ErrNotExist. Programs other than the daemon
// (verifying what it signed) use it.
func LoadIdentity(path string) (*Identity, error) {
	data, exists, err := atomicfile.ReadPrivate(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		return nil, fmt.Errorf("pairing: no daemon key at %s: %w", path, fs.ErrNotExist)
	}
	return parseIdentity(path, data)
}

func parseIdentity(path string, data []byte) (*Identity, error) {
	block, rest := pem.Decode(data)
	if block == nil || block.Type != pemType || len(trimSpace(rest)) != 0 {
		return nil, fmt.Errorf("%w: %s", ErrBadKeyFile, path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrBadKeyFile, path, err)
	}
	ek, ok := k.(*ecdsa.PrivateKey)
	if !ok || ek.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: %s: not a P-256 ECDSA key", ErrBadKeyFile, path)
	}
	return newIdentity(ek)
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	return b
}

func createIdentity(path string) (*Identity, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("pairing: generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, fmt.Errorf("pairing: encode key: %w", err)
	}
	// SECURITY I-9: written 0600 via temp file + rename.
	if err := atomicfile.Write(path, pem.EncodeToMemory(&pem.Block{Type: pemType, Bytes: der}), 0o600); err != nil {
		return nil, err
	}
	return newIdentity(k)
}

// NewIdentityFromScalar builds an identity from a 32-byte big-endian
// private scalar; used by the vectors and tests.
func NewIdentityFromScalar(d []byte) (*Identity, error) {
	k, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), d)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadScalar, err)
	}
	return newIdentity(k)
}

func newIdentity(k *ecdsa.PrivateKey) (*Identity, error) {
	pub, err := k.PublicKey.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadKeyFile, err)
	}
	return &Identity{priv: k, pub: pub}, nil
}

// PublicKey returns the 65-byte uncompressed point (a copy).
func (id *Identity) PublicKey() []byte { return append([]byte(nil), id.pub...) }

// ID is "d-" + the first 16 hex digits of SHA-256(public key): short enough
// to read aloud, and it changes whenever the key does.
func (id *Identity) ID() string { return KeyID(id.pub) }

// KeyID is the daemon ID for any public key (used to show a pinned key).
func KeyID(publicKey []byte) string {
	h := sha256.Sum256(publicKey)
	return "d-" + hex.EncodeToString(h[:8])
}

// Sign returns an ECDSA P-256 SHA-256 signature over msg in IEEE P1363
// form (r||s, 64 bytes), the form WebCrypto produces and verifies.
func (id *Identity) Sign(msg []byte) ([]byte, error) { return id.sign(rand.Reader, msg) }

// signDeterministic uses RFC 6979 so the vectors file is reproducible.
func (id *Identity) signDeterministic(msg []byte) ([]byte, error) { return id.sign(nil, msg) }

func (id *Identity) sign(r io.Reader, msg []byte) ([]byte, error) {
	h := sha256.Sum256(msg)
	der, err := id.priv.Sign(r, h[:], crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("pairing: sign: %w", err)
	}
	var rs struct{ R, S *big.Int }
	if _, err := asn1.Unmarshal(der, &rs); err != nil {
		return nil, fmt.Errorf("pairing: sign: %w", err)
	}
	out := make([]byte, 64)
	rs.R.FillBytes(out[:32])
	rs.S.FillBytes(out[32:])
	return out, nil
}

// Verify checks a P1363 (64-byte r||s) ECDSA P-256 SHA-256 signature by a
// 65-byte uncompressed public key. Any malformed input gives false.
func Verify(publicKey, msg, sig []byte) bool {
	if len(publicKey) != 65 || len(sig) != 64 {
		return false
	}
	// ParseUncompressedPublicKey rejects points not on the curve and the
	// point at infinity.
	pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), publicKey)
	if err != nil {
		return false
	}
	r := new(big.Int).SetBytes(sig[:32])
	s := new(big.Int).SetBytes(sig[32:])
	h := sha256.Sum256(msg)
	// ecdsa.Verify rejects r or s of zero or not below the group order.
	return ecdsa.Verify(pub, h[:], r, s)
}

// ValidPublicKey reports whether b is a 65-byte uncompressed P-256 point.
func ValidPublicKey(b []byte) bool {
	if len(b) != 65 {
		return false
	}
	_, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), b)
	return err == nil
}

// NewNonce returns 32 random bytes.
func NewNonce() []byte {
	b := make([]byte, 32)
	// crypto/rand.Read never returns an error since Go 1.24 (it crashes instead).
	_, _ = rand.Read(b)
	return b
}
