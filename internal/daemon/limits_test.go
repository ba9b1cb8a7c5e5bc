package daemon

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/wire"
)

func nextError(t *testing.T, ctx context.Context, c *linktest.Client) *wire.Message {
	t.Helper()
	m, err := c.Next(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.Error == nil {
		t.Fatalf("expected an error reply, got %+v", m)
	}
	return m
}

func mustPing(t *testing.T, ctx context.Context, c *linktest.Client) {
	t.Helper()
	var p link.PingResult
	if err := c.Call(ctx, "torii/ping", struct{}{}, &p); err != nil || p.T == 0 {
		t.Fatalf("ping after bad input: %v", err)
	}
}

func TestFramingErrorsKeepTheConnection(t *testing.T) {
	td := startDaemon(t, nil)
	ctx := tctx(t)
	_, c := td.otpPairedDevice(ctx, "framing")

	c.SendRaw(ctx, []byte(`{"jsonrpc":"2.0","id":1,"method":`))
	if m := nextError(t, ctx, c); m.Error.Code != wire.CodeParseError || string(m.ID) != "null" {
		t.Fatalf("malformed JSON: %+v", m)
	}
	mustPing(t, ctx, c)

	c.SendRaw(ctx, []byte(`{"id":"a","method":"initialize"}`))
	if m := nextError(t, ctx, c); m.Error.Code != wire.CodeInvalidRequest || string(m.ID) != `"a"` {
		t.Fatalf("not JSON-RPC 2.0: %+v", m)
	}
	mustPing(t, ctx, c)

	if err := c.Call(ctx, "nosuch/method", struct{}{}, nil); rpcCode(err) != wire.CodeMethodNotFound {
		t.Fatalf("unknown method: %v", err)
	}
	if err := c.Call(ctx, "torii/nosuch", struct{}{}, nil); rpcCode(err) != wire.CodeMethodNotFound {
		t.Fatalf("unknown torii method: %v", err)
	}
	// Liveness probes of browser ACP clients are answered at once.
	if err := c.Call(ctx, "katashiro/ping", struct{}{}, nil); err != nil {
		t.Fatalf("<name>/ping: %v", err)
	}

	// A request over 1 MiB: error with its id, connection stays.
	big := `{"jsonrpc":"2.0","id":77,"method":"session/new","params":{"cwd":"` + strings.Repeat("x", link.MaxRequest) + `","mcpServers":[]}}`
	c.SendRaw(ctx, []byte(big))
	if m := nextError(t, ctx, c); m.Error.Code != wire.CodeInvalidRequest || string(m.ID) != "77" || !strings.Contains(m.Error.Message, "too large") {
		t.Fatalf("big request: %+v", m)
	}
	mustPing(t, ctx, c)

	// A response may be up to 8 MiB (screenshots): no error, connection stays.
	resp := `{"jsonrpc":"2.0","id":"nobody","result":{"data":"` + strings.Repeat("y", 3<<20) + `"}}`
	c.SendRaw(ctx, []byte(resp))
	mustPing(t, ctx, c)
	select {
	case <-c.Done():
		t.Fatal("connection closed by a 3 MiB response")
	default:
	}

	// Any frame over 8 MiB closes with 1009.
	huge := make([]byte, link.MaxFrame+1)
	for i := range huge {
		huge[i] = ' '
	}
	c.SendRaw(ctx, huge)
	if code, err := c.WaitClosed(ctx); err != nil || code != websocket.StatusMessageTooBig {
		t.Fatalf("8 MiB+1 frame: close %v (%v), want 1009", code, err)
	}
}

func TestOnlyHandshakeBeforeAuth(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	c, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, m := range []string{"initialize", "session/new", "mcp/connect", "nosuch"} {
		if err := c.Call(ctx, m, struct{}{}, nil); rpcCode(err) != wire.CodeNotAuthenticated {
			t.Fatalf("%s before auth: %v", m, err)
		}
	}
	mustPing(t, ctx, c)
	c.SendRaw(ctx, []byte(`not json`))
	if m := nextError(t, ctx, c); m.Error.Code != wire.CodeParseError {
		t.Fatalf("parse error before auth: %+v", m)
	}
	mustPing(t, ctx, c)
}

func TestUnauthenticatedConnectionCap(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	var conns []*linktest.Client
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	// The oldest first, the rest at once: every one must still be inside its
	// auth deadline when the newcomer comes, however slow the machine (the
	// deadline closing the oldest would free its slot instead of eviction).
	first, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatalf("connection 0: %v", err)
	}
	conns = append(conns, first)
	// Its arrival is counted when the daemon registers it, just after the
	// upgrade answer the client saw: a round trip proves it is registered.
	mustPing(t, ctx, first)
	rest := make([]*linktest.Client, link.MaxUnauthenticated-1)
	errs := make([]error, len(rest))
	var wg sync.WaitGroup
	for i := range rest {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rest[i], errs[i] = linktest.Dial(ctx, td.url, nil)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("connection %d: %v", i+1, err)
		}
		conns = append(conns, rest[i])
	}
	// The 33rd takes the slot of the oldest anonymous one, which is closed
	// with 1013, so the count stays at the cap.
	c33, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatalf("33rd unauthenticated connection: %v", err)
	}
	if code, err := conns[0].WaitClosed(ctx); err != nil || code != websocket.StatusTryAgainLater {
		t.Fatalf("oldest anonymous connection: close %v (%v), want 1013", code, err)
	}
	conns = append(conns[1:], c33)
	// Token clients are authenticated at the upgrade and not capped.
	var tok TokensCreateResult
	td.call("tokens.create", map[string]string{"label": "cap"}, &tok)
	tc, err := linktest.Dial(ctx, td.url, &linktest.Options{NoOrigin: true, Header: bearer(tok.Token)})
	if err != nil {
		t.Fatalf("token client at the cap: %v", err)
	}
	tc.Close()
}

