package cli

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMCPRelaysToTheGateway runs `torii mcp --server` between an MCP client
// on its stdio and a stateless streamable-HTTP MCP server standing in for
// the gateway's /mcp, which checks the bearer token.
func TestMCPRelaysToTheGateway(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var sessions, browsers []string
	srv := mcp.NewServer(&mcp.Implementation{Name: "gateway", Version: "0"}, nil)
	type echoIn struct {
		Text string `json:"text"`
	}
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "echo"}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "echo: " + in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer user-token" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="torii"`)
			http.Error(w, `{"error":{"code":"unauthorized","message":"no","hint":""}}`, http.StatusUnauthorized)
			return
		}
		mu.Lock()
		sessions = append(sessions, r.Header.Get(SessionHeader))
		browsers = append(browsers, r.URL.Query().Get("browser"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(gw.Close)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errb bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Main([]string{"mcp", "--server", gw.URL, "--token", "user-token", "--session", "ci", "--browser", "work"},
			Stdio{In: inR, Out: outW, Err: &errb})
		outW.Close()
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "echo" {
		t.Fatalf("%+v %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "echo: hi" {
		t.Fatalf("%+v %v", res, err)
	}
	cs.Close()
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	mu.Lock()
	defer mu.Unlock()
	for i := range sessions {
		if sessions[i] != "ci" || browsers[i] != "work" {
			t.Fatalf("request %d: session %q browser %q", i, sessions[i], browsers[i])
		}
	}
}

func TestMCPRemoteWrongTokenSaysWhatToCheck(t *testing.T) {
	t.Parallel()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	t.Cleanup(gw.Close)
	var out, errb bytes.Buffer
	code := Main([]string{"mcp", "--server", gw.URL, "--token", "nope"}, Stdio{In: strings.NewReader(""), Out: &out, Err: &errb})
	if code != ExitFailure || !strings.Contains(errb.String(), "--token") {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
}
