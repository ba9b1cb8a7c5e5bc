package broker

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/toolerr"
)

// timeoutServer answers every call as the bridge does when its deadline passes.
type timeoutServer struct{ roServer }

func (timeoutServer) CallToolMeta(_ context.Context, name string, _ json.RawMessage, _ map[string]any, _ time.Duration) *mcp.CallToolResult {
	return toolerr.Result(toolerr.Timeout, "%s got no answer within its deadline (at most 50s); it may have run", name)
}

// A read-only tool's timeout says it changed nothing and can be retried,
// from the tool's readOnlyHint; a tool that may act keeps "may have run".
func TestReadOnlyTimeoutSaysNothingChanged(t *testing.T) {
	t.Parallel()
	b := New(nil)
	f := newFake()
	b.AttachServer(timeoutServer{roServer{f}})
	t.Cleanup(func() { b.Close(); f.cancel() })
	s := b.NewSession("agent:x:1", KindAgent)
	look := toolerr.FromResult(b.CallTool(context.Background(), Call{Name: "look", Arguments: args(-1), Owner: s}))
	if look == nil || look.Code != toolerr.Timeout || strings.Contains(look.Message+look.Hint, "may have") ||
		!strings.Contains(look.Message, "nothing changed") || look.Hint != toolerr.ReadHint(toolerr.Timeout) {
		t.Fatalf("read-only timeout: %+v", look)
	}
	work := toolerr.FromResult(b.CallTool(context.Background(), Call{Name: "work", Arguments: args(-1), Owner: s}))
	if work == nil || work.Code != toolerr.Timeout || !strings.Contains(work.Message, "may have run") || work.Hint != toolerr.Timeout.Hint() {
		t.Fatalf("write timeout: %+v", work)
	}
}
