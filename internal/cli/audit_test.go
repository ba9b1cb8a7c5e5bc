package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/mcpserver"
)

// `torii audit` end to end: the real binary, a real daemon with a fake
// extension; calls made with `torii exec` are listed, filtered and exported.
func TestAuditCommand(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	e.d.Extension(t, ctx, e.p, map[string]any{"type": "acp", "name": "torii", "id": fakeServerID})
	deadline := time.Now().Add(10 * time.Second)
	for {
		var r daemon.ToolsListResult
		e.d.Call(t, "tools.list", nil, &r)
		if r.ExtensionConnected && slices.ContainsFunc(r.Tools, func(x *mcp.Tool) bool { return x.Name == "fail" }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no tools")
		}
		time.Sleep(10 * time.Millisecond) // tools.list offers no event: polled, bounded
	}
	const secret = "S3NT1N3L-cli-typed-value"
	if r := e.run("", "exec", "--session-label", "alice", "echo", "text="+secret); r.code != 0 {
		t.Fatalf("exec echo: %+v", r)
	}
	if r := e.run("", "exec", "--session-label", "bob", "fail"); r.code == 0 {
		t.Fatalf("exec fail succeeded: %+v", r)
	}
	if r := e.run("", "exec", "--session-label", "bob", "echo", "text=x"); r.code != 0 {
		t.Fatalf("exec echo: %+v", r)
	}

	// Table (default), newest first.
	r := e.run("", "audit")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if r.code != 0 || len(lines) != 4 || !strings.HasPrefix(lines[0], "TIME") ||
		!strings.Contains(lines[1], "bob") || !strings.Contains(lines[2], "not_found") || !strings.Contains(lines[3], "alice") {
		t.Fatalf("audit table: %+v", r)
	}
	// JSON, filtered.
	r = e.run("", "audit", "--format", "json", "--session", "bob", "--since", "1h")
	var recs []audit.Record
	if r.code != 0 || exportRecords(r.stdout, &recs) != nil || len(recs) != 2 || recs[0].Tool != "echo" || recs[1].Code != "not_found" {
		t.Fatalf("audit json: %+v", r)
	}
	r = e.run("", "audit", "--format", "json", "--outcome", "error")
	if exportRecords(r.stdout, &recs) != nil || len(recs) != 1 || recs[0].Tool != "fail" || recs[0].Outcome != "error" {
		t.Fatalf("--outcome error: %+v", r)
	}
	r = e.run("", "audit", "--format", "json", "--code", "not_found", "--tool", "fail")
	if exportRecords(r.stdout, &recs) != nil || len(recs) != 1 {
		t.Fatalf("--code --tool: %+v", r)
	}
	r = e.run("", "audit", "--format", "json", "--limit", "1")
	if exportRecords(r.stdout, &recs) != nil || len(recs) != 1 || recs[0].Session != "bob" {
		t.Fatalf("--limit 1: %+v", r)
	}
	r = e.run("", "audit", "--format", "json", "--until", "1h")
	if exportRecords(r.stdout, &recs) != nil || len(recs) != 0 {
		t.Fatalf("--until 1h ago: %+v", r)
	}
	// CSV to a file, owner-only.
	out := filepath.Join(t.TempDir(), "audit.csv")
	r = e.run("", "audit", "--format", "csv", "--limit", "0", "--out", out)
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("--out: %+v", r)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("export file: %v %v", fi, err)
	}
	b, _ := os.ReadFile(out)
	rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(rows) != 4 || len(rows[1][10]) != 64 || strings.Join(rows[0], ",") != strings.Join(audit.CSVHeader, ",") || rows[3][3] != "alice" || rows[3][5] != "ok" {
		t.Fatalf("csv: %v %q", err, b)
	}
	if strings.Contains(string(b), secret) {
		t.Fatal("the export holds the typed value")
	}

	// SECURITY I-70: the chain the real daemon wrote verifies, and so does a
	// saved export, after more calls too; an export edited by one byte, or
	// cut short, does not (exit 1, the first broken link, what to do).
	if r := e.run("", "audit", "verify"); r.code != 0 || !strings.Contains(r.stdout, "chain ok: 3 record(s) verified (1 to 3)") {
		t.Fatalf("audit verify: %+v", r)
	}
	saved := filepath.Join(t.TempDir(), "audit.json")
	if r := e.run("", "audit", "--format", "json", "--limit", "0", "--out", saved); r.code != 0 {
		t.Fatalf("export: %+v", r)
	}
	if r := e.run("", "exec", "--session-label", "carol", "echo", "text=later"); r.code != 0 {
		t.Fatalf("exec echo: %+v", r)
	}
	if r := e.run("", "audit", "verify", "--file", saved); r.code != 0 || !strings.Contains(r.stdout, "chain ok: 3 record(s) verified (1 to 3), head 3") {
		t.Fatalf("verify the saved export after more calls: %+v", r)
	}
	if r := e.run("", "audit", "verify", "--json"); r.code != 0 || !strings.Contains(r.stdout, `"records": 4`) {
		t.Fatalf("verify --json after more calls: %+v", r)
	}
	good, _ := os.ReadFile(saved)
	edited := filepath.Join(t.TempDir(), "edited.json")
	_ = os.WriteFile(edited, []byte(strings.Replace(string(good), `"session":"alice"`, `"session":"alicf"`, 1)), 0o600)
	if r := e.run("", "audit", "verify", "--file", edited); r.code != 1 || !strings.Contains(r.stderr, "audit chain broken at record 1 (altered)") || !strings.Contains(r.stderr, "keep the file as evidence") {
		t.Fatalf("verify an edited export: %+v", r)
	}
	_ = os.WriteFile(edited, good[:len(good)-40], 0o600)
	if r := e.run("", "audit", "verify", "--file", edited); r.code != 1 || !strings.Contains(r.stderr, "(truncated)") || !strings.Contains(r.stderr, "export again") {
		t.Fatalf("verify a truncated export: %+v", r)
	}
	if r := e.run("", "audit", "verify", "--file", filepath.Join(t.TempDir(), "none.json")); r.code != 1 {
		t.Fatalf("verify a missing file: %+v", r)
	}

	for _, args := range [][]string{
		{"audit", "verify", "extra"},
		{"audit", "verify", "--file", "a", "--db", "b"},
		{"audit", "--format", "xml"},
		{"audit", "--since", "yesterday"},
		{"audit", "--outcome", "maybe"},
		{"audit", "--limit", "-1"},
		{"audit", "extra"},
	} {
		if r := e.run("", args...); r.code != 2 {
			t.Errorf("torii %v: exit %d (%q), want 2", args, r.code, r.stderr)
		}
	}
}

