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
	fs := newFlags(s, "mcp", "mcp [--session NAME | --session-label L] [--browser NAME] [--config-dir D --state-dir D]\n\nStdio MCP server for an agent, e.g. `claude mcp add torii -- torii mcp`.\n"+
		"Without --session the agent's session is this process's: it ends, and in a browser torii launched its\n"+
		"tabs close, when the process exits. With --session NAME every process with that name is one session:\n"+
		"its tabs stay across processes and daemon restarts until it is idle for broker.sessionIdleSec (900 s).\n"+
		"Relays the agent's MCP to the Torii daemon, which serves the browser tools (listed at once; a call\n"+
		"before the browser connects says so). Starts the daemon in the background if none is running,\n"+
		"and reconnects by itself when the daemon restarts. With several browsers connected, calls go to the one\n"+
		"used most recently (and move to another, with a notice, if it disconnects); --browser names one\n"+
		"(see `torii status`) and calls never go elsewhere.\n\nWith --server URL --token T (or $TORII_SERVER, $TORII_TOKEN) it relays to a team gateway's /mcp instead,\nas the token's user: only that user's browsers are reachable.")
	label := fs.String("session-label", "", "name for this agent session, shown to the person (default: the working directory's name)")
	named := fs.String("session", "", "a named session, shared by every process that names it (one-shot clients such as the MCP Inspector CLI)")
	browser := fs.String("browser", "", "the paired browser (name or device ID, see `torii status`) this agent acts in")
	var remote remoteFlags
	remote.register(fs)
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "mcp takes no arguments"}
	}
	if remote.set() {
		if *label != "" {
			return &UsageError{Msg: "with --server, name the session with --session (the gateway keeps named sessions only)"}
		}
		ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return mcpRemote(ctx, s, &remote, *named, *browser)
	}
	if *named != "" && *label != "" {
		return &UsageError{Msg: "give --session or --session-label, not both"}
	}
	if *named != "" {
		*label = *named
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
	r.named = *named != ""
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
