package replica

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkAgentCall is one agent's tools/call through /mcp to a browser,
// on real PostgreSQL and NATS: with the browser homed on the replica the
// agent calls (same) and on another one (cross), named by ?browser= or
// not (the user's browser that connected last). It reports the median and
// the 95th percentile, what the team bench's "routing adds" is made of.
func BenchmarkAgentCall(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c := newCluster(b)
	home, other := c.start("a"), c.start("b")
	u := c.user(home, "bench")
	dev, _, _ := c.browser(ctx, home, u, "laptop")
	for name, tr := range map[string]*testReplica{"same": home, "cross": other, "cross-unnamed": other} {
		b.Run(name, func(b *testing.B) {
			query := "?browser=" + dev.ID
			if strings.HasSuffix(name, "unnamed") {
				query = ""
			}
			s := agent(ctx, b, tr, u.secret, query)
			call := func() {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
				if err != nil || res.IsError {
					b.Fatalf("call: %v %q", err, textOf(res))
				}
			}
			call() // connections made, not timed
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				call()
				lat = append(lat, time.Since(t0))
			}
			b.StopTimer()
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds()), "p95-µs")
		})
	}
}
