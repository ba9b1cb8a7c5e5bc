package mcpserver

import (
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The catalogue is empty for now, and tools/list must still answer (not
// -32601) with an empty list, and initialize must advertise tools.
func TestInitializeAndEmptyToolsList(t *testing.T) {
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	s := New(Options{Version: "1.2.3", SessionLabel: "test"})
	ss, err := s.MCP().Connect(ctx, st, nil)
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

// A client that writes its requests and closes stdin at once still gets
// every answer before the server exits.
func TestAnswersBeforeEOF(t *testing.T) {
	in := io.NopCloser(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`))
	var out syncBuffer
	start := time.Now()
	if err := New(Options{Version: "v"}).Serve(context.Background(), in, &out); err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > drainTimeout {
		t.Errorf("took %s to exit after EOF", time.Since(start))
	}
	got := out.String()
	if !strings.Contains(got, `"id":1,"result"`) || !strings.Contains(got, `"id":2,"result"`) || !strings.Contains(got, `"tools":[]`) {
		t.Fatalf("replies missing:\n%s", got)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) Close() error   { return nil }
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
