package extension

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// chromeID derives an extension ID the way Chrome does: SHA-256 of the DER public key,
// the first 32 hex digits, each mapped 0-f → a-p.
func chromeID(der []byte) string {
	sum := sha256.Sum256(der)
	h := hex.EncodeToString(sum[:16])
	out := make([]byte, len(h))
	for i := range len(h) {
		c := h[i]
		if c >= 'a' {
			out[i] = 'a' + 10 + (c - 'a')
		} else {
			out[i] = 'a' + (c - '0')
		}
	}
	return string(out)
}

func TestIDMatchesManifestKey(t *testing.T) {
	raw, err := os.ReadFile("manifest.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	der, err := base64.StdEncoding.DecodeString(m.Key)
	if err != nil {
		t.Fatalf("manifest key is not base64: %v", err)
	}
	if got := chromeID(der); got != ID {
		t.Fatalf("manifest key gives ID %s, const ID is %s", got, ID)
	}
}

func TestInstall(t *testing.T) {
	if !Built() {
		t.Skip("extension/dist is not built: run `npm run build` in extension/ to test Install")
	}
	dir := filepath.Join(t.TempDir(), "ext")
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"manifest.json", "background.js", "popup.html", "popup.js", "connect.html", "connect.js"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("%s not installed: %v", name, err)
		}
		want, err := Dist.ReadFile("dist/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("%s differs from the embedded copy", name)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, ".gitkeep")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf(".gitkeep should not be installed (err=%v)", err)
	}
	var m struct {
		Background struct {
			ServiceWorker string `json:"service_worker"`
			Type          string `json:"type"`
		} `json:"background"`
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	if m.Background.ServiceWorker != "background.js" || m.Background.Type != "module" {
		t.Fatalf("installed manifest background = %+v", m.Background)
	}
}