func TestSessionNewValidation(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	_, c := td.otpPairedDevice(ctx, "acp")
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{}}, nil); rpcCode(err) != wire.CodeInvalidRequest {
		t.Fatalf("session/new before initialize: %v", err)
	}
	if err := c.Call(ctx, "initialize", map[string]any{}, nil); rpcCode(err) != wire.CodeInvalidParams {
		t.Fatalf("initialize without protocolVersion: %v", err)
	}
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}, nil); err != nil {
		t.Fatal(err)
	}
	srv := func(kv ...string) map[string]any {
		m := map[string]any{"type": "acp"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	many := []any{}
	for i := 0; i < 9; i++ {
		many = append(many, srv("name", "s", "id", strings.Repeat("a", i+1)))
	}
	for name, p := range map[string]any{
		"no cwd":          map[string]any{"mcpServers": []any{}},
		"no servers":      map[string]any{"cwd": "/"},
		"no id":           map[string]any{"cwd": "/", "mcpServers": []any{srv("name", "torii")}},
		"no name":         map[string]any{"cwd": "/", "mcpServers": []any{srv("id", "u1")}},
		"id and serverId": map[string]any{"cwd": "/", "mcpServers": []any{srv("name", "t", "id", "u", "serverId", "u")}},
		"duplicate":       map[string]any{"cwd": "/", "mcpServers": []any{srv("name", "a", "id", "u"), srv("name", "b", "serverId", "u")}},
		"nine servers":    map[string]any{"cwd": "/", "mcpServers": many},
	} {
		if err := c.Call(ctx, "session/new", p, nil); rpcCode(err) != wire.CodeInvalidParams {
			t.Fatalf("%s: %v", name, err)
		}
	}
	// Gen B serverId and a non-acp server alongside are accepted.
	var res json.RawMessage
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{
		srv("name", "torii", "serverId", "u2"),
		map[string]any{"name": "fs", "command": "/bin/true", "args": []string{}, "env": []any{}},
	}}, &res); err != nil || !strings.Contains(string(res), "sessionId") {
		t.Fatalf("gen B: %s %v", res, err)
	}
}
