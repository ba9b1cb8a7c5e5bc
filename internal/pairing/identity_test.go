package pairing

import (
	"bytes"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/torii-browser/torii/internal/atomicfile"
)

func TestIdentityCreateReload(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "daemon.key")
	a, err := LoadOrCreateIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("key mode %04o, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, []byte("-----BEGIN PRIVATE KEY-----")) {
		t.Fatalf("key file is not PKCS#8 PEM: %q", data[:30])
	}
	b, err := LoadOrCreateIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.PublicKey(), b.PublicKey()) || a.ID() != b.ID() {
		t.Fatal("reloaded identity differs")
	}
	if len(a.PublicKey()) != 65 || a.PublicKey()[0] != 4 {
		t.Fatalf("public key not 65-byte uncompressed: %x", a.PublicKey())
	}
	if !strings.HasPrefix(a.ID(), "d-") || len(a.ID()) != 18 {
		t.Fatalf("ID %q", a.ID())
	}
	if _, err := hex.DecodeString(a.ID()[2:]); err != nil {
		t.Fatalf("ID not hex: %q", a.ID())
	}
}

func TestIdentityRefusesOpenKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.key")
	if _, err := LoadOrCreateIdentity(path); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		_, err := LoadOrCreateIdentity(path)
		var pe *atomicfile.PermError
		if !errors.As(err, &pe) || !errors.Is(err, atomicfile.ErrPermTooOpen) {
			t.Fatalf("mode %04o: err %v, want PermError", mode, err)
		}
		if !strings.Contains(err.Error(), "chmod 600 "+path) {
			t.Fatalf("error does not name the fix: %v", err)
		}
	}
	if err := os.Chmod(path, 0o400); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateIdentity(path); err != nil {
		t.Fatalf("0400 should be accepted: %v", err)
	}
}

func TestIdentityBadKeyFiles(t *testing.T) {
	_, edKey, _ := ed25519.GenerateKey(rand.Reader)
	edDER, err := x509.MarshalPKCS8PrivateKey(edKey)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := x509.MarshalPKCS8PrivateKey(mustP384(t))
	if err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(func() string {
		p := filepath.Join(t.TempDir(), "k")
		if _, err := LoadOrCreateIdentity(p); err != nil {
			t.Fatal(err)
		}
		return p
	}())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":          {},
		"not pem":        []byte("hello"),
		"wrong pem type": pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: []byte{1, 2}}),
		"garbage der":    pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte{1, 2, 3}}),
		"ed25519":        pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: edDER}),
		"p384":           pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: p384}),
		"trailing junk":  append(bytes.Clone(good), "junk"...),
	}
	for name, data := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "daemon.key")
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadOrCreateIdentity(path); !errors.Is(err, ErrBadKeyFile) {
				t.Fatalf("err %v, want ErrBadKeyFile", err)
			}
		})
	}
}

func TestNewIdentityFromScalarRejects(t *testing.T) {
	n := elliptic.P256().Params().N.FillBytes(make([]byte, 32))
	for name, d := range map[string][]byte{
		"zero":  make([]byte, 32),
		"order": n,
		"short": make([]byte, 31),
		"long":  append([]byte{0}, seeded("x")...),
		"nil":   nil,
	} {
		if _, err := NewIdentityFromScalar(d); !errors.Is(err, ErrBadScalar) {
			t.Errorf("%s: err %v, want ErrBadScalar", name, err)
		}
	}
}

func TestSignVerifyP1363(t *testing.T) {
	id, err := NewIdentityFromScalar(seeded("test/sign"))
	if err != nil {
		t.Fatal(err)
	}
	msg := AuthTranscript(RoleDevice, "c1", "dev_1", vectorOrigin, id.PublicKey(), id.PublicKey(), NewNonce(), NewNonce())
	sig, err := id.Sign(msg)
	if err != nil {
		t.Fatal(err)
	}
	if len(sig) != 64 {
		t.Fatalf("signature length %d, want 64 (P1363)", len(sig))
	}
	if !Verify(id.PublicKey(), msg, sig) {
		t.Fatal("own signature does not verify")
	}
	sig2, _ := id.Sign(msg)
	if bytes.Equal(sig, sig2) {
		t.Fatal("live signatures must be randomized")
	}
	if !Verify(id.PublicKey(), msg, sig2) {
		t.Fatal("second signature does not verify")
	}
	// Many signatures: some r or s has a leading zero byte, which P1363 keeps.
	for i := 0; i < 200; i++ {
		m := []byte{byte(i)}
		s, err := id.Sign(m)
		if err != nil || len(s) != 64 || !Verify(id.PublicKey(), m, s) {
			t.Fatalf("round %d: len %d err %v", i, len(s), err)
		}
	}
}

