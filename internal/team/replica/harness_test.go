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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/team/teamtest"
	"github.com/torii-browser/torii/internal/wire"
)

const serverID = "0b6f5c6e-2d0b-4f36-9a43-2f3f2d6f7f11"

// cluster is the engines and shared files replicas of one test use.
type cluster struct {
	t        testing.TB
	pg, nats *teamtest.Server
	dir      string
	secret   string
	homes    chan string // device IDs a replica started serving
	public   string      // team.publicURL of the replicas started next
}

func newCluster(t testing.TB) *cluster {
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

// storeURL is the team store the replicas share.
func (c *cluster) storeURL() string {
	if os.Getenv("TORII_TEST_SQLITE") != "" {
		return "sqlite:" + filepath.Join(c.dir, "team.db")
	}
	return c.pg.URL
}

func (c *cluster) start(name string) *testReplica {
	c.t.Helper()
	return c.startWith(name, nil)
}

// startWith starts a replica whose options mod changed first (nil: none).
func (c *cluster) startWith(name string, mod func(*Options)) *testReplica {
	c.t.Helper()
	team := config.Team{Store: c.storeURL(), Bus: c.nats.URL, Replica: name, PublicURL: c.public,
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
	if mod != nil {
		mod(&opts)
	}
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
func (tr *testReplica) api(t testing.TB, method, path, token string, body, out any) int {
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
		{"name": "slow", "description": "Until cancelled.", "inputSchema": browserlinktest.Schema(nil)},
	}
	p := browserlinktest.New(serverID, tools, func(ctx context.Context, tool string, args json.RawMessage) (any, error) {
		switch tool {
		case "echo":
			return browserlinktest.TextResult(name + ":" + string(args)), nil
		case "slow":
			<-ctx.Done()
			return browserlinktest.ErrorResult("cancelled", "cancelled", "The call was cancelled."), nil
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
func agent(ctx context.Context, t testing.TB, tr *testReplica, secret, query string) *mcp.ClientSession {
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

func tctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// revokeMidCall starts a slow call on s, revokes u's token through via's
// admin API once the browser has the call, and checks that the browser is
// told to cancel it within 2 s and that the agent gets an error.
func revokeMidCall(ctx context.Context, t *testing.T, c *cluster, via *testReplica, s *mcp.ClientSession, p *browserlinktest.Provider, u userToken) {
	t.Helper()
	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, _ := s.CallTool(ctx, &mcp.CallToolParams{Name: "slow"})
		done <- res
	}()
	if _, err := p.WaitForCall("slow", 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if code := via.api(t, "DELETE", "/admin/tokens/"+u.tokenID, c.secret, nil, nil); code/100 != 2 {
		t.Fatalf("revoke: HTTP %d", code)
	}
	if _, err := p.WaitFor(browserlink.MethodCancel, 2*time.Second); err != nil {
		t.Fatalf("the revoked token's call was not cancelled in the browser: %v", err)
	}
	if res := <-done; res == nil || !res.IsError {
		t.Fatalf("revoked call's result: %+v", res)
	}
}
