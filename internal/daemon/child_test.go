package daemon

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

// childDaemon runs a daemon under a low file-descriptor limit and prints
// its address on stdout once it serves.
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
		if _, err := fmt.Println(addr); err != nil {
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

// startChild runs this test binary as a child selected by what; stdout is
// what the child prints.
func startChild(t *testing.T, what string, env ...string) (cmd *exec.Cmd, dir string, stdout *bufio.Reader) {
	t.Helper()
	dir, err := os.MkdirTemp("", "torii")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append([]string{"TORII_TEST_CHILD=" + what, "TORII_TEST_DIR=" + dir}, env...)...)
	cmd.Stderr = os.Stderr
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout = w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the child holds its own copy: r ends when the child does
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		r.Close()
	})
	return cmd, dir, bufio.NewReader(r)
}

// childAddr waits for a child daemon to print its address.
func childAddr(t *testing.T, stdout *bufio.Reader) string {
	t.Helper()
	line := make(chan string, 1)
	go func() {
		s, _ := stdout.ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr := <-line:
		if addr == "" {
			t.Fatal("child daemon exited before it served")
		}
		return addr
	case <-time.After(15 * time.Second):
		t.Fatal("child daemon did not start in 15 s")
		return ""
	}
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
