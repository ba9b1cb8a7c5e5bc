// Package e2e_test runs team mode end to end with real parts: PostgreSQL and
// nats-server, three `torii serve --team` replicas as processes of the real
// binary behind a TCP forwarder standing in for a Kubernetes Service, two
// headless Chromium browsers with the real extension started by `torii
// launch --server … --allow …` and paired as two users, and agents on the
// official MCP client with user tokens.
package e2e_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bin is the torii binary built once for the whole package.
var bin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	root, err := moduleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	// The binary embeds extension/dist; without a build the browsers would
	// load an empty extension and nothing could pair.
	if _, err := os.Stat(filepath.Join(root, "extension", "dist", "manifest.json")); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: extension/dist has no built extension: run `npm --prefix extension run build` (or `make build`) first")
		return 1
	}
	dir, err := os.MkdirTemp("", "torii-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "torii")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/torii")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: go build ./cmd/torii: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// moduleRoot is the directory holding go.mod, from the package directory
// `go test` runs in.
func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("not inside the torii module")
	}
	return filepath.Dir(mod), nil
}
