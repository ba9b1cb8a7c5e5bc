package cli

import (
	"context"
	"fmt"

	"github.com/torii-browser/torii/internal/version"
)

func runVersion(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "version", "version")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "version takes no arguments"}
	}
	fmt.Fprintf(s.Out, "torii %s\ngo: %s\n", version.Version, version.GoVersion())
	if c := version.CommitID(); c != "" {
		fmt.Fprintf(s.Out, "commit: %s\n", c)
	}
	return nil
}
