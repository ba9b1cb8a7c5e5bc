package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/torii-browser/torii/internal/pairing"
)

// Bounds of what the store accepts.
const (
	maxName   = 64
	maxLabel  = 64
	maxOrigin = 256
	maxSecret = 256 // longer than any secret this store makes
	// maxLiveOTPs bounds one user's live one-time secrets (the oldest go
	// first): a pairing tries its proof against every live one.
	maxLiveOTPs = 16
)

// validName: a user name is also a word in subjects, paths and logs, so
// only a-z, 0-9, '.', '_' and '-', starting with a letter or digit (no
// wildcard, no space, no case to confuse two users).
func validName(name string) error {
	if len(name) == 0 || len(name) > maxName {
		return ErrBadName
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case (c == '.' || c == '_' || c == '-') && i > 0:
		default:
			return ErrBadName
		}
	}
	return nil
}

// validLabel: labels and device names are shown in terminals and the popup.
func validLabel(s string, required bool) error {
	if (required && s == "") || !utf8.ValidString(s) || utf8.RuneCountInString(s) > maxLabel {
		return ErrBadLabel
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return ErrBadLabel
		}
	}
	return nil
}

func validOrigin(s string) error {
	if s == "" || len(s) > maxOrigin {
		return fmt.Errorf("%w: an origin is 1-%d printable ASCII characters", ErrBadLabel, maxOrigin)
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return fmt.Errorf("%w: an origin is 1-%d printable ASCII characters", ErrBadLabel, maxOrigin)
		}
	}
	return nil
}

func validKey(k []byte) error {
	if !pairing.ValidPublicKey(k) {
		return ErrBadKey
	}
	return nil
}

func validCode(code string) error {
	if len(code) != 6 || strings.Trim(code, "0123456789") != "" {
		return fmt.Errorf("%w: a pairing code is 6 digits", ErrWrongCode)
	}
	return nil
}

// newID is a fresh object ID: 32 lowercase hex digits, safe as a NATS
// subject token and a URL path segment.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// newSecret is a bearer secret: 256 random bits.
func newSecret(prefix string) string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return prefix + base64.RawURLEncoding.EncodeToString(b)
}

// tokenPrefix marks Torii's team tokens, so that secret scanners and
// people can tell one.
const tokenPrefix = "torii_"

// tokenHash is what is kept of a token (SECURITY I-88): its SHA-256. The
// secret has 256 random bits, so a fast hash is enough and lets CheckToken
// find it with one indexed lookup.
func tokenHash(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// newCode is 6 random digits.
func newCode() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	var n uint64
	for _, x := range b {
		n = n<<8 | uint64(x)
	}
	return fmt.Sprintf("%06d", n%1_000_000)
}
