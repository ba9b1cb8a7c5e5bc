package broker

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/toolerr"
)

// traitServer records whether each call was handed over as read-only.
type traitServer struct {
	roServer
	seen map[string]bool
}

func (s traitServer) Call(_ context.Context, r browserlink.Request) *mcp.CallToolResult {
	s.seen[r.Tool] = r.ReadOnly
	return toolerr.Result(toolerr.Timeout, "%s got no answer by its deadline; it may have run", r.Tool)
}

// The link maps a failure once, from the tool's readOnlyHint (a read's
// timeout says it changed nothing): the broker hands the trait over from
// the catalogue and rewrites nothing itself.
func TestReadOnlyTraitHandedToTheLink(t *testing.T) {
	t.Parallel()
	b := New(nil)
	f := newFake()
	srv := traitServer{roServer{f}, map[string]bool{}}
	b.AttachServer(srv)
	t.Cleanup(func() { b.Close(); f.cancel() })
	s := b.NewSession("agent:x:1", KindAgent)
	for _, name := range []string{"look", "work"} {
		if e := toolerr.FromResult(b.CallTool(context.Background(), Call{Name: name, Arguments: args(-1), Owner: s})); e == nil || e.Code != toolerr.Timeout {
			t.Fatalf("%s: %+v", name, e)
		}
	}
	if !srv.seen["look"] || srv.seen["work"] {
		t.Fatalf("read-only traits handed over: %v", srv.seen)
	}
}
