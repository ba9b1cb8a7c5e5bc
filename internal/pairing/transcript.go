package pairing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
)

// Transcript labels and roles (docs/protocol.md). Distinct roles stop a
// daemon signature being reflected back as a device signature.
const (
	pairLabel  = "torii-pair-v1"
	authLabel  = "torii-auth-v1"
	RoleDaemon = "daemon"
	RoleDevice = "device"
)

// enc length-prefixes every field (4-byte big-endian) so no two field lists
// encode to the same bytes.
func enc(fields ...[]byte) []byte {
	n := 0
	for _, f := range fields {
		n += 4 + len(f)
	}
	out := make([]byte, 0, n)
	for _, f := range fields {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return out
}

// PairTranscript is enc("torii-pair-v1", requestId, origin, deviceKey,
// daemonKey, clientNonce, serverNonce).
func PairTranscript(requestID, origin string, deviceKey, daemonKey, clientNonce, serverNonce []byte) []byte {
	return enc([]byte(pairLabel), []byte(requestID), []byte(origin), deviceKey, daemonKey, clientNonce, serverNonce)
}

// AuthTranscript is enc("torii-auth-v1", role, connectionId, deviceId,
// origin, deviceKey, daemonKey, clientNonce, serverNonce).
//
// SECURITY I-6: binding the connection ID and both fresh nonces ties a
// signature to this one connection; the role separates the two directions.
func AuthTranscript(role, connectionID, deviceID, origin string, deviceKey, daemonKey, clientNonce, serverNonce []byte) []byte {
	return enc([]byte(authLabel), []byte(role), []byte(connectionID), []byte(deviceID), []byte(origin), deviceKey, daemonKey, clientNonce, serverNonce)
}

// Code is the 6-digit comparison code: uint32_be(SHA-256(t)[0:4]) mod 1e6,
// zero-padded. SECURITY I-5: the person compares it on both screens, so a
// party in the middle (different keys or nonces) shows a different code.
func Code(pairTranscript []byte) string {
	h := sha256.Sum256(pairTranscript)
	return fmt.Sprintf("%06d", binary.BigEndian.Uint32(h[:4])%1_000_000)
}

// OTPProof is HMAC-SHA256(key = UTF-8 of the one-time secret, msg =
// pairTranscript): it proves knowledge of the secret without sending it.
func OTPProof(otp string, pairTranscript []byte) []byte {
	m := hmac.New(sha256.New, []byte(otp))
	m.Write(pairTranscript)
	return m.Sum(nil)
}

// CheckOTPProof compares in constant time.
func CheckOTPProof(otp string, pairTranscript, proof []byte) bool {
	return hmac.Equal(OTPProof(otp, pairTranscript), proof)
}

// ErrBadBase64 is returned by DecodeB64 for anything that is not unpadded
// base64url.
var ErrBadBase64 = errors.New("pairing: not unpadded base64url")

// EncodeB64 is base64url without padding, the wire form of keys, nonces,
// signatures and proofs.
func EncodeB64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// DecodeB64 accepts only unpadded base64url; padding, the standard alphabet
// and non-canonical trailing bits are refused so one value has one spelling.
func DecodeB64(s string) ([]byte, error) {
	// encoding/base64 silently skips CR and LF; the wire form has none.
	if strings.ContainsAny(s, "\r\n") {
		return nil, fmt.Errorf("%w: contains a line break", ErrBadBase64)
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadBase64, err)
	}
	return b, nil
}
