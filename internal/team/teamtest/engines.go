// Package teamtest starts the real engines team mode runs on, Debian's
// PostgreSQL and nats-server, on loopback for tests. Each test binary gets
// its own servers in temporary directories, stopped when the tests end.
// Where a server's program is missing the test is skipped, except under CI,
// where it fails: CI installs them (.ci/run).
package teamtest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// find looks a server program up in PATH and in the places Debian installs it.
func find(name string, dirs ...string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range dirs {
		if matches, _ := filepath.Glob(filepath.Join(d, name)); len(matches) > 0 {
			return matches[len(matches)-1], nil
		}
	}
	return "", fmt.Errorf("%s not found: install Debian's package (apt-get install postgresql nats-server)", name)
}

func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("teamtest: %v", err)
	}
	t.Skipf("teamtest: %v", err)
}

// FreePort returns a loopback TCP port nothing listens on now.
func FreePort(t testing.TB) int {
	t.Helper()
	p, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// Server is one engine process.
type Server struct {
	URL  string // postgres://… or nats://…
	Port int
	dir  string
	args []string
	prog string
	uid  int // run as this user when not 0 (PostgreSQL refuses root)
	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

// Stop kills the server and every process it started (SIGKILL, as a
// crash) and waits for it to exit.
func (s *Server) Stop() {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	if cmd == nil {
		return
	}
	// PostgreSQL's backends leave the server's process group (setsid), so
	// they are killed by parent first: a stopped server answers no one.
	for _, pid := range children(cmd.Process.Pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-done
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// Fields after the parenthesised command name: state, then ppid.
		rest := string(b)
		if i := strings.LastIndexByte(rest, ')'); i >= 0 {
			rest = rest[i+1:]
		}
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

// Start starts a stopped server again on the same port and data, and waits
// until it accepts connections.
func (s *Server) Start(t testing.TB) {
	t.Helper()
	if err := s.start(); err != nil {
		t.Fatal(err)
	}
}

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return nil
	}
	cmd := exec.Command(s.prog, s.args...)
	logf, err := os.OpenFile(filepath.Join(s.dir, "server.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.uid)}
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("teamtest: start %s: %w", filepath.Base(s.prog), err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); logf.Close(); close(done) }()
	s.cmd, s.done = cmd, done
	return waitPort(s.Port, done, filepath.Join(s.dir, "server.log"))
}

// waitPort waits for the port to accept a connection, or the process to exit.
func waitPort(port int, exited <-chan struct{}, logPath string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("teamtest: server exited before listening on %s: %s", addr, tail(logPath))
		case <-ctx.Done():
			return fmt.Errorf("teamtest: nothing listens on %s after 30 s: %s", addr, tail(logPath))
		case <-time.After(20 * time.Millisecond): // a dial retry, not a poll of state we own
		}
	}
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

// Postgres starts a PostgreSQL server (initdb, then postgres) on a free
// loopback port with trust authentication for user "torii" and database
// "torii". Its URL has sslmode=disable: loopback only.
func Postgres(t testing.TB) *Server {
	t.Helper()
	if _, err := find("initdb", "/usr/lib/postgresql/*/bin"); err != nil {
		missing(t, err)
	}
	s, err := StartPostgres(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartPostgres is Postgres for a program that is not a test (the load
// bench): the server keeps its data in dir, and the caller stops it.
func StartPostgres(dir string) (*Server, error) {
	initdb, err := find("initdb", "/usr/lib/postgresql/*/bin")
	if err != nil {
		return nil, err
	}
	postgres := filepath.Join(filepath.Dir(initdb), "postgres")
	data := filepath.Join(dir, "data")
	cmd := exec.Command(initdb, "-D", data, "-U", "torii", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C")
	if os.Geteuid() == 0 {
		// PostgreSQL refuses to run as root: run it as nobody, owning the directory.
		if err := os.Chown(dir, 65534, 65534); err != nil {
			return nil, err
		}
		if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
			return nil, err
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("teamtest: initdb: %v: %s", err, out)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Port: port, dir: dir, prog: postgres,
		URL: fmt.Sprintf("postgres://torii@127.0.0.1:%d/postgres?sslmode=disable", port),
		args: []string{"-D", data, "-p", strconv.Itoa(port), "-h", "127.0.0.1", "-k", dir,
			"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off", "-c", "max_connections=300"}}
	if os.Geteuid() == 0 {
		s.uid = 65534
	}
	if err := s.start(); err != nil {
		return nil, err
	}
	if err := s.createDB("torii"); err != nil {
		s.Stop()
		return nil, err
	}
	s.URL = fmt.Sprintf("postgres://torii@127.0.0.1:%d/torii?sslmode=disable", port)
	return s, nil
}

// NewDatabase creates another empty database on the same server and returns its URL.
func (s *Server) NewDatabase(t testing.TB, name string) string {
	t.Helper()
	if err := s.createDB(name); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("postgres://torii@127.0.0.1:%d/%s?sslmode=disable", s.Port, name)
}

func (s *Server) createDB(name string) error {
	if out, err := s.psql("torii", "postgres", "CREATE DATABASE "+name); err != nil {
		return fmt.Errorf("teamtest: create database %s: %v: %s", name, err, out)
	}
	return nil
}

// NATS starts nats-server with JetStream on a free loopback port.
func NATS(t testing.TB) *Server {
	t.Helper()
	if _, err := find("nats-server", "/usr/sbin", "/usr/bin"); err != nil {
		missing(t, err)
	}
	s, err := StartNATS(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// NATSWithPassword is NATS whose clients must log in as user with pass;
// its URL carries no credentials.
func NATSWithPassword(t testing.TB, user, pass string) *Server {
	t.Helper()
	if _, err := find("nats-server", "/usr/sbin", "/usr/bin"); err != nil {
		missing(t, err)
	}
	s, err := StartNATS(t.TempDir(), "--user", user, "--pass", pass)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}

// StartNATS is NATS for a program that is not a test (the load bench): the
// server keeps its JetStream data in dir, and the caller stops it. args
// are more of nats-server's flags.
func StartNATS(dir string, args ...string) (*Server, error) {
	prog, err := find("nats-server", "/usr/sbin", "/usr/bin")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Port: port, dir: dir, prog: prog, URL: fmt.Sprintf("nats://127.0.0.1:%d", port),
		args: append([]string{"-a", "127.0.0.1", "-p", strconv.Itoa(port), "-js", "-sd", filepath.Join(dir, "js")}, args...)}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// Log returns the server's output so far, for a failing test's message.
func (s *Server) Log() string { return tail(filepath.Join(s.dir, "server.log")) }
