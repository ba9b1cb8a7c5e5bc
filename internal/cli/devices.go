package cli

import (
	"context"
	"fmt"
	"text/tabwriter"
)

func runDevices(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "devices", "devices [list] [--json] | devices revoke DEVICE_ID | devices rename DEVICE NEW_NAME\n\n"+
		"Revoking closes the device's live connection at once; it must pair again. Renaming (DEVICE is its ID\n"+
		"or current name) changes the name shown here, in `torii status` and in failover notices, and the\n"+
		"name `torii mcp --browser` takes; no two devices share a name.")
	asJSON := fs.Bool("json", false, "print JSON (list)")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	sub := "list"
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	switch sub {
	case "list":
		if len(pos) > 0 {
			return &UsageError{Msg: "devices list takes no arguments"}
		}
		return devicesList(ctx, s, *asJSON)
	case "revoke":
		if len(pos) != 1 || pos[0] == "" {
			return &UsageError{Msg: "usage: torii devices revoke DEVICE_ID"}
		}
		return devicesRevoke(ctx, s, pos[0])
	case "rename":
		if len(pos) != 2 || pos[0] == "" || pos[1] == "" {
			return &UsageError{Msg: "usage: torii devices rename DEVICE NEW_NAME   (DEVICE: its ID or current name; quote names with spaces)"}
		}
		return devicesRename(ctx, s, pos[0], pos[1])
	}
	return &UsageError{Msg: fmt.Sprintf("unknown subcommand %q (want list, revoke or rename)", sub)}
}

func devicesList(ctx context.Context, s Stdio, asJSON bool) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var r devicesResult
	if err := c.Call(ctx, "devices.list", nil, &r); err != nil {
		return err
	}
	if asJSON {
		if r.Devices == nil {
			r.Devices = []device{}
		}
		return writeJSON(s.Out, r)
	}
	if len(r.Devices) == 0 {
		fmt.Fprintln(s.Err, "No paired devices. Pair one with `torii launch`, or from the extension popup and `torii pair`.")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "DEVICE ID\tNAME\tORIGIN\tPAIRED\tLAST SEEN\tCONNECTED")
	for _, d := range r.Devices {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\n", d.DeviceID, d.Name, d.Origin, d.CreatedAt.short(), d.LastSeen.short(), d.Connected)
	}
	return tw.Flush()
}

func devicesRevoke(ctx context.Context, s Stdio, id string) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var r struct {
		Closed        int `json:"closed"`
		AgentSessions int `json:"agentSessions"`
	}
	if err := c.Call(ctx, "devices.revoke", map[string]string{"deviceId": id}, &r); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Revoked %s (%d live connection(s) closed, %d side-panel agent(s) stopped).\n", id, r.Closed, r.AgentSessions)
	fmt.Fprintf(s.Out, "To use that browser again, pair it anew: for a managed browser `%s`; in your own Chrome press Pair in the Torii popup, then run `%s pair`.\n", repairFix(false), selfCommand())
	return nil
}

func devicesRename(ctx context.Context, s Stdio, dev, name string) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	var r device
	if err := c.Call(ctx, "devices.rename", map[string]string{"device": dev, "name": name}, &r); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Renamed %s to %q.\n", r.DeviceID, r.Name)
	return nil
}
