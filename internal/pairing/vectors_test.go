package pairing

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// The vectors file is shared with the extension's TypeScript tests; both
// sides re-derive every field and must agree byte for byte.
var update = flag.Bool("update", false, "rewrite testdata/vectors.json")

var vectorsPath = filepath.Join("..", "..", "testdata", "vectors.json")

const vectorOrigin = "chrome-extension://fljdejdpnpnjkonefefacbenoijnhcih"

type jwk struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
	D   string `json:"d"`
}

type vecKey struct {
	JWK    jwk    `json:"jwk"`
	RawB64 string `json:"rawB64"`
}

type pairVec struct {
	Name           string `json:"name"`
	RequestID      string `json:"requestId"`
	Origin         string `json:"origin"`
	DeviceKeyB64   string `json:"deviceKeyB64"`
	DaemonKeyB64   string `json:"daemonKeyB64"`
	ClientNonceB64 string `json:"clientNonceB64"`
	ServerNonceB64 string `json:"serverNonceB64"`
	TranscriptHex  string `json:"transcriptHex"`
	SHA256Hex      string `json:"sha256Hex"`
	Code           string `json:"code"`
	OTP            string `json:"otp"`
	OTPProofB64    string `json:"otpProofB64"`
}

type authVec struct {
	Name               string `json:"name"`
	Role               string `json:"role"`
	ConnectionID       string `json:"connectionId"`
	DeviceID           string `json:"deviceId"`
	Origin             string `json:"origin"`
	DeviceKeyB64       string `json:"deviceKeyB64"`
	DaemonKeyB64       string `json:"daemonKeyB64"`
	ClientNonceB64     string `json:"clientNonceB64"`
	ServerNonceB64     string `json:"serverNonceB64"`
	TranscriptHex      string `json:"transcriptHex"`
	SignerPublicKeyB64 string `json:"signerPublicKeyB64"`
	SignatureB64       string `json:"signatureB64"`
	BadSignatureB64    string `json:"badSignatureB64"`
}

type vectors struct {
	Description string            `json:"description"`
	Pairing     []pairVec         `json:"pairing"`
	Auth        []authVec         `json:"auth"`
	Keys        map[string]vecKey `json:"keys"`
}

// seeded derives fixed test bytes from a label, so the vectors are
// reproducible without storing magic constants.
func seeded(label string) []byte {
	h := sha256.Sum256([]byte("torii-vectors/" + label))
	return h[:]
}

func vectorIdentity(t *testing.T, who string) *Identity {
	t.Helper()
	id, err := NewIdentityFromScalar(seeded("scalar/" + who))
	if err != nil {
		t.Fatalf("scalar %s: %v", who, err)
	}
	return id
}

func keyVec(t *testing.T, id *Identity) vecKey {
	t.Helper()
	d, err := id.priv.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	pub := id.PublicKey()
	return vecKey{
		JWK:    jwk{Kty: "EC", Crv: "P-256", X: EncodeB64(pub[1:33]), Y: EncodeB64(pub[33:65]), D: EncodeB64(d)},
		RawB64: EncodeB64(pub),
	}
}

func makePair(name, requestID, origin string, dev, dmn, cn, sn []byte, otp string) pairVec {
	tr := PairTranscript(requestID, origin, dev, dmn, cn, sn)
	h := sha256.Sum256(tr)
	return pairVec{
		Name: name, RequestID: requestID, Origin: origin,
		DeviceKeyB64: EncodeB64(dev), DaemonKeyB64: EncodeB64(dmn),
		ClientNonceB64: EncodeB64(cn), ServerNonceB64: EncodeB64(sn),
		TranscriptHex: hex.EncodeToString(tr), SHA256Hex: hex.EncodeToString(h[:]),
		Code: Code(tr), OTP: otp, OTPProofB64: EncodeB64(OTPProof(otp, tr)),
	}
}

