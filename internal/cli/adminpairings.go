package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"text/tabwriter"
	"time"
)

func (a adminCmd) pairings(ctx context.Context) error {
	raw, err := a.get(ctx, "/admin/pairings")
	if err != nil || raw == nil {
		return err
	}
	var r struct {
		Pairings []struct {
			RequestID, DeviceName, Origin, Code string
			ExpiresAt                           time.Time
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	if len(r.Pairings) == 0 {
		fmt.Fprintln(a.s.Out, "no pending pairing requests")
		return nil
	}
	tw := tabwriter.NewWriter(a.s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tCODE\tBROWSER\tEXPIRES")
	for _, p := range r.Pairings {
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\n", p.RequestID, formatCode(p.Code), p.DeviceName, p.ExpiresAt.Format(time.RFC3339))
	}
	return tw.Flush()
}

func (a adminCmd) decide(ctx context.Context, id string, approve bool) error {
	var r struct {
		Pairing struct{ DeviceID, UserID string }
	}
	path := "/admin/pairings/" + url.PathEscape(id)
	var body any
	if approve {
		path += "/approve"
		body = map[string]string{"user": a.f.user, "code": a.f.code}
	} else {
		path += "/deny"
	}
	if err := a.c.call(ctx, "POST", path, body, &r); err != nil {
		return err
	}
	if approve {
		fmt.Fprintf(a.s.Out, "approved: the browser is device %s of %s\n", r.Pairing.DeviceID, a.f.user)
	} else {
		fmt.Fprintln(a.s.Out, "denied")
	}
	return nil
}

func (a adminCmd) deviceCmd(ctx context.Context, rest []string) error {
	if len(rest) == 0 {
		return &UsageError{Msg: "usage: torii admin device list [--user U] | device revoke ID"}
	}
	switch rest[0] {
	case "list", "ls":
		path := "/admin/devices"
		if a.f.user != "" {
			path += "?user=" + url.QueryEscape(a.f.user)
		}
		raw, err := a.get(ctx, path)
		if err != nil || raw == nil {
			return err
		}
		return printDevices(a.s, raw)
	case "revoke", "rm":
		if len(rest) != 2 {
			return &UsageError{Msg: "usage: torii admin device revoke ID"}
		}
		return a.revoke(ctx, "/admin/devices/"+url.PathEscape(rest[1]), "device "+rest[1]+" revoked")
	}
	return &UsageError{Msg: fmt.Sprintf("unknown device subcommand %q (want list or revoke)", rest[0])}
}

// printDevices prints a {"devices":[…]} reply as a table.
func printDevices(s Stdio, raw json.RawMessage) error {
	var r struct {
		Devices []struct {
			DeviceID, UserID, Name string
			LastSeen               time.Time
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUSER\tNAME\tLAST SEEN")
	for _, d := range r.Devices {
		seen := "never"
		if !d.LastSeen.IsZero() {
			seen = d.LastSeen.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%q\t%s\n", d.DeviceID, d.UserID, d.Name, seen)
	}
	return tw.Flush()
}

func (a adminCmd) auditCmd(ctx context.Context, rest []string) error {
	if len(rest) == 1 && rest[0] == "verify" {
		var r struct {
			OK    bool            `json:"ok"`
			Break json.RawMessage `json:"break"`
		}
		if err := a.c.call(ctx, "GET", "/admin/audit/verify", nil, &r); err != nil {
			return err
		}
		if r.OK {
			fmt.Fprintln(a.s.Out, "audit chain intact up to its newest record")
			return nil
		}
		fmt.Fprintf(a.s.Out, "audit chain BROKEN: %s\n", r.Break)
		return exitError{code: ExitFailure}
	}
	if len(rest) > 0 {
		return &UsageError{Msg: "usage: torii admin audit [--user U] [--after N] [--limit N] | audit verify"}
	}
	q := url.Values{}
	if a.f.user != "" {
		q.Set("user", a.f.user)
	}
	q.Set("after", strconv.FormatInt(a.f.after, 10))
	q.Set("limit", strconv.Itoa(a.f.limit))
	var raw json.RawMessage
	if err := a.c.call(ctx, "GET", "/admin/audit?"+q.Encode(), nil, &raw); err != nil {
		return err
	}
	// Records are printed as JSON lines: they are for tools as much as people.
	var r struct {
		Records []json.RawMessage `json:"records"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return err
	}
	for _, rec := range r.Records {
		fmt.Fprintf(a.s.Out, "%s\n", rec)
	}
	return nil
}
