package linktest

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
)

// signP1363 signs msg with ECDSA-P256-SHA256 in the fixed 64-byte r||s
// form WebCrypto produces.
func signP1363(k *ecdsa.PrivateKey, msg []byte) ([]byte, error) {
	h := sha256.Sum256(msg)
	r, s, err := ecdsa.Sign(rand.Reader, k, h[:])
	if err != nil {
		return nil, err
	}
	out := make([]byte, 64)
	r.FillBytes(out[:32])
	s.FillBytes(out[32:])
	return out, nil
}