func makeAuth(t *testing.T, name, role, connID, deviceID, origin string, device, daemon *Identity, cn, sn []byte) authVec {
	t.Helper()
	tr := AuthTranscript(role, connID, deviceID, origin, device.PublicKey(), daemon.PublicKey(), cn, sn)
	signer := device
	if role == RoleDaemon {
		signer = daemon
	}
	sig, err := signer.signDeterministic(tr)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(sig)
	bad[63] ^= 0x01
	return authVec{
		Name: name, Role: role, ConnectionID: connID, DeviceID: deviceID, Origin: origin,
		DeviceKeyB64: EncodeB64(device.PublicKey()), DaemonKeyB64: EncodeB64(daemon.PublicKey()),
		ClientNonceB64: EncodeB64(cn), ServerNonceB64: EncodeB64(sn),
		TranscriptHex:      hex.EncodeToString(tr),
		SignerPublicKeyB64: EncodeB64(signer.PublicKey()),
		SignatureB64:       EncodeB64(sig), BadSignatureB64: EncodeB64(bad),
	}
}

// buildVectors derives the whole file from fixed labels.
func buildVectors(t *testing.T) vectors {
	t.Helper()
	device, daemon := vectorIdentity(t, "device"), vectorIdentity(t, "daemon")
	dev, dmn := device.PublicKey(), daemon.PublicKey()
	otp := EncodeB64(seeded("otp"))

	v := vectors{
		Description: "Torii link protocol vectors (docs/protocol.md). Keys come from fixed scalars; " +
			"signatures are deterministic (RFC 6979) so every field is reproducible, but any valid " +
			"P1363 signature is acceptable to a verifier. Regenerate: go test ./internal/pairing -run TestVectors -update",
		Keys: map[string]vecKey{"device": keyVec(t, device), "daemon": keyVec(t, daemon)},
	}
	v.Pairing = append(v.Pairing,
		makePair("basic", "7d3f2a8e-5b1c-4e2f-9a6d-0c8b1e4f3a29", vectorOrigin, dev, dmn,
			seeded("pair/basic/client"), seeded("pair/basic/server"), otp),
		makePair("non-ascii request id and origin", "réq-✓-日本語-🚪", "chrome-extension://bücher-éxample", dev, dmn,
			seeded("pair/utf8/client"), seeded("pair/utf8/server"), "sécret-✓"),
	)
	// Search the server nonce until the code has a leading zero, to pin the
	// zero padding on both sides.
	found := false
	for i := 0; i < 10000 && !found; i++ {
		sn := seeded(fmt.Sprintf("pair/leading-zero/server/%d", i))
		pv := makePair("code with leading zero", "00000000-0000-4000-8000-000000000000", vectorOrigin, dev, dmn,
			seeded("pair/leading-zero/client"), sn, otp)
		if pv.Code[0] == '0' {
			v.Pairing = append(v.Pairing, pv)
			found = true
		}
	}
	if !found {
		t.Fatal("no nonce gave a leading-zero code")
	}
	// Empty request ID: enc must still emit a zero length prefix.
	v.Pairing = append(v.Pairing, makePair("empty request id", "", vectorOrigin, dev, dmn,
		seeded("pair/empty/client"), seeded("pair/empty/server"), otp))

	cn, sn := seeded("auth/client"), seeded("auth/server")
	connID := "3b6a1f0e-9c2d-4d7a-8e5f-1a2b3c4d5e6f"
	deviceID := "dev_0123456789abcdef01234567"
	v.Auth = append(v.Auth,
		makeAuth(t, "daemon signs hello", RoleDaemon, connID, deviceID, vectorOrigin, device, daemon, cn, sn),
		makeAuth(t, "device signs auth", RoleDevice, connID, deviceID, vectorOrigin, device, daemon, cn, sn),
	)
	return v
}

func marshalVectors(t *testing.T, v vectors) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

