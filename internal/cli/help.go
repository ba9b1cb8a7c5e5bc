package cli

import (
	"context"
	"fmt"
	"io"
)

func printUsage(w io.Writer) {
	fmt.Fprint(w, `torii — let AI agents operate your real Chrome, safely and visibly.

usage: torii COMMAND [flags] [args]

commands:
`)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Run `+"`torii COMMAND -h`"+` for a command's flags.
Quick start:  torii launch    then    claude mcp add torii -- torii mcp
From a shell: torii tools    and    torii exec navigate url=https://example.com
`)
}

func runHelp(ctx context.Context, s Stdio, args []string) error {
	if len(args) == 0 {
		printUsage(s.Out)
		return nil
	}
	if len(args) > 1 {
		return &UsageError{Msg: "help takes at most one command name"}
	}
	for _, c := range commands() {
		if c.name == args[0] && c.name != "help" {
			return c.run(ctx, s, []string{"-h"})
		}
	}
	return &UsageError{Msg: fmt.Sprintf("unknown command %q", args[0])}
}
