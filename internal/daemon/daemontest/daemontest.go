// Package daemontest runs a real daemon for tests and benchmarks outside
// package daemon: on 127.0.0.1:0 with a private state directory, a control
// client, a fake extension that pairs through a one-time secret and serves
// the browser-tool leg of the link (browserlinktest), and go-sdk MCP clients
// over /mcp.
package daemontest

import (
	"context"
	"github.com/torii-browser/torii/internal/mcpserver"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/link/linktest"
)

// Daemon is a running daemon.
type Daemon struct {
	Addr    string // host:port
	URL     string // ws://…/acp
	MCPURL  string // http://…/mcp
	Paths   config.Paths
	Control *control.Client
}

// Start runs a daemon until the test ends; mutate may change the options.
func Start(tb testing.TB, mutate func(*daemon.Options)) *Daemon {
	tb.Helper()
	// Unix socket paths must stay under 108 bytes; tb.TempDir can be longer.
	dir, err := os.MkdirTemp("", "torii")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	ready := make(chan string, 1)
	opts := daemon.Options{Paths: config.Paths{ConfigDir: filepath.Join(dir, "c"), StateDir: filepath.Join(dir, "s")},
		Config: cfg, Version: "test", Ready: ready,
		// Tests see their fake extension's catalogue, not the built-in one.
		Catalogue: []*mcp.Tool{}}
	if mutate != nil {
		mutate(&opts)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Run(ctx, opts) }()
	d := &Daemon{Paths: opts.Paths}
	select {
	case d.Addr = <-ready:
	case err := <-done:
		cancel()
		tb.Fatalf("daemon did not start: %v", err)
	case <-time.After(10 * time.Second):
		cancel()
		tb.Fatal("daemon did not start in 10 s")
	}
	d.URL = "ws://" + d.Addr + "/acp"
	d.MCPURL = "http://" + d.Addr + "/mcp"
	if d.Control, err = control.Dial(ctx, opts.Paths.Socket()); err != nil {
		cancel()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		d.Control.Close()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("daemon Run: %v", err)
			}
		case <-time.After(10 * time.Second):
			tb.Error("daemon did not stop within 10 s")
		}
	})
	return d
}

// Call is a control call that must succeed.
func (d *Daemon) Call(tb testing.TB, method string, params, result any) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := d.Control.Call(ctx, method, params, result); err != nil {
		tb.Fatalf("control %s: %v", method, err)
	}
}

// Token creates a bearer token.
func (d *Daemon) Token(tb testing.TB, label string) string {
	var r daemon.TokensCreateResult
	d.Call(tb, "tokens.create", map[string]string{"label": label}, &r)
	return r.Token
}

// Extension pairs a fake extension (one-time secret, no human), speaks ACP
// initialize, and declares its tool server in session/new: decl is the
// mcpServers entry, e.g. {"type":"acp","name":"torii","id":p.ServerID}.
func (d *Daemon) Extension(tb testing.TB, ctx context.Context, p *browserlinktest.Provider, decl map[string]any) *linktest.Client {
	tb.Helper()
	return d.ExtensionNamed(tb, ctx, "bench browser", p, decl)
}

// ExtensionNamed is Extension for a device that asks to be paired as name.
func (d *Daemon) ExtensionNamed(tb testing.TB, ctx context.Context, name string, p *browserlinktest.Provider, decl map[string]any) *linktest.Client {
	tb.Helper()
	var otp daemon.LaunchOTPResult
	d.Call(tb, "launch.otp", nil, &otp)
	dev, err := linktest.NewDevice(name)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := linktest.PairAndConnect(ctx, d.URL, dev, linktest.PairOptions{OTP: otp.OTP}, &linktest.Options{Handler: p.Handle})
	if err != nil {
		tb.Fatalf("pair: %v", err)
	}
	tb.Cleanup(func() { c.Close() })
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "fake-extension", "version": "0"}}, nil); err != nil {
		tb.Fatal(err)
	}
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{decl}}, nil); err != nil {
		tb.Fatal(err)
	}
	return c
}

// WaitTools polls tools.list until n tools are served (the extension's
// plus the daemon's own status tool).
func (d *Daemon) WaitTools(tb testing.TB, n int) daemon.ToolsListResult {
	tb.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r daemon.ToolsListResult
		d.Call(tb, "tools.list", nil, &r)
		if r.ExtensionConnected && len(r.Tools) == n {
			return r
		}
		if time.Now().After(deadline) {
			tb.Fatalf("tools.list never reached %d tools: %+v", n, r)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type headerRT struct {
	h  http.Header
	rt http.RoundTripper
}

func (x headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range x.h {
		r.Header[k] = v
	}
	return x.rt.RoundTrip(r)
}

// Relay connects a go-sdk client to the MCP socket, greeted with hello as
// `torii mcp` (or, with hello.Shared, `torii exec`) greets it.
func (d *Daemon) Relay(tb testing.TB, ctx context.Context, hello mcpserver.RelayHelloParams) *mcp.ClientSession {
	tb.Helper()
	s, err := mcpserver.ConnectMCP(ctx, d.Paths.MCPSocket(), hello, &mcp.Implementation{Name: "test-relay", Version: "0"})
	if err != nil {
		tb.Fatalf("mcp socket: %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Exec is one call as `torii exec` makes it: its own connection, in the
// shared session of label; the connection closes after the call.
func (d *Daemon) Exec(tb testing.TB, label, name string, args any) *mcp.CallToolResult {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := d.Relay(tb, ctx, mcpserver.RelayHelloParams{SessionLabel: label, Shared: true})
	defer s.Close()
	r, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		tb.Fatalf("exec %s: %v", name, err)
	}
	return r
}

// MCP connects a go-sdk client to /mcp with the token (and extra headers).
func (d *Daemon) MCP(tb testing.TB, ctx context.Context, token string, extra http.Header, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	return d.MCPAt(tb, ctx, d.MCPURL, token, extra, opts)
}

// MCPAt is MCP at another endpoint of the daemon's (/mcp with a query, say).
func (d *Daemon) MCPAt(tb testing.TB, ctx context.Context, endpoint, token string, extra http.Header, opts *mcp.ClientOptions) (*mcp.ClientSession, error) {
	h := http.Header{}
	for k, v := range extra {
		h[k] = v
	}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	hc := &http.Client{Transport: headerRT{h, http.DefaultTransport}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "0"}, opts)
	s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1}, nil)
	if err == nil {
		tb.Cleanup(func() { s.Close() })
	}
	return s, err
}
