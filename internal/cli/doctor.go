package cli

import (
	"context"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/doctor"
)

func runDoctor(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "doctor", "doctor [--json]\n\nChecks files and permissions, config, daemon, port, browser, extension link,\npairing and clock; prints the fix for each failure. Exits 1 if any check FAILs.")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parse(fs, s, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &UsageError{Msg: "doctor takes no arguments"}
	}
	p, err := paths()
	if err != nil {
		return err
	}
	rs := doctor.Run(ctx, doctor.Options{Paths: p, BuiltExtension: extension.Built, Self: selfCommand()})
	if *asJSON {
		if err := doctor.PrintJSON(s.Out, rs); err != nil {
			return err
		}
	} else {
		doctor.Print(s.Out, rs)
	}
	if doctor.Failed(rs) {
		return exitError{ExitFailure}
	}
	return nil
}
