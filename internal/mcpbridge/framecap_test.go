package mcpbridge_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/mcpbridge/mcpbridgetest"
	"github.com/torii-browser/torii/internal/toolerr"
)

const serverID = "7d1c2b0e-4f5a-4c8e-9b1d-0e2f3a4b5c6d"

type token struct{}

func (token) Check(t string) (string, bool) { return "t", t == "tok" }

// conns hands the test each authenticated link connection as it says
// something (the fake extension's first request).
type conns chan *link.Conn

func (c conns) Handle(_ context.Context, conn *link.Conn, _ string, _ json.RawMessage) (any, error) {
	c <- conn
	return struct{}{}, nil
}
func (conns) Closed(*link.Conn) {}

func provider() *mcpbridgetest.Provider {
	tools := []map[string]any{
		{"name": "huge", "description": "An answer over the frame cap.", "inputSchema": mcpbridgetest.Schema(nil)},
		{"name": "slow", "description": "Until cancelled.", "inputSchema": mcpbridgetest.Schema(nil)},
		{"name": "echo", "description": "Echo.", "inputSchema": mcpbridgetest.Schema(nil)},
	}
	return mcpbridgetest.New(serverID, tools, func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		switch name {
		case "huge":
			return mcpbridgetest.TextResult(strings.Repeat("x", link.MaxFrame+1)), nil
		case "slow":
			<-ctx.Done()
			return mcpbridgetest.TextResult("late"), nil
		}
		return mcpbridgetest.TextResult("echo " + string(args)), nil
	})
}

// A tool result larger than the link's frame cap: the link closes (1009,
// SECURITY I-11), the call that asked gets too_large at once, another call
// waiting on the same link gets extension_not_connected at once, nothing
// is left waiting, and the next connection works.
func TestResultOverFrameCap(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()
	id, devs := linktest.Stores(t, dir)
	got := make(conns, 4)
	srv := link.NewServer(link.Options{Identity: id, Devices: devs, Handler: got, LoopbackBind: true, Tokens: token{}})
	hs := httptest.NewServer(srv)
	defer func() {
		srv.Hub().CloseAll(websocket.StatusGoingAway, "test over")
		srv.Hub().Wait()
		hs.Close()
	}()
	url := "ws" + strings.TrimPrefix(hs.URL, "http") + "/acp"
	connect := func(p *mcpbridgetest.Provider) (*linktest.Client, *mcpbridge.Bridge) {
		t.Helper()
		ext, err := linktest.Dial(ctx, url, &linktest.Options{NoOrigin: true,
			Header: http.Header{"Authorization": {"Bearer tok"}}, Handler: p.Handle})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ext.Close() })
		if err := ext.Call(ctx, "hello", struct{}{}, nil); err != nil {
			t.Fatal(err)
		}
		br, err := mcpbridge.Connect(ctx, <-got, acp.MCPServer{Name: "torii", ID: serverID, Gen: acp.GenA}, mcpbridge.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return ext, br
	}

	p := provider()
	ext, br := connect(p)
	if n := len(br.Tools()); n != 3 {
		t.Fatalf("catalogue: %d tools", n)
	}
	slow := make(chan *mcp.CallToolResult, 1)
	go func() { slow <- br.CallTool(ctx, "slow", nil, 0) }()
	for p.Inflight() < 1 {
		time.Sleep(2 * time.Millisecond)
	}
	r := br.CallTool(ctx, "huge", nil, 0)
	if c := code(r); c != toolerr.TooLarge {
		t.Fatalf("huge result: %s %s", c, r.Content[0].(*mcp.TextContent).Text)
	}
	if txt := r.Content[0].(*mcp.TextContent).Text; strings.Contains(txt, "xxxx") {
		t.Fatal("the error carries part of the oversized answer")
	}
	select {
	case r := <-slow:
		if c := code(r); c != toolerr.ExtensionNotConnected {
			t.Fatalf("call waiting beside it: %s", c)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a call waiting on the closed link hangs")
	}
	if code, err := ext.WaitClosed(ctx); err != nil || code != websocket.StatusMessageTooBig {
		t.Fatalf("link close: %v %v, want 1009", code, err)
	}
	select {
	case <-br.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the bridge outlives its link")
	}
	if c := code(br.CallTool(ctx, "echo", nil, 0)); c != toolerr.ExtensionNotConnected {
		t.Fatalf("call on the dead bridge: %s", c)
	}

	// The extension reconnects: the next call works.
	_, br2 := connect(provider())
	r = br2.CallTool(ctx, "echo", json.RawMessage(`{"a":1}`), 0)
	if r.IsError || r.Content[0].(*mcp.TextContent).Text != `echo {"a":1}` {
		t.Fatalf("after reconnect: %+v", r)
	}
}

func code(r *mcp.CallToolResult) toolerr.Code {
	if e := toolerr.FromResult(r); e != nil {
		return e.Code
	}
	return ""
}
