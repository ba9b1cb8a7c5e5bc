package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"text/tabwriter"
	"time"
)

const adminSynopsis = `admin --server URL --token T SUBCOMMAND

  user add NAME | user list | user rm NAME_OR_ID
  token new --user U [--label L] [--admin] | token list [--user U] | token revoke ID
  pairings                                   pending browser pairing requests, with their codes
  approve ID --user U --code C | deny ID
  device list [--user U] | device revoke ID
  audit [--user U] [--after N] [--limit N] | audit verify

Manages a team gateway (torii serve --team) with an admin token.
--server and --token default to $TORII_SERVER and $TORII_TOKEN.`

type adminFlags struct {
	remote remoteFlags
	user   string
	label  string
	admin  bool
	code   string
	after  int64
	limit  int
	json   bool
}

func runAdmin(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "admin", adminSynopsis)
	var f adminFlags
	f.remote.register(fs)
	fs.StringVar(&f.user, "user", "", "a user's name or ID")
	fs.StringVar(&f.label, "label", "", "what the token is for (token new)")
	fs.BoolVar(&f.admin, "admin", false, "make an admin token (token new)")
	fs.StringVar(&f.code, "code", "", "the 6-digit code the browser shows (approve)")
	fs.Int64Var(&f.after, "after", 0, "records after this sequence number (audit)")
	fs.IntVar(&f.limit, "limit", 100, "at most this many records (audit)")
	fs.BoolVar(&f.json, "json", false, "print the gateway's JSON")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return &UsageError{Msg: "missing subcommand: user, token, pairings, approve, deny, device or audit"}
	}
	c, err := f.remote.client()
	if err != nil {
		return err
	}
	a := adminCmd{c: c, s: s, f: f}
	sub, rest := pos[0], pos[1:]
	switch sub {
	case "user":
		return a.userCmd(ctx, rest)
	case "token":
		return a.tokenCmd(ctx, rest)
	case "pairings":
		return a.noArgs(rest, "pairings", func() error { return a.pairings(ctx) })
	case "approve":
		if len(rest) != 1 || f.user == "" || f.code == "" {
			return &UsageError{Msg: "usage: torii admin approve ID --user NAME --code 123456"}
		}
		return a.decide(ctx, rest[0], true)
	case "deny":
		if len(rest) != 1 {
			return &UsageError{Msg: "usage: torii admin deny ID"}
		}
		return a.decide(ctx, rest[0], false)
	case "device", "devices":
		return a.deviceCmd(ctx, rest)
	case "audit":
		return a.auditCmd(ctx, rest)
	}
	return &UsageError{Msg: fmt.Sprintf("unknown subcommand %q (want user, token, pairings, approve, deny, device or audit)", sub)}
}

type adminCmd struct {
	c *remoteClient
	s Stdio
	f adminFlags
}

func (a adminCmd) noArgs(rest []string, name string, f func() error) error {
	if len(rest) > 0 {
		return &UsageError{Msg: name + " takes no arguments"}
	}
	return f()
}

// get fetches path; with --json it prints the reply and returns nil raw.
func (a adminCmd) get(ctx context.Context, path string) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := a.c.call(ctx, "GET", path, nil, &raw); err != nil {
		return nil, err
	}
	if a.f.json {
		return nil, printJSON(a.s, raw)
	}
	return raw, nil
}

