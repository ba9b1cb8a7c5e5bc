package daemon

import (
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearerRT string

func (t bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(t))
	return http.DefaultTransport.RoundTrip(r)
}

// An open /mcp session (its standalone SSE stream included) must not hold
// up shutdown for the whole grace period.
func TestShutdownWithOpenMCPSession(t *testing.T) {
	td := startDaemon(t, nil)
	ctx := tctx(t)
	var tok TokensCreateResult
	td.call("tokens.create", map[string]string{"label": "agent"}, &tok)
	cl := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "0"}, nil)
	s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + td.addr + "/mcp",
		HTTPClient: &http.Client{Transport: bearerRT(tok.Token)}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.ListTools(ctx, nil); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the standalone SSE GET open
	start := time.Now()
	td.stop()
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("shutdown took %s with an open MCP session", el)
	}
}
