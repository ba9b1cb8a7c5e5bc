package replica

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/team/teamtest"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

const serverID = "0b6f5c6e-2d0b-4f36-9a43-2f3f2d6f7f11"

// cluster is the engines and shared files replicas of one test use.
type cluster struct {
	t        *testing.T
	pg, nats *teamtest.Server
	dir      string
	secret   string
	homes    chan string // device IDs a replica started serving
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	c := &cluster{t: t, pg: teamtest.Postgres(t), nats: teamtest.NATS(t), dir: t.TempDir(),
		secret: strings.Repeat("s3cret", 8), homes: make(chan string, 64)}
	if err := os.WriteFile(filepath.Join(c.dir, "admin"), []byte(c.secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return c
}

// replica is one running replica.
type testReplica struct {
	base   string // http://127.0.0.1:port
	cancel context.CancelFunc
	done   chan error
}

func (c *cluster) start(name string) *testReplica {
	c.t.Helper()
	team := config.Team{Store: c.pg.URL, Bus: c.nats.URL, Replica: name,
		IdentityFile: filepath.Join(c.dir, "identity", "key"), AdminTokenFile: filepath.Join(c.dir, "admin")}
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	tr := &testReplica{cancel: cancel, done: make(chan error, 1)}
	opts := Options{Config: config.Config{Listen: "127.0.0.1:0"}, Team: team, Ready: ready, Version: "test",
		Catalogue: []*mcp.Tool{}, drainGrace: 5 * time.Second,
		onHome: func(id string, serving bool) {
			if serving {
				c.homes <- id
			}
		}}
	go func() { tr.done <- Run(ctx, opts) }()
	select {
	case addr := <-ready:
		tr.base = "http://" + addr
	case err := <-tr.done:
		cancel()
		c.t.Fatalf("replica %s did not start: %v", name, err)
	case <-time.After(30 * time.Second):
		cancel()
		c.t.Fatalf("replica %s did not start in 30 s", name)
	}
	c.t.Cleanup(tr.stop)
	return tr
}

func (tr *testReplica) stop() {
	if tr.cancel == nil {
		return
	}
	tr.cancel()
	tr.cancel = nil
	<-tr.done
}

func (tr *testReplica) ws() string { return "ws" + strings.TrimPrefix(tr.base, "http") + "/acp" }

// api calls the admin or user API and decodes its JSON answer.
func (tr *testReplica) api(t *testing.T, method, path, token string, body, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, tr.base+path, rd)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if out != nil {
		_ = json.NewDecoder(resp.Body).Decode(out)
	}
	return resp.StatusCode
}

type userToken struct{ userID, tokenID, secret string }

// user makes a user and a token for it through the admin API.
func (c *cluster) user(tr *testReplica, name string) userToken {
	c.t.Helper()
	var u struct{ ID string }
	if code := tr.api(c.t, "POST", "/admin/users", c.secret, map[string]any{"name": name}, &u); code != http.StatusCreated {
		c.t.Fatalf("create user: HTTP %d", code)
	}
	var tk struct {
		Token  struct{ ID string }
		Secret string
	}
	if code := tr.api(c.t, "POST", "/admin/tokens", c.secret, map[string]any{"user": u.ID, "label": "agent"}, &tk); code != http.StatusCreated {
		c.t.Fatalf("create token: HTTP %d", code)
	}
	return userToken{userID: u.ID, tokenID: tk.Token.ID, secret: tk.Secret}
}

// browser pairs a fake extension through a launch secret of user u on tr,
// opens its tools, and waits until tr serves it on the bus.
func (c *cluster) browser(ctx context.Context, tr *testReplica, u userToken, name string) (*linktest.Device, *linktest.Client, *browserlinktest.Provider) {
	c.t.Helper()
	var otp struct{ Secret string }
	if code := tr.api(c.t, "POST", "/v1/otp", u.secret, nil, &otp); code != http.StatusCreated {
		c.t.Fatalf("otp: HTTP %d", code)
	}
	tools := []map[string]any{
		{"name": "echo", "description": "Echo.", "inputSchema": browserlinktest.Schema(nil), "annotations": map[string]any{"readOnlyHint": true}},
	}
	p := browserlinktest.New(serverID, tools, func(_ context.Context, tool string, args json.RawMessage) (any, error) {
		if tool == "echo" {
			return browserlinktest.TextResult(name + ":" + string(args)), nil
		}
		return nil, wire.Errorf(wire.CodeInvalidParams, "unknown tool %s", tool)
	})
	d, err := linktest.NewDevice(name)
	if err != nil {
		c.t.Fatal(err)
	}
	cl, err := linktest.PairAndConnect(ctx, tr.ws(), d, linktest.PairOptions{OTP: otp.Secret}, &linktest.Options{Handler: p.Handle})
	if err != nil {
		c.t.Fatalf("pair %s: %v", name, err)
	}
	c.t.Cleanup(func() { cl.Close() })
	if err := cl.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}, nil); err != nil {
		c.t.Fatalf("initialize: %v", err)
	}
	if err := cl.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{
		map[string]any{"type": "acp", "name": "torii", "id": serverID}}}, nil); err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	if _, err := p.WaitFor(browserlink.MethodList, 10*time.Second); err != nil {
		c.t.Fatal(err)
	}
	for {
		select {
		case id := <-c.homes:
			if id == d.ID {
				return d, cl, p
			}
		case <-ctx.Done():
			c.t.Fatalf("browser %s never served", name)
		}
	}
}

