package daemon

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/mcpserver"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/wire"
)

type testDaemon struct {
	t      *testing.T
	opts   Options
	addr   string
	url    string
	ctl    *control.Client
	cancel context.CancelFunc
	done   chan error
}

func testPaths(t *testing.T) config.Paths {
	t.Helper()
	// Unix socket paths must stay under 108 bytes; t.TempDir can be longer.
	dir, err := os.MkdirTemp("", "torii")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return config.Paths{ConfigDir: filepath.Join(dir, "c"), StateDir: filepath.Join(dir, "s")}
}

func testLogger(t *testing.T) *slog.Logger {
	if testing.Verbose() {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

// startDaemon runs a real daemon on 127.0.0.1:0 and connects a control client.
func startDaemon(t *testing.T, mutate func(*Options)) *testDaemon {
	t.Helper()
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	opts := Options{Paths: testPaths(t), Config: cfg, Logger: testLogger(t), Version: "test", Catalogue: []*mcp.Tool{}}
	if mutate != nil {
		mutate(&opts)
	}
	return runDaemon(t, opts)
}

func runDaemon(t *testing.T, opts Options) *testDaemon {
	t.Helper()
	ready := make(chan string, 1)
	opts.Ready = ready
	ctx, cancel := context.WithCancel(context.Background())
	td := &testDaemon{t: t, opts: opts, cancel: cancel, done: make(chan error, 1)}
	go func() { td.done <- Run(ctx, opts) }()
	select {
	case td.addr = <-ready:
	case err := <-td.done:
		cancel()
		t.Fatalf("daemon did not start: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		t.Fatal("daemon did not start in 10 s")
	}
	scheme := "ws"
	if opts.Config.TLSCert != "" {
		scheme = "wss"
	}
	td.url = scheme + "://" + td.addr + "/acp"
	c, err := control.Dial(ctx, opts.Paths.Socket())
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	td.ctl = c
	t.Cleanup(td.stop)
	return td
}

func (td *testDaemon) stop() {
	if td.cancel == nil {
		return
	}
	td.ctl.Close()
	td.cancel()
	td.cancel = nil
	select {
	case err := <-td.done:
		if err != nil {
			td.t.Errorf("Run returned %v", err)
		}
	case <-time.After(10 * time.Second):
		td.t.Error("daemon did not stop within 10 s")
	}
}

func (td *testDaemon) call(method string, params, result any) {
	td.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := td.ctl.Call(ctx, method, params, result); err != nil {
		td.t.Fatalf("control %s: %v", method, err)
	}
}

// exec is one call as `torii exec` makes it (mcpserver.ConnectMCP, shared session).
func (td *testDaemon) exec(label, name string) *mcp.CallToolResult {
	td.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := mcpserver.ConnectMCP(ctx, td.opts.Paths.MCPSocket(), mcpserver.RelayHelloParams{SessionLabel: label, Shared: true}, &mcp.Implementation{Name: "test"})
	if err != nil {
		td.t.Fatal(err)
	}
	defer s.Close()
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name})
	if err != nil {
		td.t.Fatalf("exec %s: %v", name, err)
	}
	return r
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// otpPairedDevice pairs a fresh device through a one-time secret (no
// human) and returns it with its still-open, authenticated client.
func (td *testDaemon) otpPairedDevice(ctx context.Context, name string) (*linktest.Device, *linktest.Client) {
	td.t.Helper()
	var otp LaunchOTPResult
	td.call("launch.otp", nil, &otp)
	d, err := linktest.NewDevice(name)
	if err != nil {
		td.t.Fatal(err)
	}
	c, err := linktest.PairAndConnect(ctx, td.url, d, linktest.PairOptions{OTP: otp.OTP}, nil)
	if err != nil {
		td.t.Fatalf("otp pair: %v", err)
	}
	td.t.Cleanup(func() { c.Close() })
	return d, c
}

func rpcCode(err error) int {
	var re *wire.Error
	if errors.As(err, &re) {
		return re.Code
	}
	return 0
}

func b64(b []byte) string { return pairing.EncodeB64(b) }