func TestVerifyRejects(t *testing.T) {
	device, daemon := vectorIdentity(t, "device"), vectorIdentity(t, "daemon")
	cn, sn := NewNonce(), NewNonce()
	devMsg := AuthTranscript(RoleDevice, "conn", "dev_x", vectorOrigin, device.PublicKey(), daemon.PublicKey(), cn, sn)
	dmnMsg := AuthTranscript(RoleDaemon, "conn", "dev_x", vectorOrigin, device.PublicKey(), daemon.PublicKey(), cn, sn)
	sig, _ := device.Sign(devMsg)
	if !Verify(device.PublicKey(), devMsg, sig) {
		t.Fatal("baseline does not verify")
	}
	flipped := bytes.Clone(sig)
	flipped[10] ^= 0x80
	offCurve := device.PublicKey()
	offCurve[64] ^= 1
	compressed := append([]byte{0x02 | device.PublicKey()[64]&1}, device.PublicKey()[1:33]...)
	n := elliptic.P256().Params().N.FillBytes(make([]byte, 32))
	otherConn := AuthTranscript(RoleDevice, "conn2", "dev_x", vectorOrigin, device.PublicKey(), daemon.PublicKey(), cn, sn)
	otherNonce := AuthTranscript(RoleDevice, "conn", "dev_x", vectorOrigin, device.PublicKey(), daemon.PublicKey(), cn, NewNonce())

	cases := []struct {
		name          string
		key, msg, sig []byte
	}{
		{"bit flipped", device.PublicKey(), devMsg, flipped},
		{"signature for the other role", device.PublicKey(), dmnMsg, sig},
		{"other connection", device.PublicKey(), otherConn, sig},
		{"replay under a fresh server nonce", device.PublicKey(), otherNonce, sig},
		{"other key", daemon.PublicKey(), devMsg, sig},
		{"key 64 bytes", device.PublicKey()[:64], devMsg, sig},
		{"key 66 bytes", append(device.PublicKey(), 0), devMsg, sig},
		{"compressed key", compressed, devMsg, sig},
		{"key not on curve", offCurve, devMsg, sig},
		{"key all zero", make([]byte, 65), devMsg, sig},
		{"nil key", nil, devMsg, sig},
		{"sig 63 bytes", device.PublicKey(), devMsg, sig[:63]},
		{"sig 65 bytes", device.PublicKey(), devMsg, append(bytes.Clone(sig), 0)},
		{"sig DER", device.PublicKey(), devMsg, mustDER(t, device, devMsg)},
		{"sig zero", device.PublicKey(), devMsg, make([]byte, 64)},
		{"r = n", device.PublicKey(), devMsg, append(bytes.Clone(n), sig[32:]...)},
		{"s = n", device.PublicKey(), devMsg, append(bytes.Clone(sig[:32]), n...)},
		{"nil sig", device.PublicKey(), devMsg, nil},
	}
	for _, c := range cases {
		if Verify(c.key, c.msg, c.sig) {
			t.Errorf("%s: verified", c.name)
		}
	}
	// The daemon's signature over the daemon transcript must not pass as the
	// device's, even with the daemon key (role separation, SECURITY I-6).
	dsig, _ := daemon.Sign(dmnMsg)
	if Verify(daemon.PublicKey(), devMsg, dsig) {
		t.Error("daemon signature reflected as device signature verified")
	}
}

func mustDER(t *testing.T, id *Identity, msg []byte) []byte {
	t.Helper()
	// An ASN.1 signature is 70-72 bytes; Verify must refuse it by length.
	sig, _ := id.Sign(msg)
	return append(append([]byte{0x30, 0x44, 0x02, 0x20}, sig[:32]...), append([]byte{0x02, 0x20}, sig[32:]...)...)
}

// LoadIdentity reads the daemon's key and never creates one; a loose or
// malformed key file is refused as LoadOrCreateIdentity refuses it.
func TestLoadIdentityNeverCreates(t *testing.T) {
	path := filepath.Join(t.TempDir(), "daemon.key")
	if _, err := LoadIdentity(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("LoadIdentity created a key")
	}
	a, err := LoadOrCreateIdentity(path)
	if err != nil {
		t.Fatal(err)
	}
	b, err := LoadIdentity(path)
	if err != nil || !bytes.Equal(a.PublicKey(), b.PublicKey()) {
		t.Fatalf("reload: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIdentity(path); !errors.Is(err, atomicfile.ErrPermTooOpen) {
		t.Fatalf("a key others can read: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadIdentity(path); !errors.Is(err, ErrBadKeyFile) {
		t.Fatalf("a malformed key: %v", err)
	}
}
