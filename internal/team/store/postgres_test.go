package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/team/store/storetest"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

func pgConn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c
}

func postgresBackend(srv *teamtest.Server) storetest.Backend {
	var n atomic.Int64
	return storetest.Backend{
		NewDB: func(t *testing.T) string { return srv.NewDatabase(t, fmt.Sprintf("contract%d", n.Add(1))) },
		Exec: func(t *testing.T, url, q string) {
			if _, err := pgConn(t, url).Exec(context.Background(), q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		},
		Dump: func(t *testing.T, url string) []byte {
			c := pgConn(t, url)
			rows, err := c.Query(context.Background(), `SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'`)
			if err != nil {
				t.Fatal(err)
			}
			tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				t.Fatal(err)
			}
			var all []byte
			for _, tb := range tables {
				rows, err := c.Query(context.Background(), `SELECT x::text FROM `+pgx.Identifier{tb}.Sanitize()+` x`)
				if err != nil {
					t.Fatal(err)
				}
				vals, err := pgx.CollectRows(rows, pgx.RowTo[string])
				if err != nil {
					t.Fatal(err)
				}
				all = append(all, strings.Join(vals, "\n")...)
			}
			return all
		},
	}
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	storetest.Run(t, postgresBackend(teamtest.Postgres(t)))
}

// Replicas starting together migrate once, under the advisory lock.
func TestPostgresOpenTogether(t *testing.T) {
	t.Parallel()
	srv := teamtest.Postgres(t)
	url := srv.NewDatabase(t, "together")
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s, err := store.Open(context.Background(), url)
			if err == nil {
				s.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	var v int
	if err := pgConn(t, url).QueryRow(context.Background(), `SELECT count(*) FROM schema_version`).Scan(&v); err != nil || v != 1 {
		t.Fatalf("schema_version rows %d, %v", v, err)
	}
}

func TestPostgresOpenErrors(t *testing.T) {
	t.Parallel()
	srv := teamtest.Postgres(t)
	free := teamtest.FreePort(t)
	for _, c := range []struct {
		name, url, says string
		unavailable     bool
	}{
		{"unreachable", fmt.Sprintf("postgres://torii:pw-secret-1@127.0.0.1:%d/torii?sslmode=disable", free), "cannot reach", true},
		{"unknown user", fmt.Sprintf("postgres://nobody:pw-secret-1@127.0.0.1:%d/torii?sslmode=disable", srv.Port), "credentials", true},
		{"unknown database", fmt.Sprintf("postgres://torii:pw-secret-1@127.0.0.1:%d/nodb?sslmode=disable", srv.Port), "no database", true},
		{"bad port", "postgres://torii:pw-secret-1@127.0.0.1:notaport/torii", "not a PostgreSQL URL", false},
		{"bad option", "postgres://torii:pw-secret-1@127.0.0.1/torii?sslmode=sometimes", "not a PostgreSQL URL", false},
		{"bad scheme", "mysql://torii:pw-secret-1@127.0.0.1/torii", "not a store URL", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, err := store.Open(context.Background(), c.url)
			if err == nil {
				s.Close()
				t.Fatal("opened")
			}
			if !strings.Contains(err.Error(), c.says) || errors.Is(err, store.ErrUnavailable) != c.unavailable {
				t.Fatalf("%v: want it to say %q, unavailable %v", err, c.says, c.unavailable)
			}
			// Either retryable and typed, or the URL's own fault: never both.
			var ce *store.ConnError
			if errors.As(err, &ce) != c.unavailable || errors.Is(err, store.ErrBadURL) == c.unavailable {
				t.Fatalf("%v: ConnError %v, ErrBadURL %v; want exactly one", err, errors.As(err, &ce), errors.Is(err, store.ErrBadURL))
			}
			if strings.Contains(err.Error(), "pw-secret-1") {
				t.Fatalf("the error shows the password: %v", err)
			}
		})
	}
}

