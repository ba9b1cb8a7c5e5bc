package daemon

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"testing"

	"github.com/torii-browser/torii/internal/link/linktest"
)

func bearer(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }

func httpGet(t *testing.T, url string, hdr http.Header, host string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range hdr {
		req.Header[k] = v
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func upgradeHeaders(origin string) http.Header {
	h := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	if origin != "" {
		h.Set("Origin", origin)
	}
	return h
}

func TestHTTPChecksBeforeUpgrade(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, func(o *Options) { o.Config.TokenOrigins = []string{"https://panel.example"} })
	base := "http://" + td.addr
	for name, tc := range map[string]struct {
		hdr  http.Header
		host string
		want int
	}{
		"plain GET":                {nil, "", 426},
		"plain GET from extension": {http.Header{"Origin": {linktest.ExtensionOrigin}}, "", 426},
		"foreign origin":           {upgradeHeaders("https://evil.example"), "", 403},
		"other extension":          {upgradeHeaders("chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), "", 403},
		"rebinding host":           {upgradeHeaders(""), "evil.example:7317", 403},
		"rebinding host on plain":  {nil, "evil.example", 403},
		"token origin, no token":   {upgradeHeaders("https://panel.example"), "", 401},
		"wrong bearer":             {func() http.Header { h := upgradeHeaders(""); h.Set("Authorization", "Bearer torii_nope"); return h }(), "", 401},
		"wrong subprotocol token": {func() http.Header {
			h := upgradeHeaders("")
			h.Set("Sec-Websocket-Protocol", "openab.bearer.nope, acp.v1")
			return h
		}(), "", 401},
		"malformed authorization": {func() http.Header { h := upgradeHeaders(""); h.Set("Authorization", "Basic eDp5"); return h }(), "", 401},
	} {
		t.Run(name, func(t *testing.T) {
			if resp := httpGet(t, base+"/acp", tc.hdr, tc.host); resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.want)
			}
		})
	}
	// Localhost names pass the Host check.
	for _, h := range []string{"localhost:1", "127.0.0.1", "[::1]:9"} {
		if resp := httpGet(t, base+"/acp", nil, h); resp.StatusCode != 426 {
			t.Fatalf("host %s: %d", h, resp.StatusCode)
		}
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	resp, err := http.Get("http://" + td.addr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h HealthResult
	if err := json.NewDecoder(resp.Body).Decode(&h); err != nil || !h.OK || h.Version != "test" || h.DaemonID == "" || h.ExtensionConnected {
		t.Fatalf("healthz: %+v %v", h, err)
	}
	_, c := td.otpPairedDevice(tctx(t), "health")
	defer c.Close()
	resp2, _ := http.Get("http://" + td.addr + "/healthz")
	json.NewDecoder(resp2.Body).Decode(&h)
	resp2.Body.Close()
	if !h.ExtensionConnected {
		t.Fatal("healthz does not see the connected extension")
	}
	if r := httpGet(t, "http://"+td.addr+"/healthz", nil, "rebind.example"); r.StatusCode != 403 {
		t.Fatalf("healthz with foreign host: %d", r.StatusCode)
	}
}

func TestTokenClients(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, func(o *Options) { o.Config.TokenOrigins = []string{"https://panel.example"} })
	ctx := tctx(t)
	var tok TokensCreateResult
	td.call("tokens.create", map[string]string{"label": "side panel"}, &tok)
	if tok.ID == "" || tok.Token == "" {
		t.Fatalf("tokens.create: %+v", tok)
	}
	// Header form, non-browser client.
	c1, err := linktest.Dial(ctx, td.url, &linktest.Options{NoOrigin: true, Header: bearer(tok.Token)})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	acpHandshake(t, ctx, c1)
	// Subprotocol form from a browser origin: acp.v1 is echoed, never the token.
	c2, err := linktest.Dial(ctx, td.url, &linktest.Options{Origin: "https://panel.example",
		Subprotocols: []string{"openab.bearer." + tok.Token, "acp.v1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got := c2.WS.Subprotocol(); got != "acp.v1" {
		t.Fatalf("echoed subprotocol %q", got)
	}
	acpHandshake(t, ctx, c2)
	// Wrong token in either form: 401.
	if _, err := linktest.Dial(ctx, td.url, &linktest.Options{NoOrigin: true, Header: bearer(tok.Token + "x")}); linktest.StatusOf(err) != 401 {
		t.Fatalf("wrong bearer: %v", err)
	}
	if _, err := linktest.Dial(ctx, td.url, &linktest.Options{Origin: "https://panel.example",
		Subprotocols: []string{"openab.bearer.wrong", "acp.v1"}}); linktest.StatusOf(err) != 401 {
		t.Fatalf("wrong subprotocol token: %v", err)
	}
	var list TokensListResult
	td.call("tokens.list", nil, &list)
	if len(list.Tokens) != 1 || list.Tokens[0].Label != "side panel" {
		t.Fatalf("tokens.list: %+v", list)
	}
	var st StatusResult
	td.call("status", nil, &st)
	kinds := map[string]int{}
	for _, ci := range st.Connections {
		kinds[string(ci.Kind)]++
	}
	if kinds["token"] != 2 || st.ExtensionConnected {
		t.Fatalf("status connections: %+v", st.Connections)
	}
	// Revoking the token closes its live connections and refuses new ones.
	td.call("tokens.revoke", map[string]string{"id": tok.ID}, nil)
	if code, _ := c1.WaitClosed(ctx); code != 1008 {
		t.Fatalf("revoked token connection: close %v", code)
	}
	if _, err := linktest.Dial(ctx, td.url, &linktest.Options{NoOrigin: true, Header: bearer(tok.Token)}); linktest.StatusOf(err) != 401 {
		t.Fatalf("revoked token: %v", err)
	}
	if err := td.ctl.Call(ctx, "tokens.revoke", map[string]string{"id": tok.ID}, nil); rpcCode(err) == 0 {
		t.Fatal("revoking an unknown token succeeded")
	}
}

func TestControlSocketIsPrivate(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	fi, err := os.Stat(td.opts.Paths.Socket())
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("control socket mode %v", fi.Mode().Perm())
	}
	di, _ := os.Stat(td.opts.Paths.StateDir)
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("state dir mode %v", di.Mode().Perm())
	}
	if err := td.ctl.Call(tctx(t), "nosuch", nil, nil); rpcCode(err) != -32601 {
		t.Fatalf("unknown control method: %v", err)
	}
	if err := td.ctl.Call(tctx(t), "pair.decide", map[string]any{"requestId": "x"}, nil); rpcCode(err) != -32602 {
		t.Fatalf("pair.decide without approve: %v", err)
	}
}
