package cli

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/torii-browser/torii/internal/mcpserver"
	"github.com/torii-browser/torii/internal/version"
)

func runMCP(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "mcp", "mcp [--session-label L]\n\nStdio MCP server for an agent, e.g. `claude mcp add torii -- torii mcp`.\nStarts the daemon in the background if none is running.")
	label := fs.String("session-label", "", "name for this agent session, shown to the person")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "mcp takes no arguments"}
	}
	p, err := paths()
	if err != nil {
		return err
	}
	client, started, err := ensureDaemon(ctx, p)
	if err != nil {
		return err
	}
	defer client.Close()
	if started {
		// stderr is the MCP client's log, not the protocol stream.
		fmt.Fprintf(s.Err, "torii: started the daemon in the background (log: %s)\n", p.LogFile())
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	srv := mcpserver.New(mcpserver.Options{Version: version.Version, SessionLabel: *label})
	in, ok := s.In.(io.ReadCloser)
	if !ok {
		in = io.NopCloser(s.In)
	}
	out, ok := s.Out.(io.WriteCloser)
	if !ok {
		out = nopWriteCloser{s.Out}
	}
	return mcpserver.Serve(ctx, srv, in, out)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