func TestVectors(t *testing.T) {
	want := marshalVectors(t, buildVectors(t))
	if *update {
		if err := os.WriteFile(vectorsPath, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(vectorsPath)
	if err != nil {
		t.Fatalf("read vectors (generate with -update): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("testdata/vectors.json differs from what the code derives; if the protocol changed on purpose, run with -update and update the extension")
	}
	var v vectors
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	checkVectors(t, v)
}

// checkVectors re-derives every field from the file's own inputs, the way
// the TypeScript tests do, so the file is self-consistent and not just equal
// to a Go-produced blob.
func checkVectors(t *testing.T, v vectors) {
	t.Helper()
	b64 := func(s string) []byte {
		t.Helper()
		b, err := DecodeB64(s)
		if err != nil {
			t.Fatalf("decode %q: %v", s, err)
		}
		return b
	}
	if len(v.Pairing) < 3 {
		t.Fatalf("need at least 3 pairing cases, have %d", len(v.Pairing))
	}
	var leadingZero, nonASCII bool
	for _, p := range v.Pairing {
		tr := PairTranscript(p.RequestID, p.Origin, b64(p.DeviceKeyB64), b64(p.DaemonKeyB64), b64(p.ClientNonceB64), b64(p.ServerNonceB64))
		if hex.EncodeToString(tr) != p.TranscriptHex {
			t.Errorf("%s: transcript differs", p.Name)
		}
		h := sha256.Sum256(tr)
		if hex.EncodeToString(h[:]) != p.SHA256Hex {
			t.Errorf("%s: sha256 differs", p.Name)
		}
		if Code(tr) != p.Code || len(p.Code) != 6 {
			t.Errorf("%s: code %s, file %s", p.Name, Code(tr), p.Code)
		}
		if !CheckOTPProof(p.OTP, tr, b64(p.OTPProofB64)) {
			t.Errorf("%s: otp proof does not check", p.Name)
		}
		leadingZero = leadingZero || p.Code[0] == '0'
		for _, r := range p.RequestID + p.Origin {
			nonASCII = nonASCII || r > 0x7f
		}
	}
	if !leadingZero || !nonASCII {
		t.Errorf("vectors must include a leading-zero code (%v) and a non-ASCII case (%v)", leadingZero, nonASCII)
	}
	roles := map[string]bool{}
	for _, a := range v.Auth {
		roles[a.Role] = true
		tr := AuthTranscript(a.Role, a.ConnectionID, a.DeviceID, a.Origin, b64(a.DeviceKeyB64), b64(a.DaemonKeyB64), b64(a.ClientNonceB64), b64(a.ServerNonceB64))
		if hex.EncodeToString(tr) != a.TranscriptHex {
			t.Errorf("%s: transcript differs", a.Name)
		}
		signer := v.Keys[a.Role]
		if signer.RawB64 != a.SignerPublicKeyB64 {
			t.Errorf("%s: signer is not the %s key", a.Name, a.Role)
		}
		if !Verify(b64(a.SignerPublicKeyB64), tr, b64(a.SignatureB64)) {
			t.Errorf("%s: signature does not verify", a.Name)
		}
		if Verify(b64(a.SignerPublicKeyB64), tr, b64(a.BadSignatureB64)) {
			t.Errorf("%s: bad signature verifies", a.Name)
		}
	}
	if !roles[RoleDaemon] || !roles[RoleDevice] {
		t.Errorf("vectors must cover both roles: %v", roles)
	}
	for who, k := range v.Keys {
		id, err := NewIdentityFromScalar(b64(k.JWK.D))
		if err != nil {
			t.Fatalf("%s: %v", who, err)
		}
		pub := id.PublicKey()
		if EncodeB64(pub) != k.RawB64 || EncodeB64(pub[1:33]) != k.JWK.X || EncodeB64(pub[33:]) != k.JWK.Y {
			t.Errorf("%s: jwk and raw key disagree", who)
		}
	}
}
