package acp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/tokens"
	"github.com/torii-browser/torii/internal/wire"
)

// A token client over a real socket: the agent sees real link connections.
func setup(t *testing.T) (*acp.Agent, *link.Server, *linktest.Client, chan acp.Session) {
	t.Helper()
	ts, err := tokens.Open(filepath.Join(t.TempDir(), "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := ts.Create("acp test")
	if err != nil {
		t.Fatal(err)
	}
	agent := acp.New("1.2.3")
	seen := make(chan acp.Session, 4)
	agent.OnSession = func(s acp.Session) { seen <- s }
	srv := link.NewServer(link.Options{Tokens: ts, Handler: agent, LoopbackBind: true})
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	c, err := linktest.Dial(ctx, "ws"+strings.TrimPrefix(hs.URL, "http")+"/acp",
		&linktest.Options{NoOrigin: true, Header: http.Header{"Authorization": {"Bearer " + tok}}})
	if err != nil {
		t.Fatal(err)
	}
	return agent, srv, c, seen
}

func TestSessionRecordsDeclaredServers(t *testing.T) {
	t.Parallel()
	agent, srv, c, seen := setup(t)
	ctx := context.Background()
	var ini acp.InitializeResult
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}, &ini); err != nil {
		t.Fatal(err)
	}
	if ini.AgentInfo.Version != "1.2.3" || !ini.AgentCapabilities.MCPCapabilities.ACP || ini.AuthMethods == nil {
		t.Fatalf("initialize: %+v", ini)
	}
	var res acp.NewSessionResult
	err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{
		map[string]any{"type": "acp", "name": "torii", "id": "u-a"},
		map[string]any{"type": "acp", "name": "other", "serverId": "u-b"},
		map[string]any{"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp", "headers": []any{}},
	}}, &res)
	if err != nil {
		t.Fatal(err)
	}
	s := <-seen
	if s.ID != res.SessionID || len(s.MCPServers) != 2 ||
		s.MCPServers[0] != (acp.MCPServer{Name: "torii", ID: "u-a", Gen: acp.GenA}) ||
		s.MCPServers[1] != (acp.MCPServer{Name: "other", ID: "u-b", Gen: acp.GenB}) {
		t.Fatalf("session: %+v", s)
	}
	conns := srv.Hub().Connections()
	if len(conns) != 1 || len(agent.Sessions(conns[0].ID)) != 1 {
		t.Fatalf("sessions by connection: %+v", conns)
	}
	if got, ok := agent.Session(res.SessionID); !ok || got.ConnID != conns[0].ID {
		t.Fatalf("Session(%s): %+v %v", res.SessionID, got, ok)
	}
	// Probes and notifications.
	if err := c.Call(ctx, "openab/ping", nil, nil); err != nil {
		t.Fatalf("probe: %v", err)
	}
	if err := c.Notify(ctx, "session/cancel", map[string]string{"sessionId": res.SessionID}); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "session/load", map[string]any{}, nil); err == nil || err.(*wire.Error).Code != wire.CodeMethodNotFound {
		t.Fatalf("session/load: %v", err)
	}
	// Closing the connection forgets its sessions. The hub drops a
	// connection only after its handler was told it closed.
	c.Close()
	for {
		changed := srv.Hub().Changed()
		if len(srv.Hub().Connections()) == 0 {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			t.Fatal("the connection never ended")
		}
	}
	if _, ok := agent.Session(res.SessionID); ok {
		t.Fatal("session outlived its connection")
	}
}
