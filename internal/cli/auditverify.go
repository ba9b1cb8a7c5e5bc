package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	"github.com/torii-browser/torii/internal/audit"
)

// runAuditVerify is `torii audit verify`: the hash chain of the audit
// database (read directly, the daemon running or not), or of a saved JSON
// export with --file (docs/audit.md, "The chain").
// SECURITY I-70: a chain that does not verify exits 1 naming the first
// broken link and what to do. SECURITY I-74: so does a checkpoint or head
// the daemon's key did not sign, or records missing before the first kept.
func runAuditVerify(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "audit verify", "audit verify [--file EXPORT] [--db FILE] [--json]\n\n"+
		"Checks the audit's hash chain: every record's hash, the links between records, that none is\n"+
		"missing after the checkpoint the kept chain starts from, and that the daemon's key signed\n"+
		"that checkpoint. Without --file it reads the audit database and checks it still holds the head\n"+
		"the daemon signed (audit.head) and, when the daemon runs, its newest record. With\n"+
		"--file it checks a JSON export (`torii audit --format json --limit 0 --out FILE`) on its own.\n"+
		"Exit 0 when the chain verifies, 1 with the first broken link when it does not.")
	file := fs.String("file", "", "verify this JSON export instead of the database")
	dbPath := fs.String("db", "", "verify this database file (default: the state directory's audit.db)")
	asJSON := fs.Bool("json", false, "print the result as JSON")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: "audit verify takes no arguments (use --file or --db)"}
	}
	if *file != "" && *dbPath != "" {
		return &UsageError{Msg: "--file and --db are exclusive"}
	}
	// A short-lived walk over up to millions of rows: collect less often.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	var rep audit.Report
	source := *file
	start := time.Now()
	if *file != "" {
		f, err := os.Open(*file)
		if err != nil {
			return fmt.Errorf("open the export: %w", err)
		}
		defer f.Close()
		rep, err = audit.VerifyExport(f)
		if err != nil {
			return verifyFailed(s, *asJSON, source, err)
		}
	} else {
		p, err := paths()
		if err != nil {
			return err
		}
		// SECURITY I-74: retention checkpoints are checked against the
		// daemon's key, and the database against the head it signed (not a
		// copy named with --db: it may be older than the head).
		head := p.AuditHead()
		source = *dbPath
		if source == "" {
			source = p.AuditDB()
		} else {
			head = ""
		}
		o, err := audit.DaemonVerifyOptions(p.DaemonKey(), head)
		if err != nil {
			return err
		}
		rep, err = audit.VerifyFile(ctx, source, o)
		if err != nil {
			return verifyFailed(s, *asJSON, source, err)
		}
		if *dbPath == "" {
			if err := compareDaemonHead(ctx, source, rep); err != nil {
				return verifyFailed(s, *asJSON, source, err)
			}
		}
	}
	if *asJSON {
		return writeJSON(s.Out, map[string]any{"ok": true, "source": source, "report": rep, "ms": time.Since(start).Milliseconds()})
	}
	fmt.Fprintln(s.Out, rep.Describe(source))
	return nil
}

// compareDaemonHead: rows deleted from the end of the database leave a
// chain that verifies; the running daemon still knows its newest record.
func compareDaemonHead(ctx context.Context, path string, rep audit.Report) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, _, err := dial(ctx)
	if err != nil {
		return nil // not running: the file is all there is to check
	}
	defer c.Close()
	var tip audit.ChainTip
	if err := c.Call(ctx, "audit.tip", nil, &tip); err != nil {
		return nil // an older daemon, or one without its audit database
	}
	if tip.Head.Seq > rep.Head.Seq {
		// The daemon may have written more since the walk's snapshot: then
		// the database holds its newest record now.
		if h, ok, err := audit.HashInFile(ctx, path, tip.Head.Seq); err == nil && ok && h == tip.Head.Hash {
			return nil
		}
	}
	switch {
	case tip.Head.Seq > rep.Head.Seq:
		return &audit.ChainError{Seq: rep.Head.Seq + 1, Problem: audit.ProblemMissing,
			Detail: fmt.Sprintf("the daemon wrote records up to %d but the database ends at %d: records were deleted from its end", tip.Head.Seq, rep.Head.Seq)}
	case tip.Head.Seq == rep.Head.Seq && tip.Head.Hash != rep.Head.Hash:
		return &audit.ChainError{Seq: rep.Head.Seq, Problem: audit.ProblemHeadMismatch,
			Detail: "the database's newest record is not the one the daemon wrote: the chain was rewritten"}
	}
	return nil
}

func verifyFailed(s Stdio, asJSON bool, source string, err error) error {
	var ce *audit.ChainError
	if !errors.As(err, &ce) {
		return err
	}
	if asJSON {
		_ = writeJSON(s.Out, map[string]any{"ok": false, "source": source, "seq": ce.Seq, "problem": ce.Problem, "detail": ce.Detail, "next": ce.Next()})
	}
	return fmt.Errorf("%s: %w", source, ce)
}