// exportRecords reads the records of a JSON export.
func exportRecords(s string, recs *[]audit.Record) error {
	var x struct {
		Format  string         `json:"format"`
		Records []audit.Record `json:"records"`
	}
	if err := json.Unmarshal([]byte(s), &x); err != nil {
		return err
	}
	if x.Format != audit.ExportFormat {
		return fmt.Errorf("format %q", x.Format)
	}
	*recs = x.Records
	return nil
}

func TestParseWhen(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 8, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"":                     {},
		"90s":                  now.Add(-90 * time.Second),
		"1h":                   now.Add(-time.Hour),
		"7d":                   now.Add(-7 * 24 * time.Hour),
		"2026-07-01T00:00:00Z": time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC),
	} {
		if got, err := parseWhen(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	for _, bad := range []string{"-1h", "soon", "7x"} {
		if _, err := parseWhen(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// `--out` is an export: every record unless --limit says otherwise; the
// screen keeps the newest 100.
func TestAuditOutExportsEverything(t *testing.T) {
	t.Parallel()
	e := newToolsEnv(t)
	ctx := tctx(t)
	e.connect(ctx)
	s := e.d.Relay(t, ctx, mcpserver.RelayHelloParams{SessionLabel: "many", Shared: true})
	defer s.Close()
	const n = 105
	for i := range n {
		if _, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": fmt.Sprint(i)}}); err != nil {
			t.Fatal(err)
		}
	}
	// Records are written in batches, with no event over the control socket: polled, bounded.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var p audit.Page
		e.d.Call(t, "audit.query", audit.Filter{Limit: audit.MaxLimit}, &p)
		if len(p.Records) >= n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d records audited, want %d", len(p.Records), n)
		}
	}
	rows := func(path string) int {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return len(recs) - 1
	}
	all := filepath.Join(t.TempDir(), "all.csv")
	if r := e.run("", "audit", "--format", "csv", "--out", all); r.code != 0 || !strings.Contains(r.stderr, fmt.Sprintf("(%d records)", n)) {
		t.Fatalf("--out: %+v", r)
	}
	if got := rows(all); got != n {
		t.Fatalf("--out exported %d records, want all %d", got, n)
	}
	some := filepath.Join(t.TempDir(), "some.csv")
	if r := e.run("", "audit", "--format", "csv", "--out", some, "--limit", "7"); r.code != 0 {
		t.Fatalf("--out --limit 7: %+v", r)
	}
	if got := rows(some); got != 7 {
		t.Fatalf("--out --limit 7 exported %d records", got)
	}
	if r := e.run("", "audit", "--format", "csv"); r.code != 0 || strings.Count(strings.TrimSpace(r.stdout), "\n") != 100 {
		t.Fatalf("audit to the screen: %d lines, want a header and 100", strings.Count(strings.TrimSpace(r.stdout), "\n")+1)
	}
}
