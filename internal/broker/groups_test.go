package broker

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/toolerr"
)

// groupedServer serves a core tool and one of the "pdf" group.
type groupedServer struct{ *fakeServer }

func (g groupedServer) Tools() []*mcp.Tool {
	return []*mcp.Tool{
		{Name: "work", InputSchema: map[string]any{"type": "object"}},
		{Name: "print", InputSchema: map[string]any{"type": "object"}, Meta: mcp.Meta{GroupMetaKey: "pdf"}},
	}
}

func names(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	slices.Sort(out)
	return out
}

// A group's tools are neither listed nor callable until the person turns the
// group on; turning it on (or off) announces the new catalogue once.
func TestToolGroups(t *testing.T) {
	t.Parallel()
	b := New(nil)
	f := newFake()
	t.Cleanup(func() { b.Close(); f.cancel() })
	var mu sync.Mutex
	var announced [][]string
	b.OnToolsChanged(func(tools []*mcp.Tool) {
		mu.Lock()
		announced = append(announced, names(tools))
		mu.Unlock()
	})
	b.AttachServer(groupedServer{f})
	if got := names(b.Tools()); !slices.Equal(got, []string{"status", "work"}) {
		t.Fatalf("default catalogue: %v", got)
	}
	r := b.CallTool(context.Background(), Call{Session: "a", Name: "print", Arguments: args(-1)})
	e := toolerr.FromResult(r)
	if e == nil || e.Code != toolerr.ToolDisabled || !strings.Contains(e.Message, `"pdf"`) || !strings.Contains(e.Message, "broker.toolGroups") {
		t.Fatalf("call of a tool whose group is off: %+v", e)
	}
	if f.startedN() != 0 {
		t.Fatal("a refused call reached the extension")
	}

	b.SetToolGroups([]string{"pdf"})
	b.SetToolGroups([]string{"pdf"}) // no change, no announcement
	if got := names(b.Tools()); !slices.Equal(got, []string{"print", "status", "work"}) {
		t.Fatalf("catalogue with pdf on: %v", got)
	}
	if r := b.CallTool(context.Background(), Call{Session: "a", Name: "print", Arguments: args(-1)}); r.IsError {
		t.Fatalf("call with its group on: %+v", toolerr.FromResult(r))
	}
	b.SetToolGroups(nil)
	mu.Lock()
	defer mu.Unlock()
	want := [][]string{{"status", "work"}, {"print", "status", "work"}, {"status", "work"}}
	if !slices.EqualFunc(announced, want, slices.Equal[[]string]) {
		t.Fatalf("announced catalogues: %v, want %v", announced, want)
	}
}
