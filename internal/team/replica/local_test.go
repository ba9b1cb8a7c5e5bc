package replica

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call whose browser is homed on the replica the agent called runs there
// without the bus, and keeps what the bus path keeps: the audit record
// written by the home before the reply (SECURITY I-95), and a revocation
// cancelling the call in the browser (SECURITY I-93).
func TestCallOnItsHomeKeepsAuditAndRevocation(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a := c.start("a")
	u := c.user(a, "ursula")
	dev, _, p := c.browser(ctx, a, u, "laptop")
	s := agent(ctx, t, a, u.secret, "?browser="+dev.ID)
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}})
	if err != nil || res.IsError || !strings.Contains(textOf(res), `laptop:{"x":1}`) {
		t.Fatalf("call on its home: %v %q", err, textOf(res))
	}
	var page struct {
		Records []struct{ Tool, DeviceID, Replica string }
	}
	if code := a.api(t, "GET", "/admin/audit?user="+u.userID, c.secret, nil, &page); code != http.StatusOK {
		t.Fatalf("audit: HTTP %d", code)
	}
	if len(page.Records) != 1 || page.Records[0].DeviceID != dev.ID || page.Records[0].Replica != "a" {
		t.Fatalf("audit records after the answered call: %+v", page.Records)
	}

	revokeMidCall(ctx, t, c, a, s, p, u)
}
