package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/torii-browser/torii/internal/control"
)

const pairSynopsis = `pair | pair list [--json] | pair approve ID_OR_CODE | pair deny ID_OR_CODE
       pair --server URL [--token T] --code 123456

  (no subcommand)  wait for a browser's pairing request, show its code, ask y/N
  list             show pending requests
  approve, deny    decide one request by its id or its 6-digit code ("123456" or "123 456")
  --server         approve, as your own user, the browser showing --code on a team gateway`

// pairWait is how long interactive `torii pair` waits for a request.
const pairWait = 2 * time.Minute

// NoRequestError: nothing pending matches what the person typed.
type NoRequestError struct {
	Want    string
	Pending []pendingRequest
}

func (e *NoRequestError) Error() string {
	if len(e.Pending) == 0 {
		return fmt.Sprintf("no pending pairing request matches %q (none is pending)\n  fix: start pairing from the extension popup, then run `torii pair`", e.Want)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "no pending pairing request matches %q; pending:", e.Want)
	for _, r := range e.Pending {
		fmt.Fprintf(&b, "\n  %s  code %s  %q", r.RequestID, formatCode(r.Code), r.DeviceName)
	}
	return b.String()
}

func runPair(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "pair", pairSynopsis)
	asJSON := fs.Bool("json", false, "print JSON (pair list)")
	var remote remoteFlags
	remote.register(fs)
	code := fs.String("code", "", "the 6-digit code the browser shows (with --server)")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if remote.set() {
		if len(pos) > 0 {
			return &UsageError{Msg: "with --server, pair takes no subcommand: torii pair --server URL --code 123456"}
		}
		return pairRemote(ctx, s, &remote, *code)
	}
	if *code != "" {
		return &UsageError{Msg: "--code is for a team gateway (with --server); here use `torii pair approve CODE`"}
	}
	if len(pos) == 0 {
		return pairInteractive(ctx, s)
	}
	sub, rest := pos[0], pos[1:]
	switch sub {
	case "list":
		if len(rest) > 0 {
			return &UsageError{Msg: "pair list takes no arguments"}
		}
		return pairList(ctx, s, *asJSON)
	case "approve", "deny":
		if len(rest) == 0 {
			return &UsageError{Msg: "pair " + sub + " needs a request id or a 6-digit code"}
		}
		// "123 456" may arrive as two arguments.
		return pairDecideArg(ctx, s, strings.Join(rest, " "), sub == "approve")
	}
	return &UsageError{Msg: fmt.Sprintf("unknown subcommand %q (want list, approve or deny)", sub)}
}

func pending(ctx context.Context, c *control.Client) ([]pendingRequest, error) {
	var r pendingResult
	if err := c.Call(ctx, "pair.pending", nil, &r); err != nil {
		return nil, err
	}
	return r.Requests, nil
}

func pairList(ctx context.Context, s Stdio, asJSON bool) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	reqs, err := pending(ctx, c)
	if err != nil {
		return err
	}
	if asJSON {
		if reqs == nil {
			reqs = []pendingRequest{}
		}
		return writeJSON(s.Out, map[string]any{"requests": reqs})
	}
	if len(reqs) == 0 {
		fmt.Fprintln(s.Err, "No pending pairing requests.")
		return nil
	}
	tw := tabwriter.NewWriter(s.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REQUEST ID\tCODE\tDEVICE\tORIGIN\tSINCE")
	for _, r := range reqs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", r.RequestID, formatCode(r.Code), r.DeviceName, r.Origin, r.CreatedAt.short())
	}
	return tw.Flush()
}

// matchRequest finds the request named by an id or a code (spaces ignored).
func matchRequest(reqs []pendingRequest, want string) (pendingRequest, error) {
	w := strings.ReplaceAll(strings.TrimSpace(want), " ", "")
	var hits []pendingRequest
	for _, r := range reqs {
		if r.RequestID == w || (len(w) == 6 && r.Code == w) {
			hits = append(hits, r)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], nil
	case 0:
		return pendingRequest{}, &NoRequestError{Want: want, Pending: reqs}
	}
	return pendingRequest{}, fmt.Errorf("code %s matches %d pending requests; approve by request id instead (see `torii pair list`)", formatCode(w), len(hits))
}

func isCodeOrID(s string) bool {
	w := strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	return w != "" && !strings.ContainsAny(w, "\t\n/")
}

func pairDecideArg(ctx context.Context, s Stdio, want string, approve bool) error {
	if !isCodeOrID(want) {
		return &UsageError{Msg: fmt.Sprintf("%q is not a request id or a 6-digit code", want)}
	}
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	reqs, err := pending(ctx, c)
	if err != nil {
		return err
	}
	r, err := matchRequest(reqs, want)
	if err != nil {
		return err
	}
	return decide(ctx, s, c, r, approve)
}

func decide(ctx context.Context, s Stdio, c *control.Client, r pendingRequest, approve bool) error {
	var res struct {
		DeviceID string `json:"deviceId"`
	}
	if err := c.Call(ctx, "pair.decide", map[string]any{"requestId": r.RequestID, "approve": approve}, &res); err != nil {
		return err
	}
	if approve {
		fmt.Fprintf(s.Out, "Paired %q as device %s.\n", r.DeviceName, res.DeviceID)
	} else {
		fmt.Fprintf(s.Out, "Denied %q.\n", r.DeviceName)
	}
	return nil
}

func pairInteractive(ctx context.Context, s Stdio) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	fmt.Fprintln(s.Err, "Waiting for a pairing request (press Pair in the Torii extension popup)…")
	deadline := time.Now().Add(pairWait)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		reqs, err := pending(ctx, c)
		if err != nil {
			return err
		}
		if len(reqs) > 0 {
			r := reqs[0]
			fmt.Fprintf(s.Out, "Device %q (%s) wants to pair.\nCode: %s\nDoes the browser show the same code? Approve? [y/N] ", r.DeviceName, r.Origin, formatCode(r.Code))
			line, _ := bufio.NewReader(s.In).ReadString('\n')
			ans := strings.ToLower(strings.TrimSpace(line))
			// Anything but an explicit yes denies: approving the wrong
			// device is the one mistake that matters.
			return decide(ctx, s, c, r, ans == "y" || ans == "yes")
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no pairing request arrived within %s\n  fix: open the Torii extension popup, press Pair, then run `torii pair` again", pairWait)
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
