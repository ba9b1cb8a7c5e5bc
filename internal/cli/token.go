package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
)

func runToken(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "token", "token new [--label L] | token list [--json] | token revoke ID\n\nBearer tokens for ACP clients that cannot pair (another side panel, a remote gateway).")
	label := fs.String("label", "", "what the token is for (new)")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &UsageError{Msg: "missing subcommand: new, list or revoke"}
	}
	sub, rest := pos[0], pos[1:]
	switch sub {
	case "new":
		if len(rest) > 0 {
			return &UsageError{Msg: "token new takes no arguments (use --label)"}
		}
		return tokenNew(ctx, s, *label)
	case "list":
		if len(rest) > 0 {
			return &UsageError{Msg: "token list takes no arguments"}
		}
		return tokenList(ctx, s, *asJSON)
	case "revoke":
		if len(rest) != 1 || rest[0] == "" {
			return &UsageError{Msg: "usage: torii token revoke ID"}
		}
		return tokenRevoke(ctx, s, rest[0])
	}
	return &UsageError{Msg: fmt.Sprintf("unknown subcommand %q (want new, list or revoke)", sub)}
}

func tokenNew(ctx context.Context, s Stdio, label string) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var r struct {
		ID    string `json:"id"`
		Token string `json:"token"`
	}
	if err := c.Call(ctx, "tokens.create", map[string]string{"label": label}, &r); err != nil {
		return err
	}
	// Only the token on stdout, so `T=$(torii token new)` works.
	fmt.Fprintln(s.Out, r.Token)
	fmt.Fprintf(s.Err, "torii: token %s created. It is shown only this once; store it now. Revoke with `torii token revoke %s`.\n", r.ID, r.ID)
	return nil
}

func tokenList(ctx context.Context, s Stdio, asJSON bool) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var r struct {
		Tokens []tokenInfo `json:"tokens"`
	}
	if err := c.Call(ctx, "tokens.list", nil, &r); err != nil {
		return err
	}
	if asJSON {
		if r.Tokens == nil {
			r.Tokens = []tokenInfo{}
		}
		return writeJSON(s.Out, r)
	}
	if len(r.Tokens) == 0 {
		fmt.Fprintln(s.Err, "No tokens. Create one with `torii token new --label NAME`.")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLABEL\tCREATED")
	for _, t := range r.Tokens {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.ID, t.Label, t.CreatedAt.short())
	}
	return tw.Flush()
}

func tokenRevoke(ctx context.Context, s Stdio, id string) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Call(ctx, "tokens.revoke", map[string]string{"id": id}, nil); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Revoked token %s.\n", id)
	return nil
}
