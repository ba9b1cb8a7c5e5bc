package tokens

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/torii-browser/torii/internal/atomicfile"
)

func TestCreateCheckHashOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "tokens.json")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 0 {
		t.Fatal("new store not empty")
	}
	id, tok, err := s.Create("katashiro side panel")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "tok_") {
		t.Fatalf("id %q", id)
	}
	raw, ok := strings.CutPrefix(tok, Prefix)
	if !ok {
		t.Fatalf("token %q lacks prefix", tok)
	}
	if b, err := base64.RawURLEncoding.DecodeString(raw); err != nil || len(b) != 32 {
		t.Fatalf("token body not 32 bytes base64url: %v", err)
	}

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// SECURITY I-8: neither the token nor its random part reaches the disk.
	if strings.Contains(string(data), tok) || strings.Contains(string(data), raw) {
		t.Fatal("raw token written to disk")
	}
	h := sha256.Sum256([]byte(tok))
	if !strings.Contains(string(data), hex.EncodeToString(h[:])) {
		t.Fatal("hash not in file")
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o", fi.Mode().Perm())
	}

	if got, ok := s.Check(tok); !ok || got != id {
		t.Fatalf("Check = %q %v", got, ok)
	}
	id2, tok2, _ := s.Create("")
	if tok2 == tok || id2 == id {
		t.Fatal("tokens not unique")
	}
	if got, ok := s.Check(tok2); !ok || got != id2 {
		t.Fatalf("Check second = %q %v", got, ok)
	}
	for _, bad := range []string{"", Prefix, tok[:len(tok)-1], tok + "x", strings.ToUpper(tok), " " + tok, raw, hex.EncodeToString(h[:])} {
		if got, ok := s.Check(bad); ok || got != "" {
			t.Errorf("Check(%q) accepted as %q", bad, got)
		}
	}

	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if r.Len() != 2 {
		t.Fatalf("reopened %d", r.Len())
	}
	if got, ok := r.Check(tok); !ok || got != id {
		t.Fatal("reopened store rejects token")
	}
	l := r.List()
	if len(l) != 2 || l[0].ID != id || l[0].Label != "katashiro side panel" || l[0].CreatedAt.IsZero() {
		t.Fatalf("list %+v", l)
	}
}

func TestRevoke(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, _ := Open(path)
	id1, tok1, _ := s.Create("a")
	id2, tok2, _ := s.Create("b")
	if err := s.Revoke(id1); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Check(tok1); ok {
		t.Fatal("revoked token accepted")
	}
	if got, ok := s.Check(tok2); !ok || got != id2 {
		t.Fatal("other token lost on revoke")
	}
	if err := s.Revoke(id1); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("second revoke: %v", err)
	}
	if err := s.Revoke("tok_nope"); !errors.Is(err, ErrUnknownToken) {
		t.Fatalf("unknown: %v", err)
	}
	r, _ := Open(path)
	if _, ok := r.Check(tok1); ok || r.Len() != 1 {
		t.Fatal("revocation not persisted")
	}
}

func TestBadLabel(t *testing.T) {
	s, _ := Open(filepath.Join(t.TempDir(), "tokens.json"))
	for _, l := range []string{strings.Repeat("x", MaxLabel+1), "a\nb", "a\x00", "a\u202eb", "\xff"} {
		if _, _, err := s.Create(l); !errors.Is(err, ErrBadLabel) {
			t.Errorf("%q: %v", l, err)
		}
	}
	if s.Len() != 0 {
		t.Fatal("bad label stored")
	}
}

func TestOpenRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tokens.json")
	s, _ := Open(path)
	if _, _, err := s.Create("x"); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path); !errors.Is(err, atomicfile.ErrPermTooOpen) {
		t.Fatalf("0640: %v", err)
	}
	h := strings.Repeat("ab", 32)
	for name, body := range map[string]string{
		"not json":   "nope",
		"short hash": `{"version":1,"tokens":[{"id":"tok_1","sha256":"abcd"}]}`,
		"not hex":    `{"version":1,"tokens":[{"id":"tok_1","sha256":"` + strings.Repeat("zz", 32) + `"}]}`,
		"no id":      `{"version":1,"tokens":[{"id":"","sha256":"` + h + `"}]}`,
		"dup id":     `{"version":1,"tokens":[{"id":"tok_1","sha256":"` + h + `"},{"id":"tok_1","sha256":"` + h + `"}]}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(p); !errors.Is(err, ErrCorruptStore) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// Check must visit every stored hash whatever the input: count the
// comparisons through a store with a match at the front, the back, and none.
// (Wall-clock timing is too noisy to assert on a shared machine; this pins
// the property that makes it constant: no early exit.)
func TestCheckVisitsEveryHash(t *testing.T) {
	s, _ := Open(filepath.Join(t.TempDir(), "tokens.json"))
	var toks []string
	for i := 0; i < 5; i++ {
		_, tok, err := s.Create("")
		if err != nil {
			t.Fatal(err)
		}
		toks = append(toks, tok)
	}
	for _, in := range []string{toks[0], toks[4], "torii_wrong"} {
		n := 0
		compareHook = func() { n++ }
		s.Check(in)
		compareHook = nil
		if n != 5 {
			t.Fatalf("Check(%q) compared %d hashes, want all 5", in[:8], n)
		}
	}
}

func TestConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens.json")
	s, _ := Open(path)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, tok, err := s.Create("c")
			if err != nil {
				t.Error(err)
				return
			}
			if got, ok := s.Check(tok); !ok || got != id {
				t.Error("concurrent check failed")
			}
			s.List()
		}()
	}
	wg.Wait()
	r, _ := Open(path)
	if r.Len() != 8 {
		t.Fatalf("persisted %d, want 8", r.Len())
	}
}
