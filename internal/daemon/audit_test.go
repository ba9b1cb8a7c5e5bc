package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/link/linktest"
)

const (
	sentinelArg    = "S3NT1N3L-typed-secret-7f3a"
	sentinelResult = "S3NT1N3L-page-content-91c2"
)

// SECURITY I-31, I-33: a secret typed through a tool (the fill value), and
// what the page returns, reach neither the audit database's bytes, the
// daemon log at debug level (--verbose), nor an export — through the real
// daemon, the real link and a fake extension.
func TestAuditNeverRecordsArgumentsOrResults(t *testing.T) {
	t.Parallel()
	var logs linktest.LogBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d := daemontest.Start(t, func(o *daemon.Options) { o.Logger = logger })
	ctx := tctx(t)
	p := browserlinktest.New(serverID, []map[string]any{
		{"name": "fill", "description": "Fill a field.", "inputSchema": browserlinktest.Schema(map[string]any{
			"ref": map[string]any{"type": "string"}, "value": map[string]any{"type": "string"}})},
		{"name": "read", "description": "Read the page.", "inputSchema": browserlinktest.Schema(nil), "annotations": map[string]any{"readOnlyHint": true}},
	}, func(_ context.Context, name string, args json.RawMessage) (any, error) {
		if name == "fill" && !strings.Contains(string(args), sentinelArg) {
			return browserlinktest.ErrorResult("invalid_argument", "the value did not arrive", ""), nil
		}
		r := browserlinktest.TextResult("page says " + sentinelResult)
		r["structuredContent"] = map[string]any{"text": sentinelResult}
		m := map[string]any{"origin": "https://shop.example", "approval": "approved"}
		if name == "fill" {
			m["secrets"] = "card on https://shop.example" // a secret's name, never its value (SECURITY I-69)
		}
		r["_meta"] = map[string]any{broker.MetaAudit: m}
		return r, nil
	})
	d.Extension(t, ctx, p, map[string]any{"type": "acp", "name": "torii", "id": serverID})
	d.WaitTools(t, 3) // the two, plus the broker's own status tool

	args := json.RawMessage(`{"ref":"e12","value":"` + sentinelArg + `"}`)
	// Through the MCP socket as `torii exec` calls …
	r := d.Exec(t, "cli-agent", "fill", args)
	if r.IsError {
		t.Fatalf("fill: %+v", r)
	}
	if _, ok := r.Meta[broker.MetaAudit]; ok {
		t.Error("the audit _meta reached the agent")
	}
	// … refused calls too …
	r = d.Exec(t, "cli-agent", "nope", args)
	if !r.IsError {
		t.Fatal("unknown tool succeeded")
	}
	// … and through /mcp.
	s, err := d.MCP(t, ctx, d.Token(t, "http-agent"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "fill", Arguments: map[string]any{"ref": "e12", "value": sentinelArg}})
	if err != nil || res.IsError {
		t.Fatalf("/mcp fill: %v %+v", err, res)
	}
	if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "read"}); err != nil {
		t.Fatal(err)
	}

	var page daemon.AuditQueryResult
	d.Call(t, "audit.query", daemon.AuditQueryParams{}, &page)
	if len(page.Records) != 4 {
		t.Fatalf("want 4 records, got %+v", page.Records)
	}
	byKey := map[string]audit.Record{}
	for _, rec := range page.Records {
		byKey[rec.Session+"/"+rec.Tool] = rec
	}
	if rec := byKey["cli-agent/fill"]; rec.Outcome != "ok" || rec.Origin != "https://shop.example" || rec.Approval != "approved" || rec.Code != "" || rec.Secrets != "card on https://shop.example" {
		t.Errorf("cli fill: %+v", rec)
	}
	if rec := byKey["cli-agent/nope"]; rec.Outcome != "error" || rec.Code != "tool_not_found" || rec.Origin != "" {
		t.Errorf("refused: %+v", rec)
	}
	if rec := byKey["http:http-agent/fill"]; rec.Outcome != "ok" || rec.Origin != "https://shop.example" {
		t.Errorf("/mcp fill: %+v (all: %+v)", rec, page.Records)
	}
	var fails daemon.AuditQueryResult
	d.Call(t, "audit.query", daemon.AuditQueryParams{Outcome: "error"}, &fails)
	if len(fails.Records) != 1 || fails.Records[0].Tool != "nope" {
		t.Errorf("outcome filter: %+v", fails.Records)
	}
	if err := d.Control.Call(ctx, "audit.query", map[string]any{"outcome": "maybe"}, nil); err == nil {
		t.Error("bad outcome accepted")
	}

	// The bytes: the database and its WAL, the export, the log.
	var blob bytes.Buffer
	for _, sfx := range []string{"", "-wal", "-shm"} {
		b, err := os.ReadFile(d.Paths.AuditDB() + sfx)
		if err != nil && sfx == "" {
			t.Fatal(err)
		}
		blob.Write(b)
		if fi, err := os.Stat(d.Paths.AuditDB() + sfx); err == nil && fi.Mode().Perm() != 0o600 {
			t.Errorf("audit.db%s mode %o", sfx, fi.Mode().Perm())
		}
	}
	if !bytes.Contains(blob.Bytes(), []byte("shop.example")) {
		t.Fatal("the audit database holds no records: the byte check would prove nothing")
	}
	// SECURITY I-70: the real daemon wrote one chain that verifies, from
	// the database file and from the daemon's own view.
	rep, err := audit.VerifyFile(ctx, d.Paths.AuditDB(), daemonKeyed(t, d.Paths))
	if err != nil || rep.Records != 4 || rep.Head != page.Chain.Head || rep.Head.Seq != 4 {
		t.Fatalf("verify the real daemon's chain: %+v %v (page chain %+v)", rep, err, page.Chain)
	}
	var tip audit.ChainTip
	d.Call(t, "audit.tip", nil, &tip)
	if tip.Head != rep.Head || tip.Checkpoint.Kind != audit.CheckpointGenesis {
		t.Fatalf("audit.tip %+v, verified %+v", tip, rep)
	}
	var exp bytes.Buffer
	jw, cw := audit.NewJSONWriter(&exp), audit.NewCSVWriter(&exp)
	for _, rec := range page.Records {
		_ = jw.Write(rec)
		_ = cw.Write(rec)
	}
	_ = jw.Close()
	_ = cw.Close()
	if !strings.Contains(logs.String(), "tools/call") {
		t.Fatalf("the debug log shows no tool frames; is it verbose?\n%s", logs.String())
	}
	for where, b := range map[string]string{"audit database": blob.String(), "export": exp.String(), "daemon log": logs.String()} {
		for _, secret := range []string{sentinelArg, sentinelResult, "S3NT1N3L"} {
			if strings.Contains(b, secret) {
				t.Errorf("%s contains %q", where, secret)
			}
		}
	}
}

