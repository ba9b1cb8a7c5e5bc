package teamtest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// PasswordRole creates a login role with a password and a database it
// owns, and makes the server require scram-sha-256 for that role over
// loopback TCP; every other role keeps trust, so other tests on the server
// are unaffected. It returns the database's URL with the given password in
// it (which need not be the role's: a test may start with a wrong one).
func (s *Server) PasswordRole(t testing.TB, role, password, urlPassword string) string {
	t.Helper()
	s.Exec(t, fmt.Sprintf(`CREATE ROLE %s LOGIN PASSWORD '%s'`, role, password))
	s.Exec(t, fmt.Sprintf(`CREATE DATABASE %s OWNER %s`, role, role))
	// pg_hba.conf is read top down, first match wins: these lines come
	// before initdb's trust lines.
	hba := filepath.Join(s.dir, "data", "pg_hba.conf")
	old, err := os.ReadFile(hba)
	if err != nil {
		t.Fatal(err)
	}
	lines := fmt.Sprintf("host all %s 127.0.0.1/32 scram-sha-256\nhost all %s ::1/128 scram-sha-256\n", role, role)
	if err := os.WriteFile(hba, append([]byte(lines), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	s.Exec(t, `SELECT pg_reload_conf()`)
	// The reload is a signal the server handles in its own time: wait
	// until the role is asked for its password.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := s.psql(role, role, `SELECT 1`)
		if err != nil && strings.Contains(out, "password") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("teamtest: pg_hba.conf not in effect for %s after 30 s: %v %s", role, err, out)
		}
		time.Sleep(20 * time.Millisecond) // a retry of the server's reload, not a wait for our own state
	}
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", role, urlPassword, s.Port, role)
}

// Exec runs SQL on the server as the superuser "torii".
func (s *Server) Exec(t testing.TB, sql string) {
	t.Helper()
	if out, err := s.psql("torii", "postgres", sql); err != nil {
		t.Fatalf("teamtest: %s: %v: %s", sql, err, out)
	}
}

// psql runs sql as user on database db over loopback TCP, never prompting
// for a password. A server that listens but is still recovering (just
// started, on a loaded machine) is waited for.
func (s *Server) psql(user, db, sql string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := s.psqlOnce(user, db, sql)
		if err == nil || !strings.Contains(out, "starting up") || time.Now().After(deadline) {
			return out, err
		}
		time.Sleep(50 * time.Millisecond) // a retry of the server's recovery, not a wait for our own state
	}
}

func (s *Server) psqlOnce(user, db, sql string) (string, error) {
	psql, err := find("psql", "/usr/lib/postgresql/*/bin")
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, psql, "-w", "-h", "127.0.0.1", "-p", strconv.Itoa(s.Port), "-U", user, "-d", db,
		"-v", "ON_ERROR_STOP=1", "-c", sql)
	env := []string{"PGPASSFILE=" + os.DevNull}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PGPASSWORD=") && !strings.HasPrefix(kv, "PGPASSFILE=") {
			env = append(env, kv)
		}
	}
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}
