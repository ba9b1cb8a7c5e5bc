package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/daemon/daemontest"
)

// docs/clients.md is followed as written: its configs and commands are
// read from the page, only the port and the token filled in.

type docBlock struct{ lang, body string }

func clientsDoc(t *testing.T) []docBlock {
	t.Helper()
	b, err := os.ReadFile("../../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []docBlock
	for _, m := range regexp.MustCompile("(?s)```(\\w*)\\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		out = append(out, docBlock{m[1], m[2]})
	}
	return out
}

func docBlockWith(t *testing.T, lang, sub string) string {
	t.Helper()
	for _, b := range clientsDoc(t) {
		if b.lang == lang && strings.Contains(b.body, sub) {
			return b.body
		}
	}
	t.Fatalf("docs/clients.md has no %s block with %q", lang, sub)
	return ""
}

// asWritten puts the test daemon's address and the token in a doc snippet.
func asWritten(s string, d *daemontest.Daemon, tok string) string {
	s = strings.ReplaceAll(s, "127.0.0.1:7317", d.Addr)
	s = strings.ReplaceAll(s, "<token>", tok)
	return strings.ReplaceAll(s, "$TOKEN", tok)
}

type hdrRT struct{ h http.Header }

func (x hdrRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range x.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func mcpListTools(t *testing.T, url string, h http.Header) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cl := mcp.NewClient(&mcp.Implementation{Name: "doc-client", Version: "0"}, nil)
	s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: hdrRT{h}}, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect %s: %v", url, err)
	}
	defer s.Close()
	res, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return names
}

// The HTTP clients' configs: Cursor's JSON, the claude and Inspector
// command lines (URL and header), all reach /mcp with the token.
func TestClientsDocMCPOverHTTP(t *testing.T) {
	t.Parallel()
	d := daemontest.Start(t, func(o *daemon.Options) {
		o.Catalogue = []*mcp.Tool{{Name: "navigate", InputSchema: map[string]any{"type": "object"}}}
	})
	tok := d.Token(t, "cursor")

	var cursor struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(asWritten(docBlockWith(t, "json", `"url"`), d, tok)), &cursor); err != nil {
		t.Fatal(err)
	}
	srv := cursor.MCPServers["torii"]
	h := http.Header{}
	for k, v := range srv.Headers {
		h.Set(k, v)
	}
	if got := mcpListTools(t, srv.URL, h); !slices.Contains(got, "navigate") {
		t.Fatalf("Cursor config: tools %v", got)
	}

	// claude mcp add … URL --header "…"; the Inspector: --cli URL … --header "…".
	cmdRe := regexp.MustCompile(`(http://\S+/mcp)(?s:.*?)--header "([^"]+)"`)
	for _, prog := range []string{"claude mcp add", "inspector --cli"} {
		m := cmdRe.FindStringSubmatch(asWritten(docBlockWith(t, "sh", prog), d, tok))
		if m == nil {
			t.Fatalf("%s: no URL and --header in the doc's command", prog)
		}
		name, value, _ := strings.Cut(m[2], ": ")
		if got := mcpListTools(t, m[1], http.Header{name: {value}}); !slices.Contains(got, "navigate") {
			t.Fatalf("%s: tools %v", prog, got)
		}
	}
}

// A browser-based ACP client as the doc sets it up: its origin in
// tokenOrigins, the token as a subprotocol beside acp.v1.
func TestClientsDocTokenACPClient(t *testing.T) {
	t.Parallel()
	var cfg config.Config
	if err := json.Unmarshal([]byte(docBlockWith(t, "json", "tokenOrigins")), &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.TokenOrigins) != 1 {
		t.Fatalf("tokenOrigins: %v", cfg.TokenOrigins)
	}
	d := daemontest.Start(t, func(o *daemon.Options) { o.Config.TokenOrigins = cfg.TokenOrigins })
	tok := d.Token(t, "panel")
	js := docBlockWith(t, "js", "new WebSocket")
	m := regexp.MustCompile(`\["([^"]+)", "([^"]+)" \+ token\]`).FindStringSubmatch(js)
	if m == nil {
		t.Fatalf("the doc's WebSocket line changed: %s", js)
	}
	dial := func(protos []string) (*websocket.Conn, *http.Response, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return websocket.Dial(ctx, d.URL, &websocket.DialOptions{Subprotocols: protos,
			HTTPHeader: http.Header{"Origin": {cfg.TokenOrigins[0]}}})
	}
	ws, resp, err := dial([]string{m[1], m[2] + tok})
	if err != nil {
		t.Fatalf("dial as the doc says: %v", err)
	}
	defer ws.CloseNow()
	if resp.Header.Get("Sec-WebSocket-Protocol") != "acp.v1" {
		t.Fatalf("subprotocol %q, want acp.v1 echoed", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ws.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}`)); err != nil {
		t.Fatal(err)
	}
	_, b, err := ws.Read(ctx)
	if err != nil || !strings.Contains(string(b), `"result"`) {
		t.Fatalf("initialize: %s %v", b, err)
	}
	// Without the token the same origin gets 401 with the challenge the doc shows.
	_, resp, err = dial([]string{"acp.v1"})
	if err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer realm="torii"` {
		t.Fatalf("no token: %v %+v", err, resp)
	}
}

// The doc's pin example, against a server listing Katashiro's real
// (namespaced) tool names: every pin matches, and the agent sees exactly
// the pinned tools under those names.
func TestClientsDocPins(t *testing.T) {
	t.Parallel()
	var cfg config.Config
	if err := json.Unmarshal([]byte(docBlockWith(t, "json", `"pins"`)), &cfg); err != nil {
		t.Fatal(err)
	}
	d := daemontest.Start(t, func(o *daemon.Options) {
		o.Config.Agents = []config.Agent{{Name: "scripted", Command: agentBin}}
		o.Config.MCPServers = cfg.MCPServers
	})
	tok := d.Token(t, "katashiro")
	c := dial(t, d.URL, tok, false)
	var tools []map[string]any
	for _, n := range []string{"katashiro.snapshot", "katashiro.read_dom", "katashiro.click", "katashiro.navigate"} {
		tools = append(tools, map[string]any{"name": n, "inputSchema": schema()})
	}
	p := newProvider(&fakeServer{name: "katashiro", id: "id-k", tools: tools})
	c.handle(p.handle)
	initialize(t, c)
	sid := newSession(t, c, []any{map[string]any{"type": "acp", "name": "katashiro", "id": "id-k"}}, nil)
	waitServers(t, d, sid, "katashiro")
	var r daemon.GatewayServersResult
	d.Call(t, "gateway.servers", nil, &r)
	if len(r.Servers) != 1 || len(r.Servers[0].UnmatchedPins) != 0 || len(r.Servers[0].Warnings) != 0 {
		t.Fatalf("the doc's pins do not all match: %+v", r.Servers)
	}
	want := slices.Clone(cfg.MCPServers.Pins["katashiro"])
	slices.Sort(want)
	mustPrompt(t, c, sid, "/tools", "end_turn")
	c.waitText(sid, "tools: "+strings.Join(want, ","))
}
