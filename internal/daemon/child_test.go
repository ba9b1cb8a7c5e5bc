package daemon

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/tokens"
)

// The test binary doubles as a child process for the tests that need one
// the parent can starve of file descriptors or kill -9: TORII_TEST_CHILD
// selects what it runs instead of the tests.
func TestMain(m *testing.M) {
	switch os.Getenv("TORII_TEST_CHILD") {
	case "daemon":
		os.Exit(childDaemon())
	case "writer":
		os.Exit(childWriter())
	}
	os.Exit(m.Run())
}

// childDaemon runs a daemon under a low file-descriptor limit and writes
// its address to TORII_TEST_ADDR_FILE.
func childDaemon() int {
	if n, _ := strconv.Atoi(os.Getenv("TORII_TEST_NOFILE")); n > 0 {
		rl := syscall.Rlimit{Cur: uint64(n), Max: uint64(n)}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			return 2
		}
	}
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	ready := make(chan string, 1)
	done := make(chan error, 1)
	dir := os.Getenv("TORII_TEST_DIR")
	go func() {
		done <- Run(context.Background(), Options{Config: cfg, Version: "test", Ready: ready,
			Paths: config.Paths{ConfigDir: filepath.Join(dir, "c"), StateDir: filepath.Join(dir, "s")}})
	}()
	select {
	case addr := <-ready:
		if err := os.WriteFile(os.Getenv("TORII_TEST_ADDR_FILE"), []byte(addr), 0o600); err != nil {
			return 2
		}
	case err := <-done:
		fmt.Fprintln(os.Stderr, "daemon:", err)
		return 3
	}
	err := <-done
	fmt.Fprintln(os.Stderr, "daemon exited:", err)
	return 4
}

// childWriter writes the daemon's state files in a loop, as fast as it can,
// until it is killed.
func childWriter() int {
	dir := os.Getenv("TORII_TEST_DIR")
	p := config.Paths{ConfigDir: filepath.Join(dir, "c"), StateDir: filepath.Join(dir, "s")}
	if err := p.Ensure(); err != nil {
		return 2
	}
	ts, err := tokens.Open(p.Tokens())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ds, err := pairing.OpenDeviceStore(p.Devices())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	dev, err := linktest.NewDevice("writer")
	if err != nil {
		return 2
	}
	for i := 0; ; i++ {
		id, _, err := ts.Create(fmt.Sprintf("t%d", i))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		if i%3 == 2 {
			_ = ts.Revoke(id)
		}
		if d, err := ds.Add(fmt.Sprintf("d%d", i), linktest.ExtensionOrigin, dev.PublicKey()); err == nil && i%2 == 1 {
			_ = ds.Revoke(d.ID)
		}
		if i%5 == 0 {
			_ = os.Remove(p.DaemonKey())
			if _, err := pairing.LoadOrCreateIdentity(p.DaemonKey()); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 2
			}
		}
	}
}

// startChild runs this test binary as a child selected by what.
func startChild(t *testing.T, what string, env ...string) (*exec.Cmd, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "torii")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"TORII_TEST_CHILD=" + what, "TORII_TEST_DIR=" + dir,
		"TORII_TEST_ADDR_FILE=" + filepath.Join(dir, "addr")}, env...)...)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
	})
	return cmd, dir
}

// childAddr waits for a child daemon's address.
func childAddr(t *testing.T, dir string) string {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(filepath.Join(dir, "addr")); err == nil && len(b) > 0 {
			return string(b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("child daemon did not start")
	return ""
}

// pathsIn is the config/state layout a child uses under dir.
func pathsIn(dir string) config.Paths {
	return config.Paths{ConfigDir: filepath.Join(dir, "c"), StateDir: filepath.Join(dir, "s")}
}

func startDaemonCfg() config.Config {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	return cfg
}
