package replica

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/toolerr"
)

// Calls refused before any broker (no browser of the user's, another user's
// device named, a missing one, an unknown tool with no browser) are audited
// for the token's user with outcome "refused" and the code the agent got.
// The record of V naming U's device is the record of V naming a missing
// one: nothing in V's audit says U's device exists (SECURITY I-93).
func TestRefusedCallsAreAuditedForTheCaller(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	u, v := c.user(a, "ursula"), c.user(b, "victor")
	dev, _, _ := c.browser(ctx, a, u, "laptop")
	const madeUp = "0123456789abcdef0123456789abcdef"

	call := func(query, tool, session string) {
		t.Helper()
		cl := agent(ctx, t, b, v.secret, query)
		res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: tool})
		if err != nil {
			t.Fatal(err)
		}
		if e := toolerr.FromResult(res); !res.IsError || e == nil || e.Code != toolerr.ExtensionNotConnected {
			t.Fatalf("%s %s: want extension_not_connected, got %q", query, tool, textOf(res))
		}
	}
	call("?browser="+dev.ID, "echo", "") // U's device, by ID
	call("?browser=laptop", "echo", "")  // U's device, by name
	call("?browser="+madeUp, "echo", "") // no such device
	call("?browser=nothing-here", "echo", "")
	call("", "no_such_tool", "") // V has no browser at all

	var page struct{ Records []store.AuditRecord }
	if code := b.api(t, "GET", "/admin/audit?user="+v.userID, c.secret, nil, &page); code != http.StatusOK {
		t.Fatalf("audit: HTTP %d", code)
	}
	if len(page.Records) != 5 {
		t.Fatalf("V's audit has %d records, want 5: %+v", len(page.Records), page.Records)
	}
	same := func(r store.AuditRecord) store.AuditRecord {
		r.ID, r.Time, r.DurationMs, r.Prev, r.Hash = 0, time.Time{}, 0, "", ""
		return r
	}
	for i, r := range page.Records {
		if r.UserID != v.userID || r.Outcome != audit.OutcomeRefused || r.Code != string(toolerr.ExtensionNotConnected) || r.DeviceID != "" || r.Replica != "b" || r.Session != "agent" {
			t.Errorf("record %d: %+v", i, r)
		}
		raw, _ := json.Marshal(r)
		// The record keeps no device name V gave either: "laptop" is U's.
		for _, leak := range []string{dev.ID, u.userID, "ursula", "laptop"} {
			if strings.Contains(string(raw), leak) {
				t.Errorf("record %d of V's says %q: %s", i, leak, raw)
			}
		}
	}
	// By ID and by name, U's device reads as a missing one.
	if same(page.Records[0]) != same(page.Records[2]) || same(page.Records[1]) != same(page.Records[3]) {
		t.Errorf("naming U's device is recorded apart from naming a missing one:\n%+v\n%+v\n%+v\n%+v",
			page.Records[0], page.Records[2], page.Records[1], page.Records[3])
	}
	if page.Records[4].Tool != "no_such_tool" {
		t.Errorf("the unknown tool is recorded as %q", page.Records[4].Tool)
	}
	// And nothing anywhere in the audit names U's device: U made no call.
	var all struct{ Records []store.AuditRecord }
	if code := b.api(t, "GET", "/admin/audit", c.secret, nil, &all); code != http.StatusOK {
		t.Fatalf("audit: HTTP %d", code)
	}
	for _, r := range all.Records {
		if r.DeviceID == dev.ID || r.UserID == u.userID {
			t.Errorf("a record for U or U's device: %+v", r)
		}
	}
	if len(all.Records) != 5 {
		t.Errorf("the audit has %d records, want V's 5", len(all.Records))
	}
}

// Past its budget a user's refusals cost the audit chain one record a
// minute: the first over it says so (refusals_over_budget), the rest are
// answered the same and not recorded; another user's budget is their own,
// and the next minute starts afresh.
func TestRefusalBudgetCountsPerUserPerMinute(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	b := &refusalBudget{max: 2, now: func() time.Time { return now }}
	for i, want := range []budgetState{withinBudget, withinBudget, firstOverBudget, overBudget, overBudget} {
		if got := b.take("u"); got != want {
			t.Fatalf("refusal %d of u: %v, want %v", i+1, got, want)
		}
	}
	if got := b.take("v"); got != withinBudget {
		t.Fatalf("v's first refusal while u is over: %v", got)
	}
	now = now.Add(time.Minute)
	if got := b.take("u"); got != withinBudget {
		t.Fatalf("u's first refusal of the next minute: %v", got)
	}
}

// An agent that floods refused calls gets every answer as before, while
// the audit holds its budget of records and one that says the rest went
// unrecorded (SECURITY I-95).
func TestRefusalFloodKeepsTheAuditChainToItsBudget(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	fixed := time.Now()
	a := c.startWith("a", func(o *Options) { o.refusals = &refusalBudget{max: 3, now: func() time.Time { return fixed }} })
	v := c.user(a, "victor")
	cl := agent(ctx, t, a, v.secret, "")
	for i := range 8 {
		res, err := cl.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		if e := toolerr.FromResult(res); !res.IsError || e == nil || e.Code != toolerr.ExtensionNotConnected {
			t.Fatalf("refused call %d: want extension_not_connected, got %q", i+1, textOf(res))
		}
	}
	var page struct{ Records []store.AuditRecord }
	if code := a.api(t, "GET", "/admin/audit?user="+v.userID, c.secret, nil, &page); code != http.StatusOK {
		t.Fatalf("audit: HTTP %d", code)
	}
	var codes []string
	for _, r := range page.Records {
		codes = append(codes, r.Code)
	}
	want := []string{"extension_not_connected", "extension_not_connected", "extension_not_connected", refusalsOverBudget}
	if strings.Join(codes, ",") != strings.Join(want, ",") {
		t.Fatalf("the audit after 8 refusals with a budget of 3: %v, want %v", codes, want)
	}
}
