package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/torii-browser/torii/internal/daemon"
)

func runServers(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "servers", "servers [--json]\n\nLists the MCP servers token clients declare (and those config.json's mcpServers\nnames): whether each is allowed, its tools as agents see them, the pin that\nexposes each, and pins that match nothing, with the fix.")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "servers takes no arguments"}
	}
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var r daemon.GatewayServersResult
	if err := c.Call(ctx, "gateway.servers", nil, &r); err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(s.Out, r)
	}
	if len(r.Servers) == 0 {
		fmt.Fprintln(s.Err, "No declared MCP servers: none is configured (config.json mcpServers) and no token client has declared one since the daemon started. See docs/clients.md.")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tALLOWED\tSESSIONS\tTOOL (as agents see it)\tPINNED BY")
	for _, sv := range r.Servers {
		allowed := "no"
		if sv.Allowed {
			allowed = "yes"
		}
		first := true
		row := func(tool, pin string) {
			if first {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", sv.Name, allowed, sv.Sessions, tool, pin)
				first = false
				return
			}
			fmt.Fprintf(tw, "\t\t\t%s\t%s\n", tool, pin)
		}
		for _, t := range sv.Tools {
			pin := t.Pin
			switch {
			case t.Shadowed:
				pin = "- (shadowed by " + t.Name + " as the server lists it; not exposed)"
			case pin == "":
				pin = "- (not pinned: not exposed)"
			}
			row(t.Name, pin)
		}
		if len(sv.Tools) == 0 {
			switch {
			case !sv.Declared:
				row("(not declared by any client yet)", strings.Join(sv.Pins, ", "))
			case !sv.Allowed:
				row("(declared, not connected: not in mcpServers.allow)", "-")
			default:
				row("(no tools listed)", strings.Join(sv.Pins, ", "))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, sv := range r.Servers {
		for _, w := range sv.Warnings {
			fmt.Fprintln(s.Out, "warning: "+w)
		}
	}
	return nil
}
