package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/mcpserver"
	"github.com/torii-browser/torii/internal/version"
)

func runMCP(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "mcp", "mcp [--session-label L]\n\nStdio MCP server for an agent, e.g. `claude mcp add torii -- torii mcp`.\n"+
		"Serves the browser tools of the connected Torii extension (the list follows the extension:\n"+
		"clients are told when tools appear). Starts the daemon in the background if none is running.")
	label := fs.String("session-label", "", "name for this agent session, shown to the person (default: the working directory's name)")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "mcp takes no arguments"}
	}
	if *label == "" {
		*label = defaultSessionLabel()
	}
	p, err := paths()
	if err != nil {
		return err
	}
	client, started, err := ensureDaemon(ctx, p)
	if err != nil {
		return err
	}
	if started {
		// stderr is the MCP client's log, not the protocol stream.
		fmt.Fprintf(s.Err, "torii: started the daemon in the background (log: %s)\n", p.LogFile())
	}
	ctl := &redialer{p: p, c: client}
	defer ctl.Close()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := mcpserver.New(mcpserver.Options{Version: version.Version, SessionLabel: *label, Control: ctl})
	in, ok := s.In.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(s.In)
	}
	out, ok := s.Out.(io.WriteCloser)
	if !ok {
		out = nopWriteCloser{s.Out}
	}
	return srv.Serve(ctx, in, out)
}

// defaultSessionLabel is the working directory's base name (the project an
// agent works in), or "mcp".
func defaultSessionLabel() string {
	wd, err := os.Getwd()
	if err != nil {
		return "mcp"
	}
	b := filepath.Base(wd)
	if b == "/" || b == "." || b == "" {
		return "mcp"
	}
	return b
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// redialer is a control connection that survives a daemon restart: after
// the connection breaks, the next call dials again (starting the daemon if
// none runs). A broken tools.call is not retried — it may have run.
type redialer struct {
	p  config.Paths
	mu sync.Mutex
	c  *control.Client
}

func (r *redialer) get(ctx context.Context) (*control.Client, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c != nil {
		return r.c, nil
	}
	c, _, err := ensureDaemon(ctx, r.p)
	if err != nil {
		return nil, err
	}
	r.c = c
	return c, nil
}

func (r *redialer) drop(c *control.Client) {
	r.mu.Lock()
	if r.c == c {
		r.c = nil
	}
	r.mu.Unlock()
	c.Close()
}

func (r *redialer) Call(ctx context.Context, method string, params, result any) error {
	c, err := r.get(ctx)
	if err != nil {
		return err
	}
	err = c.Call(ctx, method, params, result)
	if !errors.Is(err, control.ErrClosed) {
		return err
	}
	r.drop(c)
	if method == "tools.call" {
		return err
	}
	if c, err = r.get(ctx); err != nil {
		return err
	}
	return c.Call(ctx, method, params, result)
}

func (r *redialer) Close() {
	r.mu.Lock()
	c := r.c
	r.c = nil
	r.mu.Unlock()
	if c != nil {
		c.Close()
	}
}
