// Package mcpserver is the MCP server behind `torii mcp`: what an agent
// (Claude Code, Cursor, Codex, …) talks to over stdio. It is one session of
// the shared daemon; the browser tools it will expose run in the extension.
package mcpserver

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Name is the server name reported in MCP initialize.
const Name = "torii"

// Options configure one MCP session.
type Options struct {
	Version      string
	SessionLabel string // shown to the person to tell agent sessions apart
	Logger       *slog.Logger
}

// New builds the MCP server. The tools capability is declared explicitly:
// the SDK only infers it once a tool is added, and without it clients skip
// tools/list (and the SDK would refuse it) while the catalogue is empty.
func New(o Options) *mcp.Server {
	title := "Torii browser"
	if o.SessionLabel != "" {
		title += " (" + o.SessionLabel + ")"
	}
	return mcp.NewServer(&mcp.Implementation{Name: Name, Title: title, Version: o.Version}, &mcp.ServerOptions{
		Logger:       o.Logger,
		Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}},
		Instructions: "Torii drives the person's own Chrome through the Torii extension. " +
			"Run `torii status` or `torii doctor` if the browser is not connected.",
	})
}

// Serve runs the server over in/out until the client closes its end (EOF on
// in) or ctx ends. A clean client hang-up is not an error.
func Serve(ctx context.Context, s *mcp.Server, in io.ReadCloser, out io.WriteCloser) error {
	d := newDrain()
	err := s.Run(ctx, &mcp.IOTransport{Reader: d.reader(in), Writer: d.writer(out)})
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, context.Canceled) || errors.Is(err, mcp.ErrConnectionClosed) {
		return nil
	}
	return err
}
