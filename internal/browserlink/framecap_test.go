package browserlink_test

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

	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
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

func fakeExtension() *browserlinktest.Provider {
	tools := []map[string]any{
		{"name": "huge", "description": "An answer over the frame cap.", "inputSchema": browserlinktest.Schema(nil)},
		{"name": "slow", "description": "Until cancelled.", "inputSchema": browserlinktest.Schema(nil)},
		{"name": "echo", "description": "Echo.", "inputSchema": browserlinktest.Schema(nil)},
	}
	return browserlinktest.New(serverID, tools, func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		switch name {
		case "huge":
			return browserlinktest.TextResult(strings.Repeat("x", link.MaxFrame+1)), nil
		case "slow":
			<-ctx.Done()
			return browserlinktest.TextResult("late"), nil
		}
		return browserlinktest.TextResult("echo " + string(args)), nil
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
	connect := func(p *browserlinktest.Provider) (*linktest.Client, *browserlink.Server) {
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
		br, err := browserlink.Open(ctx, <-got, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ext, br
	}

	p := fakeExtension()
	ext, br := connect(p)
	if n := len(br.Tools()); n != 3 {
		t.Fatalf("catalogue: %d tools", n)
	}
	slow := make(chan *mcp.CallToolResult, 1)
	go func() { slow <- br.Call(ctx, call("slow", nil)) }()
	if _, err := p.WaitForCall("slow", 5*time.Second); err != nil {
		t.Fatal(err)
	}
	r := br.Call(ctx, call("huge", nil))
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
	case <-br.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the server outlives its link")
	}
	if c := code(br.Call(ctx, call("echo", nil))); c != toolerr.ExtensionNotConnected {
		t.Fatalf("call on the dead server: %s", c)
	}

	// The extension reconnects: the next call works.
	_, br2 := connect(fakeExtension())
	r = br2.Call(ctx, call("echo", json.RawMessage(`{"a":1}`)))
	if r.IsError || r.Content[0].(*mcp.TextContent).Text != `echo {"a":1}` {
		t.Fatalf("after reconnect: %+v", r)
	}
}

func call(tool string, args json.RawMessage) browserlink.Request {
	return browserlink.Request{Tool: tool, Args: args, Deadline: time.Now().Add(time.Minute)}
}

func code(r *mcp.CallToolResult) toolerr.Code {
	if e := toolerr.FromResult(r); e != nil {
		return e.Code
	}
	return ""
}
