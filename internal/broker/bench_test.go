package broker_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
	"github.com/torii-browser/torii/internal/mcpserver"
)

// benchDaemon: a real daemon on 127.0.0.1:0, a fake extension paired over
// the real link serving a no-op tool, and the tool's catalogue served.
func benchDaemon(b *testing.B) (*daemontest.Daemon, context.Context) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	b.Cleanup(cancel)
	d := daemontest.Start(b, nil)
	p := browserlinktest.New("bench-server", []map[string]any{
		{"name": "noop", "description": "Does nothing.", "inputSchema": browserlinktest.Schema(nil)},
	}, func(context.Context, string, json.RawMessage) (any, error) {
		return browserlinktest.TextResult("ok"), nil
	})
	d.Extension(b, ctx, p, map[string]any{"type": "acp", "name": "torii", "id": "bench-server"})
	d.WaitTools(b, 2) // noop + status
	return d, ctx
}

func report(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	if len(lat) == 0 {
		return
	}
	p50, p95 := lat[len(lat)/2], lat[len(lat)*95/100]
	b.ReportMetric(float64(p50.Microseconds()), "p50-µs")
	b.ReportMetric(float64(p95.Microseconds()), "p95-µs")
	b.Logf("n=%d median %s p95 %s", len(lat), p50, p95)
}

// BenchmarkNoopRoundTripMCP: go-sdk MCP client → /mcp (Streamable HTTP) →
// broker gate → torii/tools/call on the link → fake extension → back.
func BenchmarkNoopRoundTripMCP(b *testing.B) {
	d, ctx := benchDaemon(b)
	s, err := d.MCP(b, ctx, d.Token(b, "bench"), nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	noops(b, ctx, s)
}

// BenchmarkNoopRoundTripSocket: what `torii mcp` and `torii exec` pay: the
// MCP socket → broker → link → fake extension → back.
func BenchmarkNoopRoundTripSocket(b *testing.B) {
	d, ctx := benchDaemon(b)
	noops(b, ctx, d.Relay(b, ctx, mcpserver.RelayHelloParams{SessionLabel: "bench"}))
}

func noops(b *testing.B, ctx context.Context, s *mcp.ClientSession) {
	params := &mcp.CallToolParams{Name: "noop", Arguments: map[string]any{}}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		r, err := s.CallTool(ctx, params)
		lat = append(lat, time.Since(t0))
		if err != nil || r.IsError {
			b.Fatalf("noop: %v %+v", err, r)
		}
	}
	b.StopTimer()
	report(b, lat)
}
