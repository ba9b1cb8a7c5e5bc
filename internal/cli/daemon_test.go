package cli

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
)

func TestSecondServeFailsAndFirstKeepsServing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	first, addr := e.serve()
	r := e.run("", "serve")
	if r.code != 1 || !strings.Contains(r.stderr, "another torii daemon") {
		t.Fatalf("second serve: %d %q", r.code, r.stderr)
	}
	resp, err := http.Get("http://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("first daemon stopped answering: %v", err)
	}
	resp.Body.Close()
	if st := e.status(); st.Listen != addr {
		t.Errorf("status listen %q, want %q", st.Listen, addr)
	}
	// SIGTERM stops it gracefully: exit 0 and the socket goes away.
	first.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- first.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop on SIGTERM")
	}
	if r := e.run("", "status"); r.code != 1 {
		t.Errorf("status after stop: %d", r.code)
	}
}

func TestServeRejectsBadListen(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.run("", "serve", "--listen", "0.0.0.0:7317")
	if r.code != 1 || !strings.Contains(r.stderr, "non-loopback") {
		t.Fatalf("got %d %q", r.code, r.stderr)
	}
}

// mcpClient runs `torii mcp` under a real go-sdk MCP client.
func mcpClient(t *testing.T, e *env) *mcp.ClientSession {
	t.Helper()
	cs, err := mcpConnect(t, e)
	if err != nil {
		t.Fatalf("connect to torii mcp: %v", err)
	}
	return cs
}

// mcpConnect is mcpClient for use off the test goroutine.
func mcpConnect(t *testing.T, e *env) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := e.command("mcp", "--session-label", "test")
	c := mcp.NewClient(&mcp.Implementation{Name: "torii-test", Version: "0"}, nil)
	cs, err := c.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { cs.Close() })
	return cs, nil
}

func TestMCPAutostartsDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cs := mcpClient(t, e)
	ir := cs.InitializeResult()
	if ir.ServerInfo.Name != "torii" || ir.ServerInfo.Version != "dev" || ir.Capabilities.Tools == nil {
		t.Errorf("initialize: %+v caps %+v", ir.ServerInfo, ir.Capabilities)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	// Before any browser: the catalogue built into the binary, whole (read
	// from the binary's own copy of the extension).
	var builtin struct {
		Tools []*mcp.Tool `json:"tools"`
	}
	dir := t.TempDir()
	if r := e.run("", "extension", "install", dir); r.code == 0 {
		b, err := os.ReadFile(filepath.Join(dir, "catalogue.json"))
		if err != nil || json.Unmarshal(b, &builtin) != nil {
			t.Fatalf("the built extension has no catalogue.json: %v", err)
		}
	}
	var want, got []string
	for _, tl := range builtin.Tools {
		// A tool of a group is offered only when the person turns its group on.
		if _, grouped := tl.Meta[broker.GroupMetaKey]; !grouped {
			want = append(want, tl.Name)
		}
	}
	if len(want) > 0 {
		want = append(want, "status")
	}
	for _, tl := range res.Tools {
		got = append(got, tl.Name)
	}
	slices.Sort(want)
	slices.Sort(got)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("tools before the browser = %v, want %v", got, want)
	}
	st := e.status()
	if st.PID == 0 || st.Listen == "" {
		t.Fatalf("status of the auto-started daemon: %+v", st)
	}
	// The daemon outlives the MCP session that started it. A daemon that
	// went with it would go at an unknown moment after the session ends; no
	// event shows that it will not, so this waits a fixed time, then checks.
	cs.Close()
	time.Sleep(200 * time.Millisecond)
	if st2 := e.status(); st2.PID != st.PID {
		t.Errorf("daemon changed after mcp exit: %d -> %d", st.PID, st2.PID)
	}
}

func TestConcurrentMCPStartOneDaemon(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 3
	var wg sync.WaitGroup
	sessions := make([]*mcp.ClientSession, n)
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sessions[i], errs[i] = mcpConnect(t, e)
		}()
	}
	wg.Wait()
	for i, cs := range sessions {
		if errs[i] != nil {
			t.Fatalf("session %d: %v", i, errs[i])
		}
		if _, err := cs.ListTools(context.Background(), nil); err != nil {
			t.Errorf("session %d tools/list: %v", i, err)
		}
	}
	// Exactly one daemon: one "serve" process for this state dir.
	pid := e.status().PID
	count := 0
	for _, p := range pgrepServe(t) {
		if environHas(p, "TORII_STATE_DIR="+e.state) {
			count++
			if p != pid {
				t.Errorf("stray daemon pid %d (status says %d)", p, pid)
			}
		}
	}
	if count != 1 {
		t.Errorf("%d daemons for this state dir, want 1", count)
	}
	if log := filepath.Join(e.state, "torii.log"); strings.Contains(readFile(t, log), "another torii daemon") {
		t.Errorf("a second daemon was started and refused:\n%s", readFile(t, log))
	}
}
