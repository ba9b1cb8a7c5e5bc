package daemon_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/link/linktest"
)

// SECURITY I-70: a browser keeps the chain links it was shown; when it
// reconnects after audit.db was altered behind the daemon's back (an edit
// whose hashes were recomputed would verify on its own), the daemon says
// so in `status`, its log and the answer — through the real daemon and
// the real link.
func TestAuditCrossCheckOnReconnect(t *testing.T) {
	t.Parallel()
	var logs linktest.LogBuffer
	d := daemontest.Start(t, func(o *daemon.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	ctx := tctx(t)
	p := browserlinktest.New(serverID, []map[string]any{
		{"name": "read", "description": "Read.", "inputSchema": browserlinktest.Schema(nil), "annotations": map[string]any{"readOnlyHint": true}},
	}, func(context.Context, string, json.RawMessage) (any, error) {
		return browserlinktest.TextResult("ok"), nil
	})
	var otp daemon.LaunchOTPResult
	d.Call(t, "launch.otp", nil, &otp)
	dev, err := linktest.NewDevice("witness browser")
	if err != nil {
		t.Fatal(err)
	}
	c, err := linktest.PairAndConnect(ctx, d.URL, dev, linktest.PairOptions{OTP: otp.OTP}, &linktest.Options{Handler: p.Handle})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		d.Exec(t, "agent", "nope", nil)
	}
	// The extension learns the head (no witnesses yet: nothing to check).
	var first daemon.AuditWitnessResult
	if err := c.Call(ctx, daemon.AuditWitness, daemon.AuditWitnessParams{}, &first); err != nil {
		t.Fatal(err)
	}
	if first.Head.Seq != 3 || len(first.Head.Hash) != 64 || first.Checked != 0 {
		t.Fatalf("head %+v", first)
	}
	// A reconnect with an intact store: the check passes.
	var ok daemon.AuditWitnessResult
	if err := c.Call(ctx, daemon.AuditWitness, daemon.AuditWitnessParams{Witnesses: []audit.Link{first.Head}}, &ok); err != nil || ok.Mismatch != "" || ok.Checked != 1 {
		t.Fatalf("intact: %+v %v", ok, err)
	}
	c.Close()

	// Record 2 is edited and every hash from it recomputed: the chain alone verifies.
	rewrite(t, d.Paths.AuditDB(), 2)
	if _, err := audit.VerifyFile(ctx, d.Paths.AuditDB(), audit.VerifyOptions{}); err != nil {
		t.Fatalf("the rewritten chain should verify on its own: %v", err)
	}
	c2, err := linktest.Connect(ctx, d.URL, dev, &linktest.Options{Handler: p.Handle})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	var bad daemon.AuditWitnessResult
	if err := c2.Call(ctx, daemon.AuditWitness, daemon.AuditWitnessParams{Witnesses: []audit.Link{first.Head}}, &bad); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(bad.Mismatch, "record 3 in the store is not the one the browser saw") {
		t.Fatalf("mismatch: %+v", bad)
	}
	var st daemon.StatusResult
	d.Call(t, "status", nil, &st)
	if st.Audit == nil || st.Audit.CrossCheck == nil || st.Audit.CrossCheck.OK || st.Audit.CrossCheck.Seq != 3 || st.Audit.CrossCheck.DeviceName != "witness browser" {
		t.Fatalf("status audit: %+v", st.Audit)
	}
	if err := logs.Wait("the store disagrees with what a browser saw", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "torii audit verify") {
		t.Fatal("the log names no next step")
	}
	// A witness past the store's end: records deleted from the end.
	var gone daemon.AuditWitnessResult
	if err := c2.Call(ctx, daemon.AuditWitness, daemon.AuditWitnessParams{Witnesses: []audit.Link{{Seq: 9, Hash: strings.Repeat("a", 64)}}}, &gone); err != nil || !strings.Contains(gone.Mismatch, "the store ends at 3") {
		t.Fatalf("past the end: %+v %v", gone, err)
	}
	// Malformed witnesses are refused, typed.
	for _, w := range []any{
		map[string]any{"witnesses": []any{map[string]any{"seq": 1, "hash": "xyz"}}},
		map[string]any{"witnesses": "nope"},
		map[string]any{"witnesses": make([]audit.Link, 65)},
	} {
		if err := c2.Call(ctx, daemon.AuditWitness, w, nil); err == nil {
			t.Errorf("witnesses %v accepted", w)
		}
	}
}

// rewrite edits record from in audit.db and recomputes its hash and every
// later one, as someone covering their tracks would.
func rewrite(t *testing.T, path string, from int64) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, ts, tool, session, origin, outcome, code, duration_ms, approval, prev FROM calls WHERE id >= ? ORDER BY id`, from)
	if err != nil {
		t.Fatal(err)
	}
	var recs []audit.Record
	for rows.Next() {
		var r audit.Record
		var ts int64
		if err := rows.Scan(&r.ID, &ts, &r.Tool, &r.Session, &r.Origin, &r.Outcome, &r.Code, &r.DurationMs, &r.Approval, &r.Prev); err != nil {
			t.Fatal(err)
		}
		r.Time = time.UnixMilli(ts).UTC()
		recs = append(recs, r)
	}
	rows.Close()
	prev := recs[0].Prev
	for i := range recs {
		r := &recs[i]
		if i == 0 {
			r.Tool = "forged"
		}
		r.Prev = prev
		r.Hash = audit.HashRecord(r)
		prev = r.Hash
		if _, err := db.Exec(`UPDATE calls SET tool = ?, prev = ?, hash = ? WHERE id = ?`, r.Tool, r.Prev, r.Hash, r.ID); err != nil {
			t.Fatal(err)
		}
	}
}
