package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/gateway"
	"github.com/torii-browser/torii/internal/wire"
)

// fc is a foreign ACP client (a Katashiro-style panel) on a real socket.
// Unlike linktest it handles notifications in order, as a panel must.
type fc struct {
	t    *testing.T
	ws   *websocket.Conn
	resp *http.Response
	peer *wire.Peer

	mu       sync.Mutex
	updates  []update
	statuses []gateway.StatusParams
	frames   int
	changed  chan struct{}
	// onRequest answers the daemon's requests (permission, mcp/*).
	onRequest func(method string, params json.RawMessage) (any, error)
}

type update struct {
	SessionID string `json:"sessionId"`
	Update    struct {
		SessionUpdate string `json:"sessionUpdate"`
		Content       struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"update"`
}

func dial(t *testing.T, url, token string, subprotocol bool) *fc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	opts := &websocket.DialOptions{}
	if subprotocol {
		opts.Subprotocols = []string{"openab.bearer." + token, "acp.v1"}
	} else {
		opts.HTTPHeader = http.Header{"Authorization": {"Bearer " + token}}
	}
	ws, resp, err := websocket.Dial(ctx, url, opts)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	ws.SetReadLimit(-1)
	c := &fc{t: t, ws: ws, resp: resp, changed: make(chan struct{}, 1)}
	c.peer = wire.NewPeer(fcFramer{ws}, wire.Options{QuietBadFrames: true,
		Log: func(dir string, _ []byte) {
			if dir == "in" {
				c.mu.Lock()
				c.frames++
				c.mu.Unlock()
			}
		},
		Notify: c.onNotify, Handle: c.request})
	go func() {
		err := c.peer.Run(context.Background())
		t.Logf("client read ended: %v", err)
	}()
	t.Cleanup(func() { c.close() })
	return c
}

type fcFramer struct{ ws *websocket.Conn }

func (f fcFramer) ReadFrame() ([]byte, error) {
	_, data, err := f.ws.Read(context.Background())
	return data, err
}

func (f fcFramer) WriteFrame(ctx context.Context, b []byte) error {
	return f.ws.Write(ctx, websocket.MessageText, b)
}

func (c *fc) close() {
	_ = c.ws.Close(websocket.StatusNormalClosure, "")
	<-c.peer.Done()
}

func (c *fc) onNotify(_ context.Context, msg *wire.Message) {
	switch msg.Method {
	case "session/update":
		var u update
		_ = json.Unmarshal(msg.Params, &u)
		c.mu.Lock()
		c.updates = append(c.updates, u)
		c.mu.Unlock()
		c.poke()
	case "torii/agent_status":
		var s gateway.StatusParams
		_ = json.Unmarshal(msg.Params, &s)
		c.mu.Lock()
		c.statuses = append(c.statuses, s)
		c.mu.Unlock()
		c.poke()
	}
}

func (c *fc) request(_ context.Context, msg *wire.Message) (any, error) {
	c.mu.Lock()
	h := c.onRequest
	c.mu.Unlock()
	if h == nil {
		return nil, wire.Errorf(wire.CodeMethodNotFound, "no method %s", msg.Method)
	}
	return h(msg.Method, msg.Params)
}

func (c *fc) poke() {
	select {
	case c.changed <- struct{}{}:
	default:
	}
}

func (c *fc) handle(h func(method string, params json.RawMessage) (any, error)) {
	c.mu.Lock()
	c.onRequest = h
	c.mu.Unlock()
}

func (c *fc) call(ctx context.Context, method string, params, result any) error {
	return c.peer.Call(ctx, method, params, result)
}

func (c *fc) mustCall(method string, params, result any) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.call(ctx, method, params, result); err != nil {
		c.t.Fatalf("%s: %v", method, err)
	}
}

func (c *fc) notify(method string, params any) {
	if err := c.peer.Notify(context.Background(), method, params); err != nil {
		c.t.Fatalf("notify %s: %v", method, err)
	}
}

// text is the concatenated agent_message_chunk text of a session.
func (c *fc) text(sid string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for _, u := range c.updates {
		if u.SessionID == sid && u.Update.SessionUpdate == "agent_message_chunk" {
			b.WriteString(u.Update.Content.Text)
		}
	}
	return b.String()
}

func (c *fc) kinds(sid string) map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	m := map[string]int{}
	for _, u := range c.updates {
		if u.SessionID == sid {
			m[u.Update.SessionUpdate]++
		}
	}
	return m
}

func (c *fc) waitFor(what string, d time.Duration, ok func() bool) {
	c.t.Helper()
	// Every update and status the client receives pokes changed, so each
	// re-check follows an event.
	deadline := time.After(d)
	for !ok() {
		select {
		case <-c.changed:
		case <-deadline:
			c.t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// waitState re-reads the daemon's state until ok holds. The daemon
// publishes no event for what the callers read (registered and noted
// servers, browsers serving, the catalogue), so this is the one place a
// test re-reads on a clock; every caller waits for a positive state.
func waitState(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		<-tick.C
	}
}

func (c *fc) waitText(sid, sub string) {
	c.t.Helper()
	c.waitFor(fmt.Sprintf("text %q (have %q)", sub, c.text(sid)), 20*time.Second, func() bool { return strings.Contains(c.text(sid), sub) })
}

func (c *fc) waitStatus(sid, status string) gateway.StatusParams {
	c.t.Helper()
	var got gateway.StatusParams
	c.waitFor("status "+status, 20*time.Second, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for _, s := range c.statuses {
			if s.SessionID == sid && s.Status == status {
				got = s
				return true
			}
		}
		return false
	})
	return got
}

// lastStatus is the latest torii/agent_status received for the session.
func (c *fc) lastStatus(sid string) gateway.StatusParams {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := len(c.statuses) - 1; i >= 0; i-- {
		if c.statuses[i].SessionID == sid {
			return c.statuses[i]
		}
	}
	return gateway.StatusParams{}
}

// --- a fake MCP-over-ACP provider serving several declared servers -------

type fakeServer struct {
	name, id       string
	tools          []map[string]any
	failInitialize bool
	// never: the daemon must not connect to it (it is not allowed).
	never bool
}

type provEvent struct {
	method, inner, server, connID, tool string
}

type provider struct {
	mu      sync.Mutex
	servers map[string]*fakeServer // by declared id
	conns   map[string]*fakeServer // by connectionId
	n       int
	events  chan provEvent
	// touched names the never-servers the daemon connected to.
	touched []string
}

func newProvider(servers ...*fakeServer) *provider {
	p := &provider{servers: map[string]*fakeServer{}, conns: map[string]*fakeServer{}, events: make(chan provEvent, 1024)}
	for _, s := range servers {
		p.servers[s.id] = s
	}
	return p
}

func (p *provider) record(e provEvent) {
	select {
	case p.events <- e:
	default:
	}
}

func schema() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}
}

func (p *provider) handle(method string, params json.RawMessage) (any, error) {
	switch method {
	case "mcp/connect":
		var c struct {
			AcpID    *string `json:"acpId"`
			ServerID *string `json:"serverId"`
		}
		_ = json.Unmarshal(params, &c)
		id, gen := "", ""
		if c.AcpID != nil {
			id, gen = *c.AcpID, "A"
		}
		if c.ServerID != nil {
			id, gen = *c.ServerID, "B"
		}
		p.mu.Lock()
		s := p.servers[id]
		if s == nil {
			p.mu.Unlock()
			return nil, wire.Errorf(wire.CodeInvalidParams, "unknown server %q", id)
		}
		if s.never {
			p.touched = append(p.touched, s.name)
		}
		p.n++
		cid := fmt.Sprintf("conn-%s-%d", s.name, p.n)
		p.conns[cid] = s
		p.mu.Unlock()
		p.record(provEvent{method: method, server: s.name, connID: cid, inner: gen})
		return map[string]string{"connectionId": cid}, nil
	case "mcp/disconnect":
		var c struct {
			ConnectionID string `json:"connectionId"`
		}
		_ = json.Unmarshal(params, &c)
		p.mu.Lock()
		s := p.conns[c.ConnectionID]
		delete(p.conns, c.ConnectionID)
		p.mu.Unlock()
		name := ""
		if s != nil {
			name = s.name
		}
		p.record(provEvent{method: method, server: name, connID: c.ConnectionID})
		return struct{}{}, nil
	case "mcp/message":
		var m struct {
			ConnectionID string          `json:"connectionId"`
			Method       string          `json:"method"`
			Params       json.RawMessage `json:"params"`
		}
		_ = json.Unmarshal(params, &m)
		p.mu.Lock()
		s := p.conns[m.ConnectionID]
		p.mu.Unlock()
		if s == nil {
			return nil, wire.Errorf(wire.CodeInvalidParams, "unknown connection")
		}
		var named struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(m.Params, &named)
		p.record(provEvent{method: method, inner: m.Method, server: s.name, connID: m.ConnectionID, tool: named.Name})
		switch m.Method {
		case "initialize":
			if s.failInitialize {
				return nil, wire.Errorf(wire.CodeInternalError, "initialize failed on purpose")
			}
			return map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]string{"name": s.name, "version": "0"}}, nil
		case "tools/list":
			return map[string]any{"tools": s.tools}, nil
		case "tools/call":
			var c struct {
				Name      string         `json:"name"`
				Arguments map[string]any `json:"arguments"`
			}
			_ = json.Unmarshal(m.Params, &c)
			return map[string]any{"content": []any{map[string]any{"type": "text",
				"text": fmt.Sprintf("%s %s: %v", s.name, c.Name, c.Arguments["text"])}}}, nil
		}
		return struct{}{}, nil // notifications/initialized and others
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "no method %s", method)
}

// waitEvent returns the next event matching, or fails after d.
func (p *provider) waitEvent(t *testing.T, d time.Duration, match func(provEvent) bool) provEvent {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case e := <-p.events:
			if match(e) {
				return e
			}
		case <-deadline:
			t.Fatal("provider: expected event never came")
			return provEvent{}
		}
	}
}

// waitEventBefore is waitEvent that fails when an event matching forbid
// comes first: the daemon's messages to one server arrive in order, so a
// later expected event is the proof an earlier one was never sent.
func (p *provider) waitEventBefore(t *testing.T, d time.Duration, match, forbid func(provEvent) bool) provEvent {
	t.Helper()
	return p.waitEvent(t, d, func(e provEvent) bool {
		if forbid(e) {
			t.Fatalf("provider: unexpected event %+v", e)
		}
		return match(e)
	})
}

// untouched fails if the daemon connected to a never-server.
func (p *provider) untouched(t *testing.T) {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.touched) > 0 {
		t.Fatalf("the daemon connected to servers it must not: %v", p.touched)
	}
}
