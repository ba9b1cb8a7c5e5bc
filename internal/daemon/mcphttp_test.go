package daemon

import (
	"net/http"
	"strings"
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

// Every 401 from /mcp carries a Bearer challenge, over a real socket: no
// token, a wrong one and a revoked one; an accepted request carries none.
// No resource_metadata: the daemon serves no such document.
func TestMCPUnauthorizedHasChallenge(t *testing.T) {
	td := startDaemon(t, nil)
	ctx := tctx(t)
	var good, gone TokensCreateResult
	td.call("tokens.create", map[string]string{"label": "good"}, &good)
	td.call("tokens.create", map[string]string{"label": "gone"}, &gone)
	td.call("tokens.revoke", map[string]string{"id": gone.ID}, nil)
	post := func(authz string) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+td.addr+"/mcp",
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}`))
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for name, tc := range map[string]struct{ authz, want string }{
		"no token":      {"", `Bearer realm="torii"`},
		"not bearer":    {"Basic eDp5", `Bearer realm="torii"`},
		"wrong token":   {"Bearer torii_nope", `Bearer realm="torii", error="invalid_token"`},
		"revoked token": {"Bearer " + gone.Token, `Bearer realm="torii", error="invalid_token"`},
	} {
		resp := post(tc.authz)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, resp.StatusCode)
		}
		if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", name, got, tc.want)
		}
	}
	resp := post("Bearer " + good.Token)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("good token: status %d", resp.StatusCode)
	}
	if got := resp.Header.Values("WWW-Authenticate"); len(got) != 0 {
		t.Errorf("good token: WWW-Authenticate %q, want none", got)
	}
}

// /acp follows the same rule as /mcp: every 401 carries a Bearer challenge,
// for a plain GET and for an upgrade, whichever way the token was shown.
func TestACPUnauthorizedHasChallenge(t *testing.T) {
	td := startDaemon(t, func(o *Options) { o.Config.TokenOrigins = []string{"https://panel.example"} })
	ctx := tctx(t)
	get := func(origin, authz, proto string, upgrade bool) *http.Response {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", "http://"+td.addr+"/acp", nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		if proto != "" {
			req.Header.Set("Sec-WebSocket-Protocol", proto)
		}
		if upgrade {
			req.Header.Set("Connection", "Upgrade")
			req.Header.Set("Upgrade", "websocket")
			req.Header.Set("Sec-WebSocket-Version", "13")
			req.Header.Set("Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	for name, tc := range map[string]struct {
		origin, authz, proto string
		upgrade              bool
		want                 string
	}{
		"token origin, no token":          {"https://panel.example", "", "", true, `Bearer realm="torii"`},
		"token origin, no token, no upgr": {"https://panel.example", "", "", false, `Bearer realm="torii"`},
		"wrong bearer header":             {"", "Bearer torii_nope", "", true, `Bearer realm="torii", error="invalid_token"`},
		"wrong bearer, plain GET":         {"", "Bearer torii_nope", "", false, `Bearer realm="torii", error="invalid_token"`},
		"wrong subprotocol token":         {"https://panel.example", "", "openab.bearer.torii_nope, acp.v1", true, `Bearer realm="torii", error="invalid_token"`},
	} {
		resp := get(tc.origin, tc.authz, tc.proto, tc.upgrade)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401", name, resp.StatusCode)
		}
		if got := resp.Header.Values("WWW-Authenticate"); len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: WWW-Authenticate %q, want %q", name, got, tc.want)
		}
	}
	// A refusal that is not about authentication carries none.
	if resp := get("https://evil.example", "", "", true); resp.StatusCode != http.StatusForbidden || resp.Header.Get("WWW-Authenticate") != "" {
		t.Errorf("foreign origin: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}