// A role that needs a password: the wrong one is a typed store_auth error
// naming the user and where to fix it, never the password; once the
// role's password is what the URL says, the same URL opens and migrates.
func TestPostgresWrongPassword(t *testing.T) {
	t.Parallel()
	srv := teamtest.Postgres(t)
	url := srv.PasswordRole(t, "gw", "right-pass-1", "wrong-pass-9")
	_, err := store.Open(context.Background(), url)
	var ce *store.ConnError
	if !errors.As(err, &ce) || ce.Code != "store_auth" || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Open with a wrong password = %v, want a store_auth ConnError", err)
	}
	if !strings.Contains(ce.Msg, `refused the password for user "gw"`) || !strings.Contains(ce.Fix, "team.store") {
		t.Fatalf("the error does not name the problem and the fix: %q / %q", ce.Msg, ce.Fix)
	}
	if strings.Contains(err.Error(), "wrong-pass-9") || strings.Contains(err.Error(), "right-pass-1") {
		t.Fatalf("the error shows a password: %v", err)
	}
	srv.Exec(t, `ALTER ROLE gw PASSWORD 'wrong-pass-9'`)
	s, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatalf("Open after the password was set: %v", err)
	}
	defer s.Close()
	if _, err := s.CreateUser(context.Background(), "alice"); err != nil {
		t.Fatal(err)
	}
}

// A server stopped mid-use: errors wrap ErrUnavailable, and once it is
// back the same store works, without reopening. Not parallel: another
// test's server started while this one is down could take its free port.
func TestPostgresStopStart(t *testing.T) {
	srv := teamtest.Postgres(t)
	s := storetest.Open(t, srv.URL)
	ctx := context.Background()
	u, err := s.CreateUser(ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	// Stop kills the postmaster; each backend runs in its own session and
	// exits when it notices, so a pooled connection may answer briefly.
	deadline := time.Now().Add(30 * time.Second)
	for err := s.Ping(ctx); !errors.Is(err, store.ErrUnavailable); err = s.Ping(ctx) {
		if err != nil || time.Now().After(deadline) {
			t.Fatalf("Ping with the server stopped: %v", err)
		}
		time.Sleep(20 * time.Millisecond) // a retry until the backends are gone, not a wait for our own state
	}
	if _, err := s.User(ctx, u.ID); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("User with the server stopped: %v", err)
	}
	if _, err := s.AppendAudit(ctx, store.AuditRecord{UserID: u.ID}); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("AppendAudit with the server stopped: %v", err)
	}
	srv.Start(t)
	// The server recovers from the crash before it answers queries.
	deadline = time.Now().Add(30 * time.Second)
	for s.Ping(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the store never came back")
		}
		time.Sleep(50 * time.Millisecond) // a retry of the recovering server, not a wait for our own state
	}
	if got, err := s.User(ctx, u.ID); err != nil || got.Name != "alice" {
		t.Fatalf("after restart: %+v %v", got, err)
	}
	if _, err := s.AppendAudit(ctx, store.AuditRecord{UserID: u.ID}); err != nil {
		t.Fatal(err)
	}
}

// An append that fails inside its transaction (here the insert, refused
// by a constraint) leaves neither the head's lock nor a record behind: the
// next append, on a pool of one connection, goes through and the chain
// still verifies.
func TestPostgresFailedAppendReleasesTheHead(t *testing.T) {
	t.Parallel()
	srv := teamtest.Postgres(t)
	url := srv.NewDatabase(t, "failedappend")
	s, err := store.Open(context.Background(), url+"&pool_max_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := pgConn(t, url).Exec(context.Background(), `ALTER TABLE audit ADD CONSTRAINT no_boom CHECK (tool <> 'boom')`); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.AppendAudit(ctx, store.AuditRecord{UserID: "u", DeviceID: "d"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AppendAudit(ctx, store.AuditRecord{UserID: "u", DeviceID: "d", Record: audit.Record{Tool: "boom"}}); err == nil {
		t.Fatal("an append the database refused reported success")
	}
	r, err := s.AppendAudit(ctx, store.AuditRecord{UserID: "u", DeviceID: "d", Record: audit.Record{Tool: "tabs"}})
	if err != nil || r.ID != 2 {
		t.Fatalf("the append after a failed one: %+v %v, want record 2", r, err)
	}
	if ce, err := s.VerifyAudit(ctx, nil); err != nil || ce != nil {
		t.Fatalf("VerifyAudit: %v %v", ce, err)
	}
}
