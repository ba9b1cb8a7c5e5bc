package replica

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/pairing"
)

// Three replicas creating the shared identity at once end up with one key.
func TestIdentityCreatedOnceByConcurrentReplicas(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "identity", "key")
	const n = 3
	ids := make([]*pairing.Identity, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			ids[i], errs[i] = loadIdentity(path)
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("replica %d: %v", i, errs[i])
		}
		if !bytes.Equal(ids[i].PublicKey(), ids[0].PublicKey()) {
			t.Fatalf("replica %d holds another key", i)
		}
	}
	again, err := loadIdentity(path)
	if err != nil || !bytes.Equal(again.PublicKey(), ids[0].PublicKey()) {
		t.Fatalf("reload: %v", err)
	}
	left, _ := os.ReadDir(filepath.Dir(path))
	if len(left) != 1 {
		t.Fatalf("temporary files left beside the key: %d entries", len(left))
	}
}

// SECURITY I-92: a plaintext non-loopback listen refuses to start, naming
// the fix, even when handed a Team that skipped validation.
func TestPlaintextNonLoopbackRefusesToStart(t *testing.T) {
	t.Parallel()
	err := Run(context.Background(), Options{Config: config.Config{Listen: "0.0.0.0:0"},
		Team: config.Team{Store: "postgres://x", Bus: "nats://x", Replica: "r"}})
	if !errors.Is(err, config.ErrTeamPlaintext) || !strings.Contains(err.Error(), "team.tls.cert") {
		t.Fatalf("Run = %v, want the plaintext refusal naming the fix", err)
	}
}

func TestAdminSecretRefusedWhenShortOrMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	_ = os.WriteFile(short, []byte("abc\n"), 0o600)
	for _, p := range []string{"", filepath.Join(dir, "missing"), short} {
		if _, err := readAdminSecret(p); !errors.Is(err, ErrNoAdminSecret) {
			t.Fatalf("readAdminSecret(%q) = %v", p, err)
		}
	}
	good := filepath.Join(dir, "good")
	_ = os.WriteFile(good, []byte(strings.Repeat("a", 40)+"\n"), 0o600)
	if b, err := readAdminSecret(good); err != nil || len(b) != 40 {
		t.Fatalf("readAdminSecret(good) = %q, %v", b, err)
	}
}
