// Package fuzzseed gives the Go fuzz targets their seeds: the golden
// vectors of testdata/vectors.json and the corpus kept in the repository
// under testdata/fuzz/<target>/ (one input per file, raw bytes). It is
// used by tests only.
package fuzzseed

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// Root is the repository root (the directory holding go.mod), found by
// walking up from the test's working directory.
func Root(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("fuzzseed: no go.mod above the working directory")
		}
		dir = parent
	}
}

// Corpus adds every file of testdata/fuzz/<target>/ as a seed.
func Corpus(f *testing.F, target string) {
	f.Helper()
	dir := filepath.Join(Root(f), "testdata", "fuzz", target)
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return
		}
		f.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

// Pairing is one pairing vector.
type Pairing struct {
	RequestID      string `json:"requestId"`
	Origin         string `json:"origin"`
	DeviceKeyB64   string `json:"deviceKeyB64"`
	DaemonKeyB64   string `json:"daemonKeyB64"`
	ClientNonceB64 string `json:"clientNonceB64"`
	ServerNonceB64 string `json:"serverNonceB64"`
	Code           string `json:"code"`
	OTP            string `json:"otp"`
	OTPProofB64    string `json:"otpProofB64"`
}

// Auth is one signed-challenge vector.
type Auth struct {
	Role           string `json:"role"`
	ConnectionID   string `json:"connectionId"`
	DeviceID       string `json:"deviceId"`
	Origin         string `json:"origin"`
	DeviceKeyB64   string `json:"deviceKeyB64"`
	DaemonKeyB64   string `json:"daemonKeyB64"`
	ClientNonceB64 string `json:"clientNonceB64"`
	ServerNonceB64 string `json:"serverNonceB64"`
	SignatureB64   string `json:"signatureB64"`
}

// Vectors is testdata/vectors.json, the parts the fuzz targets seed from.
type Vectors struct {
	Pairing []Pairing `json:"pairing"`
	Auth    []Auth    `json:"auth"`
}

// Load reads testdata/vectors.json.
func Load(tb testing.TB) Vectors {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(Root(tb), "testdata", "vectors.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var v Vectors
	if err := json.Unmarshal(b, &v); err != nil {
		tb.Fatal(err)
	}
	return v
}

// Frames are JSON-RPC frames built from the vectors: the handshake as the
// extension sends it (hello, pair, auth, ping), for decoder and link seeds.
func Frames(tb testing.TB) [][]byte {
	tb.Helper()
	v := Load(tb)
	var out [][]byte
	add := func(id any, method string, params any) {
		b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	for i, p := range v.Pairing {
		add(i+1, "torii/hello", map[string]any{"protocol": 1, "deviceId": "", "clientNonce": p.ClientNonceB64})
		add(pairID(i), "torii/pair", map[string]any{"requestId": p.RequestID, "deviceKey": p.DeviceKeyB64,
			"deviceName": "Chrome", "otpProof": p.OTPProofB64})
	}
	for i, a := range v.Auth {
		add(100+i, "torii/hello", map[string]any{"protocol": 1, "deviceId": a.DeviceID, "clientNonce": a.ClientNonceB64})
		add(200+i, "torii/auth", map[string]any{"deviceId": a.DeviceID, "sig": a.SignatureB64})
	}
	add(nil, "torii/ping", map[string]any{})
	add("p", "torii/ping", map[string]any{})
	return out
}

func pairID(i int) string { return "pair-" + string(rune('a'+i%26)) }
