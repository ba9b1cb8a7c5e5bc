package cli

import (
	"context"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/torii-browser/torii/internal/control"
)

func runMCP(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "mcp", "mcp [--session-label L] [--browser NAME]\n\nStdio MCP server for an agent, e.g. `claude mcp add torii -- torii mcp`.\n"+
		"Relays the agent's MCP to the Torii daemon, which serves the browser tools (listed at once; a call\n"+
		"before the browser connects says so). Starts the daemon in the background if none is running,\n"+
		"and reconnects by itself when the daemon restarts. With several browsers connected, calls go to the one\n"+
		"used most recently (and move to another, with a notice, if it disconnects); --browser names one\n"+
		"(see `torii status`) and calls never go elsewhere.")
	label := fs.String("session-label", "", "name for this agent session, shown to the person (default: the working directory's name)")
	browser := fs.String("browser", "", "the paired browser (name or device ID, see `torii status`) this agent acts in")
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
	// stderr is the MCP client's log, not the protocol stream.
	client, err := ensureDaemonTold(ctx, s, p)
	if err != nil {
		return err
	}
	if *browser != "" {
		if err := checkBrowserName(ctx, client, *browser); err != nil {
			client.Close()
			return err
		}
	}
	client.Close() // the relay speaks MCP on the MCP socket, not the control protocol
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	dial := func(ctx context.Context) (net.Conn, error) {
		c, _, err := ensureDaemon(ctx, p)
		if err != nil {
			return nil, err
		}
		c.Close()
		return control.DialSocket(ctx, p.MCPSocket())
	}
	r := newRelay(*label, dial, s.Out, s.Err)
	r.browser = *browser
	return r.run(ctx, s.In)
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
