package cli

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/torii-browser/torii/internal/audit"
)

// runAudit is `torii audit`: the daemon's call records (docs/audit.md),
// newest first, paged over the control method audit.query.
func runAudit(ctx context.Context, s Stdio, args []string) error {
	if len(args) > 0 && args[0] == "verify" {
		return runAuditVerify(ctx, s, args[1:])
	}
	fs := newFlags(s, "audit", "audit [verify] [--since 1h] [--until T] [--tool T] [--session S] [--outcome ok|error] [--code C] [--origin O] [--limit N] [--format table|json|csv] [--out FILE]\n\n"+
		"Browser tool calls the daemon recorded, newest first: time, tool, session, origin, outcome, error code,\n"+
		"duration and approval. Metadata only: never arguments, typed text, page content or results.\n"+
		"A JSON export carries the hash chain's head; `torii audit verify [--file EXPORT]` checks it.\n"+
		"--since and --until take a duration back from now (90s, 15m, 1h, 7d) or an RFC 3339 time.")
	since := fs.String("since", "", "only calls at or after this (duration ago or RFC 3339)")
	until := fs.String("until", "", "only calls before this (duration ago or RFC 3339)")
	tool := fs.String("tool", "", "only this tool")
	session := fs.String("session", "", "only this session label")
	outcome := fs.String("outcome", "", "ok or error")
	code := fs.String("code", "", "only this error code")
	origin := fs.String("origin", "", "only this origin (scheme://host[:port])")
	limit := fs.Int("limit", 100, "at most this many records; 0 = all (the default with --out)")
	format := fs.String("format", "table", "table, json or csv")
	out := fs.String("out", "", "write to FILE (created 0600) instead of standard output")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: "audit takes no arguments (use the flags)"}
	}
	now := time.Now()
	f := audit.Filter{Tool: *tool, Session: *session, Outcome: *outcome, Code: *code, Origin: *origin}
	if f.Since, err = parseWhen(*since, now); err != nil {
		return &UsageError{Msg: "--since: " + err.Error()}
	}
	if f.Until, err = parseWhen(*until, now); err != nil {
		return &UsageError{Msg: "--until: " + err.Error()}
	}
	if *limit < 0 {
		return &UsageError{Msg: "--limit must not be negative"}
	}
	// A screen shows the newest 100; a file is an export, and gets every record unless told.
	limitSet := false
	fs.Visit(func(fl *flag.Flag) { limitSet = limitSet || fl.Name == "limit" })
	if *out != "" && !limitSet {
		*limit = 0
	}
	if err := f.Validate(); err != nil {
		return &UsageError{Msg: err.Error()}
	}
	var w recordWriter
	var dst io.Writer = s.Out
	if *out != "" {
		// Audit records are the person's history: owner-only, like the database.
		file, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			return err
		}
		defer file.Close()
		dst = file
	}
	bw := bufio.NewWriter(dst)
	switch *format {
	case "json":
		w = audit.NewJSONWriter(bw)
	case "csv":
		w = audit.NewCSVWriter(bw)
	case "table":
		w = newTableWriter(bw)
	default:
		return &UsageError{Msg: fmt.Sprintf("--format must be table, json or csv, not %q", *format)}
	}

	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	complete := f == (audit.Filter{}) && *limit == 0
	first := true
	left := *limit
	written := 0
	for {
		page := audit.MaxLimit
		if *limit > 0 {
			page = min(left, audit.MaxLimit)
		}
		f.Limit = page
		var r audit.Page
		if err := c.Call(ctx, "audit.query", f, &r); err != nil {
			return err
		}
		if jw, ok := w.(*audit.JSONWriter); ok && first {
			if r.Chain == nil {
				return fmt.Errorf("the daemon sent no chain head: it predates the audit chain; `torii restart` to run this version")
			}
			// The first page's head bounds every later page (beforeId).
			jw.SetChain(*r.Chain, complete)
		}
		first = false
		for _, rec := range r.Records {
			if err := w.Write(rec); err != nil {
				return err
			}
			written++
		}
		left -= len(r.Records)
		if r.Next == 0 || (*limit > 0 && left <= 0) {
			break
		}
		f.BeforeID = r.Next
	}
	if err := w.Close(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if *out != "" {
		fmt.Fprintf(s.Err, "torii: wrote %s (%d records)\n", *out, written)
	}
	return nil
}

type recordWriter interface {
	Write(audit.Record) error
	Close() error
}

// parseWhen reads "" (none), a duration back from now ("90s", "1h", "7d")
// or an RFC 3339 time.
func parseWhen(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if days, ok := strings.CutSuffix(v, "d"); ok {
		if n, err := strconv.Atoi(days); err == nil && n >= 0 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(v); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("a duration must not be negative")
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is neither a duration (1h, 7d) nor an RFC 3339 time", v)
}

// tableWriter prints records as aligned columns.
type tableWriter struct {
	tw *tabwriter.Writer
	n  int
}

func newTableWriter(w io.Writer) *tableWriter {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTOOL\tSESSION\tORIGIN\tOUTCOME\tCODE\tMS\tAPPROVAL")
	return &tableWriter{tw: tw}
}

func (t *tableWriter) Write(r audit.Record) error {
	t.n++
	_, err := fmt.Fprintf(t.tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", r.Time.Local().Format("2006-01-02 15:04:05"),
		dash(r.Tool), dash(r.Session), dash(r.Origin), dash(r.Outcome), dash(r.Code), r.DurationMs, dash(r.Approval))
	return err
}

func (t *tableWriter) Close() error {
	if t.n == 0 {
		fmt.Fprintln(t.tw, "(no calls recorded that match)")
	}
	return t.tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	// A table cell stays on one line whatever a label holds.
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return ' '
		}
		return r
	}, s)
}