func (a adminCmd) userCmd(ctx context.Context, rest []string) error {
	if len(rest) == 0 {
		return &UsageError{Msg: "usage: torii admin user add NAME | user list | user rm NAME_OR_ID"}
	}
	switch rest[0] {
	case "add":
		if len(rest) != 2 {
			return &UsageError{Msg: "usage: torii admin user add NAME"}
		}
		var u struct{ ID, Name string }
		if err := a.c.call(ctx, "POST", "/admin/users", map[string]string{"name": rest[1]}, &u); err != nil {
			return err
		}
		fmt.Fprintf(a.s.Out, "user %s created (%s)\nGive them a token: torii admin token new --user %s\n", u.Name, u.ID, u.Name)
		return nil
	case "list", "ls":
		raw, err := a.get(ctx, "/admin/users")
		if err != nil || raw == nil {
			return err
		}
		var r struct {
			Users []struct {
				ID, Name  string
				CreatedAt time.Time
			}
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(a.s.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tID\tCREATED")
		for _, u := range r.Users {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Name, u.ID, u.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case "rm", "delete":
		if len(rest) != 2 {
			return &UsageError{Msg: "usage: torii admin user rm NAME_OR_ID"}
		}
		return a.revoke(ctx, "/admin/users/"+url.PathEscape(rest[1]), "user "+rest[1]+" deleted, with its tokens and browsers")
	}
	return &UsageError{Msg: fmt.Sprintf("unknown user subcommand %q (want add, list or rm)", rest[0])}
}

// revoke deletes path and says whether every replica was told.
func (a adminCmd) revoke(ctx context.Context, path, done string) error {
	var r struct{ Published bool }
	if err := a.c.call(ctx, "DELETE", path, nil, &r); err != nil {
		return err
	}
	fmt.Fprintln(a.s.Out, done)
	if !r.Published {
		fmt.Fprintln(a.s.Err, "torii: warning: the gateway could not tell its other replicas at once; live sessions end when they next check")
	}
	return nil
}

func (a adminCmd) tokenCmd(ctx context.Context, rest []string) error {
	if len(rest) == 0 {
		return &UsageError{Msg: "usage: torii admin token new --user U [--label L] [--admin] | token list [--user U] | token revoke ID"}
	}
	switch rest[0] {
	case "new":
		if len(rest) != 1 || a.f.user == "" {
			return &UsageError{Msg: "usage: torii admin token new --user NAME [--label L] [--admin]"}
		}
		var r struct {
			Token   struct{ ID, UserID, Label string }
			Secret  string
			Gateway *struct{ URL, ACP, MCP string }
		}
		body := map[string]any{"user": a.f.user, "label": a.f.label, "admin": a.f.admin}
		if err := a.c.call(ctx, "POST", "/admin/tokens", body, &r); err != nil {
			return err
		}
		kind := "user"
		if a.f.admin {
			kind = "admin"
		}
		fmt.Fprintf(a.s.Err, "torii: %s token %s for %s; the secret below is shown once:\n", kind, r.Token.ID, a.f.user)
		fmt.Fprintln(a.s.Out, r.Secret)
		if !a.f.admin {
			// On standard error, so the secret stays the only thing on standard output.
			server, acp, mcp := a.c.base.String(), "", a.c.base.String()+"/mcp"
			if g := r.Gateway; g != nil && g.URL != "" {
				server, acp, mcp = g.URL, g.ACP, g.MCP
			}
			fmt.Fprintf(a.s.Err, "torii: give it to %s with the gateway's address, %s:\n  agents: %s (HTTP header \"Authorization: Bearer <token>\"), or `torii mcp --server %s --token <token>`\n  browsers: `torii launch --server %s --token <token>`, or pair from the popup",
				a.f.user, server, mcp, server, server)
			if acp != "" {
				fmt.Fprintf(a.s.Err, " at %s", acp)
			}
			fmt.Fprintf(a.s.Err, " and `torii pair --server %s --token <token> --code CODE`\n", server)
		}
		return nil
	case "list", "ls":
		path := "/admin/tokens"
		if a.f.user != "" {
			path += "?user=" + url.QueryEscape(a.f.user)
		}
		raw, err := a.get(ctx, path)
		if err != nil || raw == nil {
			return err
		}
		var r struct {
			Tokens []struct {
				ID, UserID, Label string
				Admin             bool
				CreatedAt         time.Time
			}
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		tw := tabwriter.NewWriter(a.s.Out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tUSER\tADMIN\tLABEL\tCREATED")
		for _, t := range r.Tokens {
			fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%s\n", t.ID, t.UserID, t.Admin, t.Label, t.CreatedAt.Format(time.RFC3339))
		}
		return tw.Flush()
	case "revoke", "rm":
		if len(rest) != 2 {
			return &UsageError{Msg: "usage: torii admin token revoke ID"}
		}
		return a.revoke(ctx, "/admin/tokens/"+url.PathEscape(rest[1]), "token "+rest[1]+" revoked")
	}
	return &UsageError{Msg: fmt.Sprintf("unknown token subcommand %q (want new, list or revoke)", rest[0])}
}
