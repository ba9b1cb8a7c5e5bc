package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// configState mirrors the daemon's ConfigState.
type configState struct {
	File          string   `json:"file"`
	LoadedAt      flexTime `json:"loadedAt"`
	Error         string   `json:"error"`
	RestartNeeded []string `json:"restartNeeded"`
	Changed       bool     `json:"changed"`
	Applied       []string `json:"applied"`
}

func runReload(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "reload", "reload [--json]\n\nMakes the daemon read config.json now (it also notices a change by itself within\na second or two) and prints what it applied. A file with a syntax error, an unknown key\nor an invalid value is not applied: the configuration in force stays, and the error is\nshown here, in `torii status` and in the daemon's log (exit 1).\nlisten, tlsCert, tlsKey, extensionIds, tokenOrigins and audit apply only after\n`torii restart`; every other key applies at once.")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "reload takes no arguments"}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var r configState
	if err := c.Call(ctx, "config.reload", nil, &r); err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(s.Out, r); err != nil {
			return err
		}
	} else {
		printReload(s.Out, r)
	}
	if r.Error != "" {
		return exitError{ExitFailure}
	}
	return nil
}

func printReload(w io.Writer, r configState) {
	switch {
	case r.Error != "":
		fmt.Fprintf(w, "config not applied: %s\n  the configuration in force stays (loaded %s)\n  fix: correct %s, then run `torii reload`\n", r.Error, r.LoadedAt.short(), r.File)
	case len(r.Applied) > 0:
		fmt.Fprintf(w, "config reloaded from %s: applied %s\n", r.File, strings.Join(r.Applied, ", "))
	default:
		fmt.Fprintf(w, "config %s: nothing to apply (no key that applies live changed)\n", r.File)
	}
	if len(r.RestartNeeded) > 0 {
		fmt.Fprintf(w, "changed, applies after `torii restart`: %s\n", strings.Join(r.RestartNeeded, ", "))
	}
}
