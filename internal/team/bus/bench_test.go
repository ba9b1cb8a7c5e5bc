package bus

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/torii-browser/torii/internal/team/teamtest"
)

// BenchmarkCall measures one call's round trip between two replicas
// through a real nats-server on loopback: what routing adds over running
// the handler in process. It reports the median as p50-µs.
func BenchmarkCall(b *testing.B) {
	srv := teamtest.NATS(b)
	caller, home := newBus(b, srv, "caller"), newBus(b, srv, "home")
	dev := deviceID(b)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}
	serve(b, home, dev, func(context.Context, CallRequest) *mcp.CallToolResult { return res })
	ctx := context.Background()
	r := CallRequest{DeviceID: dev, Tool: "click", Arguments: []byte(`{"ref":"e12"}`), UserID: "u", TokenID: "t"}
	lat := make([]time.Duration, 0, b.N)
	for b.Loop() {
		start := time.Now()
		if _, err := caller.Call(ctx, r); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	slices.Sort(lat)
	if len(lat) > 0 {
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
	}
}
