package mcpserver

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The catalogue is empty for now, and tools/list must still answer (not
// -32601) with an empty list, and initialize must advertise tools.
func TestInitializeAndEmptyToolsList(t *testing.T) {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	s := New(Options{Version: "1.2.3", SessionLabel: "test"})
	ss, err := s.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	ir := cs.InitializeResult()
	if ir.ServerInfo.Name != "torii" || ir.ServerInfo.Version != "1.2.3" {
		t.Errorf("serverInfo = %+v", ir.ServerInfo)
	}
	if ir.Capabilities.Tools == nil {
		t.Error("tools capability not advertised")
	}
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if res.Tools == nil || len(res.Tools) != 0 {
		t.Errorf("tools = %#v, want empty non-nil list", res.Tools)
	}
}