type bearer struct{ tok string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.tok)
	return http.DefaultTransport.RoundTrip(r)
}

// agent connects a real go-sdk MCP client to tr's /mcp with a user token.
func agent(ctx context.Context, t *testing.T, tr *testReplica, secret, query string) *mcp.ClientSession {
	t.Helper()
	cl := mcp.NewClient(&mcp.Implementation{Name: "agent", Version: "0"}, nil)
	s, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: tr.base + "/mcp" + query,
		HTTPClient: &http.Client{Transport: bearer{secret}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("agent connect: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func textOf(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// An agent on replica B reaches its user's browser homed on replica A;
// another user's token naming that browser gets the refusal a missing
// browser gets (SECURITY I-93); the call's audit record is in the store
// (SECURITY I-95). Drain closes the browser's link with 1012 (SECURITY I-96).
func TestCallCrossesReplicasAndUsersStayApart(t *testing.T) {
	t.Parallel()
	ctx := tctx(t)
	c := newCluster(t)
	a, b := c.start("a"), c.start("b")
	u, v := c.user(a, "ursula"), c.user(b, "victor")
	dev, link, _ := c.browser(ctx, a, u, "laptop")

	res, err := agent(ctx, t, b, u.secret, "").CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"x": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError || !strings.Contains(textOf(res), `laptop:{"x":1}`) {
		t.Fatalf("U's call via B: %+v %q", res, textOf(res))
	}
	// The named browser, by ID, for its own user.
	res, err = agent(ctx, t, b, u.secret, "?browser="+dev.ID).CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if err != nil || res.IsError {
		t.Fatalf("U naming its browser: %v %q", err, textOf(res))
	}

	refusal := func(secret, browser string) (toolerr.Code, string) {
		t.Helper()
		res, err := agent(ctx, t, b, secret, "?browser="+browser).CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		if err != nil {
			t.Fatal(err)
		}
		e := toolerr.FromResult(res)
		if !res.IsError || e == nil {
			t.Fatalf("want a refusal, got %q", textOf(res))
		}
		return e.Code, strings.ReplaceAll(textOf(res), browser, "NAME")
	}
	otherCode, otherText := refusal(v.secret, dev.ID)
	missCode, missText := refusal(v.secret, "0123456789abcdef0123456789abcdef")
	if otherCode != missCode || otherText != missText {
		t.Fatalf("another user's browser is told apart from a missing one:\n%s %q\n%s %q", otherCode, otherText, missCode, missText)
	}
	// V without a browser named: none of V's is connected, U's is not used.
	res, _ = agent(ctx, t, b, v.secret, "").CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
	if !res.IsError || strings.Contains(textOf(res), "laptop") {
		t.Fatalf("V reached U's browser: %q", textOf(res))
	}

	var page struct {
		Records []struct {
			Tool, UserID, DeviceID, Replica string
		}
	}
	if code := b.api(t, "GET", "/admin/audit?user="+u.userID, c.secret, nil, &page); code != http.StatusOK {
		t.Fatalf("audit: HTTP %d", code)
	}
	if len(page.Records) < 2 || page.Records[0].DeviceID != dev.ID || page.Records[0].Replica != "a" {
		t.Fatalf("audit records: %+v", page.Records)
	}

	a.stop()
	code, err := link.WaitClosed(ctx)
	if err != nil || code != websocket.StatusServiceRestart {
		t.Fatalf("drain closed the link with %d (%v), want 1012", code, err)
	}
}

// /readyz is false while Postgres is down and true again after it returns.
func TestReadyzFollowsTheStore(t *testing.T) {
	t.Parallel()
	c := newCluster(t)
	a := c.start("a")
	ready := func() (int, Health) {
		resp, err := http.Get(a.base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h Health
		_ = json.NewDecoder(resp.Body).Decode(&h)
		return resp.StatusCode, h
	}
	if code, h := ready(); code != http.StatusOK || !h.OK {
		t.Fatalf("readyz at start: %d %+v", code, h)
	}
	c.pg.Stop()
	if code, h := ready(); code != http.StatusServiceUnavailable || h.Store == "ok" || h.Bus != "ok" {
		t.Fatalf("readyz with Postgres stopped: %d %+v", code, h)
	}
	if resp, err := http.Get(a.base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz with Postgres stopped: %v %v", resp, err)
	}
	c.pg.Start(t)
	// The pool reconnects on the next request: each probe is one, as a
	// kubelet's would be.
	deadline := time.Now().Add(20 * time.Second)
	for {
		code, h := ready()
		if code == http.StatusOK && h.OK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("readyz after Postgres restarted: %d %+v", code, h)
		}
		<-time.After(100 * time.Millisecond) // a probe's period, not a wait for state
	}
}
