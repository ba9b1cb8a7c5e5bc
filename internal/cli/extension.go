package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/torii-browser/torii/extension"
)

const extensionSynopsis = `extension install DIR | extension path | extension id

  install DIR  write the extension built into this binary to DIR, for
               chrome://extensions → Developer mode → "Load unpacked"
  path         print where ` + "`torii launch`" + ` installs it
  id           print the extension's fixed ID`

func runExtension(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "extension", extensionSynopsis)
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &UsageError{Msg: "missing subcommand: install DIR, path or id"}
	}
	switch pos[0] {
	case "install":
		if len(pos) != 2 {
			return &UsageError{Msg: "usage: torii extension install DIR"}
		}
		dir, err := filepath.Abs(pos[1])
		if err != nil {
			return err
		}
		if err := extension.Install(dir); err != nil {
			return err
		}
		fmt.Fprintln(s.Out, dir)
		fmt.Fprintf(s.Err, "Installed. In Chrome open chrome://extensions, turn on Developer mode, click \"Load unpacked\" and pick %s.\nThen run `torii pair` and compare the code with the one the extension shows.\n", dir)
		return nil
	case "path":
		if len(pos) != 1 {
			return &UsageError{Msg: "extension path takes no arguments"}
		}
		p, err := paths()
		if err != nil {
			return err
		}
		fmt.Fprintln(s.Out, extensionDir(p))
		return nil
	case "id":
		if len(pos) != 1 {
			return &UsageError{Msg: "extension id takes no arguments"}
		}
		fmt.Fprintln(s.Out, extension.ID)
		return nil
	}
	return &UsageError{Msg: fmt.Sprintf("unknown subcommand %q (want install, path or id)", pos[0])}
}