// What the extension reports in _meta["torii/audit"] on a refusal reaches
// the record too, and never the agent: the literal "blocked" for a page off
// the allowlist (SECURITY I-31/I-32: no host), and the person's "denied".
func TestAuditOriginAndApprovalOfRefusals(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, nil)
	ctx := tctx(t)
	p := browserlinktest.New(serverID, []map[string]any{
		{"name": "read", "inputSchema": browserlinktest.Schema(nil), "annotations": map[string]any{"readOnlyHint": true}},
		{"name": "click", "inputSchema": browserlinktest.Schema(nil)},
	}, func(_ context.Context, name string, _ json.RawMessage) (any, error) {
		if name == "read" {
			r := browserlinktest.ErrorResult("origin_not_allowed", "the page in tab 3 is not on the person's allowlist", "")
			r["_meta"] = map[string]any{broker.MetaAudit: map[string]any{"origin": "blocked"}}
			return r, nil
		}
		r := browserlinktest.ErrorResult("approval_denied", "the person denied click (submit)", "")
		r["_meta"] = map[string]any{broker.MetaAudit: map[string]any{"origin": "https://shop.example", "approval": "denied"}}
		return r, nil
	})
	d.Extension(t, ctx, p, map[string]any{"type": "acp", "name": "torii", "id": serverID})
	d.WaitTools(t, 3)
	for _, name := range []string{"read", "click"} {
		r := d.Exec(t, "cli-agent", name, nil)
		if !r.IsError {
			t.Fatalf("%s: %+v", name, r)
		}
		if _, ok := r.Meta[broker.MetaAudit]; ok {
			t.Errorf("%s: the audit _meta reached the agent", name)
		}
	}
	var page daemon.AuditQueryResult
	d.Call(t, "audit.query", daemon.AuditQueryParams{}, &page)
	byTool := map[string]audit.Record{}
	for _, rec := range page.Records {
		byTool[rec.Tool] = rec
	}
	if rec := byTool["read"]; rec.Code != "origin_not_allowed" || rec.Origin != "blocked" || rec.Approval != "" {
		t.Errorf("blocked read: %+v", rec)
	}
	if rec := byTool["click"]; rec.Code != "approval_denied" || rec.Origin != "https://shop.example" || rec.Approval != "denied" {
		t.Errorf("denied click: %+v", rec)
	}
}
