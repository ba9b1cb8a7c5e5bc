package broker

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/toolerr"
)

func TestMirror(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "0"},
		&mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{ListChanged: true}}})
	b := New(nil)
	h := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return b.CallTool(ctx, Call{Name: req.Params.Name, Arguments: req.Params.Arguments}), nil
	}
	m := NewMirror(srv, h)
	srv.AddReceivingMiddleware(m.UnknownTools(h))
	obj := map[string]any{"type": "object"}
	m.Set([]*mcp.Tool{{Name: "a", InputSchema: obj}, {Name: "b", InputSchema: obj},
		{Name: "bad", InputSchema: map[string]any{"type": "string"}}})

	changed := make(chan struct{}, 4)
	cl := mcp.NewClient(&mcp.Implementation{Name: "c", Version: "0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	names := func() []string {
		r, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, tool := range r.Tools {
			out = append(out, tool.Name)
		}
		return out
	}
	if got := names(); len(got) != 2 || got[0] != "a" || got[1] != "b" {
		t.Fatalf("tools: %v (a schema that is not an object must be skipped)", got)
	}
	m.Set([]*mcp.Tool{{Name: "b", InputSchema: obj}})
	select {
	case <-changed:
	case <-ctx.Done():
		t.Fatal("no tools/list_changed")
	}
	if got := names(); len(got) != 1 || got[0] != "b" {
		t.Fatalf("after Set: %v", got)
	}
	// Calls reach the broker; with no extension: typed errors, not protocol errors.
	for _, name := range []string{"b", "a", "zzz"} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name})
		if err != nil {
			t.Fatalf("%s: protocol error %v", name, err)
		}
		if e := toolerr.FromResult(r); e == nil || e.Code != toolerr.ExtensionNotConnected {
			t.Fatalf("%s: %+v", name, r)
		}
	}
}

func TestGateOrder(t *testing.T) {
	t.Parallel()
	b := New(nil)
	if _, e := b.Gate(&Call{Name: ""}); e == nil || e.Code != toolerr.InvalidArgument {
		t.Fatalf("empty name: %v", e)
	}
	if _, e := b.Gate(&Call{Name: "x"}); e == nil || e.Code != toolerr.ExtensionNotConnected {
		t.Fatalf("no catalogue: %v", e)
	}
	b.tools = []*mcp.Tool{{Name: "x"}}
	b.byName = map[string]*mcp.Tool{"x": b.tools[0]}
	if _, e := b.Gate(&Call{Name: "y"}); e == nil || e.Code != toolerr.ToolNotFound {
		t.Fatalf("unknown: %v", e)
	}
	if _, e := b.Gate(&Call{Name: "x"}); e == nil || e.Code != toolerr.ExtensionNotConnected {
		t.Fatalf("known, disconnected: %v", e)
	}
}
