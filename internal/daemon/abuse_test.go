package daemon

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/control"
)

// closedWithin waits for the server to close nc (EOF or reset) and fails
// if it is still open after d.
func closedWithin(t *testing.T, nc net.Conn, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	nc.SetReadDeadline(start.Add(d))
	_, err := io.Copy(io.Discard, nc)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("connection still open after %s", d)
	}
	return time.Since(start)
}

// An idle keep-alive connection and a connection that never sends a
// request are both closed by the daemon, so they cannot pile up.
func TestIdleConnectionsAreClosed(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, func(o *Options) {
		o.httpLimits = httpLimits{idle: 300 * time.Millisecond, header: 300 * time.Millisecond}
	})
	ka, err := net.Dial("tcp", td.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer ka.Close()
	fmt.Fprintf(ka, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(ka), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if el := closedWithin(t, ka, 5*time.Second); el > 3*time.Second {
		t.Fatalf("idle keep-alive closed after %s", el)
	}
	silent, err := net.Dial("tcp", td.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	silent.Write([]byte("GET /heal")) // a header that never finishes
	if el := closedWithin(t, silent, 5*time.Second); el > 3*time.Second {
		t.Fatalf("unfinished header closed after %s", el)
	}
}

// A refused request is answered at once, even when its body never
// finishes; an accepted one whose body stalls is cut at the body deadline.
func TestBodiesThatNeverFinish(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, func(o *Options) { o.httpLimits = httpLimits{body: 400 * time.Millisecond} })
	var tok TokensCreateResult
	td.call("tokens.create", map[string]string{"label": "slow"}, &tok)
	for name, tc := range map[string]struct {
		path, auth string
		want       int
	}{
		"mcp without a token":  {"/mcp", "", 401},
		"mcp with a bad token": {"/mcp", "Bearer torii_nope", 401},
		"acp without upgrade":  {"/acp", "", 426},
		"unknown path":         {"/nope", "", 404},
	} {
		t.Run(name, func(t *testing.T) {
			nc, err := net.Dial("tcp", td.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			hdr := ""
			if tc.auth != "" {
				hdr = "Authorization: " + tc.auth + "\r\n"
			}
			fmt.Fprintf(nc, "POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n%sContent-Length: 100000\r\n\r\n{\"jsonrpc\":", tc.path, hdr)
			nc.SetReadDeadline(time.Now().Add(3 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
			if err != nil {
				t.Fatalf("no answer while the body is unfinished: %v", err)
			}
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	// Authenticated: the handler reads the body, which stalls.
	nc, err := net.Dial("tcp", td.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	fmt.Fprintf(nc, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":", tok.Token)
	if el := closedWithin(t, nc, 5*time.Second); el > 3*time.Second {
		t.Fatalf("stalled body held the connection for %s", el)
	}
}

// One Host rule for every endpoint: loopback names in any spelling pass,
// anything else is refused with 403.
func TestOneHostRuleForEveryEndpoint(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	var tok TokensCreateResult
	td.call("tokens.create", map[string]string{"label": "hosts"}, &tok)
	base := "http://" + td.addr
	for _, host := range []string{"localhost.", "LOCALHOST.:7317", "localhost", "127.0.0.1", "127.0.0.2:9", "[::1]:1"} {
		for _, path := range []string{"/acp", "/mcp", "/healthz"} {
			if resp := httpGet(t, base+path, bearer(tok.Token), host); resp.StatusCode == 403 {
				t.Errorf("Host %q on %s: 403", host, path)
			}
		}
	}
	for _, host := range []string{"evil.example", "localhost.evil.example", "127.0.0.1.nip.io", "localhost..", "[::2]", "0.0.0.0"} {
		for _, path := range []string{"/acp", "/mcp", "/healthz", "/nope"} {
			if resp := httpGet(t, base+path, bearer(tok.Token), host); resp.StatusCode != 403 {
				t.Errorf("Host %q on %s: %d, want 403", host, path, resp.StatusCode)
			}
		}
	}
}

// At the connection budget the oldest idle connection makes room, so idle
// connections can never keep a client out.
func TestConnectionBudgetEvictsIdleConnections(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, func(o *Options) { o.maxConns = 16 })
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			c.Close()
		}
	}()
	for i := 0; i < 40; i++ {
		c, err := net.Dial("tcp", td.addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
	}
	for i := 0; i < 5; i++ {
		if resp := httpGet(t, "http://"+td.addr+"/healthz", nil, ""); resp.StatusCode != 200 {
			t.Fatalf("healthz at the budget: %d", resp.StatusCode)
		}
	}
	// The first idle connections were the ones evicted.
	closedWithin(t, idle[0], 3*time.Second)
}

// Starved of file descriptors by a flood of idle connections, the daemon
// keeps serving: HTTP and the control socket alike. It runs as a child with
// a low descriptor limit, so the flood exhausts it without touching this
// process's.
func TestFDExhaustionDoesNotEndTheDaemon(t *testing.T) {
	t.Parallel()
	const nofile = 200
	cmd, dir, stdout := startChild(t, "daemon", fmt.Sprintf("TORII_TEST_NOFILE=%d", nofile))
	addr := childAddr(t, stdout)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var flood []net.Conn
	defer func() {
		for _, c := range flood {
			c.Close()
		}
	}()
	for i := 0; i < 3*nofile; i++ {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break
		}
		flood = append(flood, c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sock := filepath.Join(dir, "s", "torii.sock")
	// Several control connections during the flood: each accept may fail
	// with EMFILE in the child; the daemon must retry, not exit.
	for i := 0; i < 5; i++ {
		cl, err := control.Dial(ctx, sock)
		if err != nil {
			t.Fatalf("control dial %d: %v", i, err)
		}
		var st StatusResult
		if err := cl.Call(ctx, "status", nil, &st); err != nil {
			t.Fatalf("control status %d during the flood: %v", i, err)
		}
		cl.Close()
	}
	hc := &http.Client{Timeout: 10 * time.Second}
	resp, err := hc.Get("http://" + addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("healthz during the flood: %v %v", resp, err)
	}
	resp.Body.Close()
	select {
	case err := <-exited:
		t.Fatalf("the daemon exited: %v", err)
	default:
	}
}

// 10,000 connections opened and closed per second (bounded to two seconds
// here) neither end the daemon nor keep a legitimate client out.
func TestConnectChurn(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	stop := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	var mu sync.Mutex
	opened := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 0
			for time.Now().Before(stop) {
				if c, err := net.Dial("tcp", td.addr); err == nil {
					c.Close()
					n++
				}
			}
			mu.Lock()
			opened += n
			mu.Unlock()
		}()
	}
	hc := &http.Client{Timeout: 5 * time.Second}
	for time.Now().Before(stop) {
		resp, err := hc.Get("http://" + td.addr + "/healthz")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("healthz during the churn: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	wg.Wait()
	t.Logf("%d connections opened and closed in 2 s", opened)
	var st StatusResult
	td.call("status", nil, &st)
}

// A temporary file left by a write cut short (kill -9) is removed at start.
func TestStaleTempFilesRemovedAtStart(t *testing.T) {
	t.Parallel()
	paths := testPaths(t)
	if err := paths.Ensure(); err != nil {
		t.Fatal(err)
	}
	stale := []string{filepath.Join(paths.StateDir, ".tokens.json.tmp-123456"),
		filepath.Join(paths.StateDir, ".devices.json.tmp-9"), filepath.Join(paths.ConfigDir, ".config.json.tmp-1")}
	for _, f := range stale {
		if err := os.WriteFile(f, []byte(`{"half":`), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	keep := filepath.Join(paths.StateDir, "notes.tmp-1")
	os.WriteFile(keep, []byte("x"), 0o600)
	cfg := startDaemonCfg()
	runDaemon(t, Options{Paths: paths, Config: cfg, Version: "test"})
	for _, f := range stale {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s still there after start (%v)", filepath.Base(f), err)
		}
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("a file that is not ours was removed: %v", err)
	}
}

// A kill -9 at any point of any state write leaves state that loads: a
// child writes tokens, devices and the daemon key in a loop and is killed
// at a random moment, again and again; each time the state must load and
// a daemon must start on it with no temporary file left.
func TestKillDuringWritesLeavesLoadableState(t *testing.T) {
	t.Parallel()
	rounds := 15
	if testing.Short() {
		rounds = 5
	}
	cut := 0 // rounds killed between a temporary file's creation and its rename
	defer func() { t.Logf("%d of %d kills left a temporary file behind", cut, rounds) }()
	for i := 0; i < rounds; i++ {
		cmd, dir, _ := startChild(t, "writer")
		// The kill lands at a different moment of the writer's loop each
		// round: when it lands is what this test varies.
		time.Sleep(time.Duration(40+i*11) * time.Millisecond)
		_ = cmd.Process.Signal(os.Kill)
		_, _ = cmd.Process.Wait()
		paths := pathsIn(dir)
		before, _ := os.ReadDir(paths.StateDir)
		for _, e := range before {
			if strings.Contains(e.Name(), ".tmp-") {
				cut++
			}
		}
		cfg := startDaemonCfg()
		td := runDaemon(t, Options{Paths: paths, Config: cfg, Version: "test"})
		var toks TokensListResult
		td.call("tokens.list", nil, &toks)
		td.stop()
		entries, _ := os.ReadDir(paths.StateDir)
		for _, e := range entries {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Fatalf("round %d: %s left after start", i, e.Name())
			}
		}
	}
}
