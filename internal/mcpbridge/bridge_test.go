package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/acp"
	torpc "github.com/torii-browser/torii/internal/wire"
)

// silentConn never answers: a provider that accepts the socket but not the
// connection. (The wire itself is tested over real sockets in
// internal/daemon; this pins the registration deadline.)
type silentConn struct {
	ctx   context.Context
	mu    sync.Mutex
	calls []string
}

func (c *silentConn) ID() string                                { return "silent" }
func (c *silentConn) Context() context.Context                  { return c.ctx }
func (c *silentConn) Notify(context.Context, string, any) error { return nil }
func (c *silentConn) Call(ctx context.Context, method string, _, _ any) error {
	c.mu.Lock()
	c.calls = append(c.calls, method)
	c.mu.Unlock()
	<-ctx.Done()
	return ctx.Err()
}
func (c *silentConn) Start(ctx context.Context, _ json.RawMessage, method string, _ any) (*torpc.Pending, error) {
	c.mu.Lock()
	c.calls = append(c.calls, method)
	c.mu.Unlock()
	return nil, errors.New("silentConn: no calls after mcp/connect")
}

func TestConnectDeadline(t *testing.T) {
	c := &silentConn{ctx: context.Background()}
	start := time.Now()
	_, err := Connect(context.Background(), c, acp.MCPServer{Name: "torii", ID: "u", Gen: acp.GenA},
		Options{ConnectTimeout: 100 * time.Millisecond})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Connect: %v", err)
	}
	if el := time.Since(start); el > time.Second {
		t.Fatalf("Connect took %s past its deadline", el)
	}
	if len(c.calls) != 1 || c.calls[0] != "mcp/connect" {
		t.Fatalf("calls: %v", c.calls)
	}
	if ConnectTimeout != 30*time.Second || DefaultCallTimeout != 180*time.Second {
		t.Fatal("OpenAB's contract: 30 s connect+initialize, 180 s per request")
	}
}
