// Package mcpbridgetest is a fake MCP-over-ACP provider for tests: what the
// extension's tool server does on the link (extension/src/mcp/provider.ts),
// in Go, plugged into linktest.Options.Handler. It records every frame it
// receives so tests can assert the wire (mcp/connect field names, mcp/cancel
// request ids, mcp/disconnect).
package mcpbridgetest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/link/linktest"
	jsonrpc "github.com/torii-browser/torii/internal/wire"
)

// Event is one frame the provider received.
type Event struct {
	Method string          // mcp/connect, mcp/message, mcp/cancel, mcp/disconnect
	Inner  string          // the inner MCP method of an mcp/message
	ID     json.RawMessage // outer id (nil for a notification)
	Params json.RawMessage
}

// CallFunc runs one tools/call. ctx ends on mcp/cancel naming the call, or
// on mcp/disconnect, or when the link ends.
type CallFunc func(ctx context.Context, name string, args json.RawMessage) (any, error)

// Provider serves one declared server.
type Provider struct {
	ServerID string
	Tools    []map[string]any
	Call     CallFunc
	// FailInitialize answers the inner initialize with an error.
	FailInitialize bool

	mu       sync.Mutex
	conns    map[string]bool
	inflight map[string]context.CancelFunc // by outer id
	// early holds mcp/cancel ids that overtook their call: requests and
	// notifications are handled on separate goroutines.
	early  map[string]bool
	next   int
	events chan Event
}

// New returns a provider serving tools with call.
func New(serverID string, tools []map[string]any, call CallFunc) *Provider {
	return &Provider{ServerID: serverID, Tools: tools, Call: call, conns: map[string]bool{},
		inflight: map[string]context.CancelFunc{}, early: map[string]bool{}, events: make(chan Event, 4096)}
}

// Events delivers every received frame in order of arrival.
func (p *Provider) Events() <-chan Event { return p.events }

// WaitFor returns the next event with the given method (and inner method,
// if not empty), skipping others, or an error after d.
func (p *Provider) WaitFor(method, inner string, d time.Duration) (Event, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case e := <-p.events:
			if e.Method == method && (inner == "" || e.Inner == inner) {
				return e, nil
			}
		case <-t.C:
			return Event{}, fmt.Errorf("mcpbridgetest: no %s %s within %s", method, inner, d)
		}
	}
}

// WaitForCall returns the next tools/call of the named tool, skipping other
// events (an earlier call of another tool still queued among them).
func (p *Provider) WaitForCall(name string, d time.Duration) (Event, error) {
	end := time.Now().Add(d)
	for {
		e, err := p.WaitFor("mcp/message", "tools/call", time.Until(end))
		if err != nil {
			return e, err
		}
		var m struct {
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(e.Params, &m) == nil && m.Params.Name == name {
			return e, nil
		}
	}
}

// Inflight is the number of tools/call running now.
func (p *Provider) Inflight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.inflight)
}

func key(raw json.RawMessage) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	return fmt.Sprint(v)
}

func (p *Provider) record(e Event) {
	select {
	case p.events <- e:
	default:
	}
}

// Handle is a linktest.Options.Handler.
func (p *Provider) Handle(ctx context.Context, method string, params json.RawMessage) (any, error) {
	id := linktest.RequestID(ctx)
	switch method {
	case "mcp/connect":
		p.record(Event{Method: method, ID: id, Params: params})
		var c struct {
			AcpID    *string `json:"acpId"`
			ServerID *string `json:"serverId"`
		}
		_ = json.Unmarshal(params, &c)
		named := ""
		if c.ServerID != nil {
			named = *c.ServerID
		} else if c.AcpID != nil {
			named = *c.AcpID
		}
		if named != p.ServerID {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "mcp/connect: unknown MCP server %q", named)
		}
		p.mu.Lock()
		p.next++
		cid := fmt.Sprintf("c%d", p.next)
		p.conns[cid] = true
		p.mu.Unlock()
		return map[string]string{"connectionId": cid}, nil
	case "mcp/disconnect":
		p.record(Event{Method: method, ID: id, Params: params})
		var c struct {
			ConnectionID string `json:"connectionId"`
		}
		_ = json.Unmarshal(params, &c)
		p.mu.Lock()
		delete(p.conns, c.ConnectionID)
		p.mu.Unlock()
		return struct{}{}, nil
	case "mcp/cancel":
		p.record(Event{Method: method, ID: id, Params: params})
		var c struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		_ = json.Unmarshal(params, &c)
		p.mu.Lock()
		cancel := p.inflight[key(c.RequestID)]
		if cancel == nil && len(p.early) < 1024 {
			p.early[key(c.RequestID)] = true
		}
		p.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return nil, nil
	case "mcp/message":
		return p.message(ctx, id, params)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "mcpbridgetest: no method %s", method)
}

func (p *Provider) message(ctx context.Context, id json.RawMessage, params json.RawMessage) (any, error) {
	var m struct {
		ConnectionID string          `json:"connectionId"`
		Method       string          `json:"method"`
		Params       json.RawMessage `json:"params"`
		ID           json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(params, &m); err != nil {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "mcp/message: %v", err)
	}
	p.record(Event{Method: "mcp/message", Inner: m.Method, ID: id, Params: params})
	if len(m.ID) > 0 {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidRequest, "mcp/message: the inner message must not carry an id")
	}
	p.mu.Lock()
	live := p.conns[m.ConnectionID]
	p.mu.Unlock()
	if !live {
		return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "mcp/message: unknown connectionId %q", m.ConnectionID)
	}
	if id == nil {
		return nil, nil // inner notification
	}
	switch m.Method {
	case "initialize":
		if p.FailInitialize {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInternalError, "initialize failed on purpose")
		}
		return map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
			"serverInfo": map[string]string{"name": "fake-extension", "version": "0"}}, nil
	case "tools/list":
		return map[string]any{"tools": p.Tools}, nil
	case "tools/call":
		var c struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		if err := json.Unmarshal(m.Params, &c); err != nil {
			return nil, jsonrpc.Errorf(jsonrpc.CodeInvalidParams, "tools/call: %v", err)
		}
		cctx, cancel := context.WithCancel(ctx)
		k := key(id)
		p.mu.Lock()
		p.inflight[k] = cancel
		if p.early[k] {
			delete(p.early, k)
			cancel()
		}
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.inflight, k)
			p.mu.Unlock()
			cancel()
		}()
		return p.Call(cctx, c.Name, c.Arguments)
	}
	return nil, jsonrpc.Errorf(jsonrpc.CodeMethodNotFound, "method not found: %s", m.Method)
}

// TextResult is a successful CallToolResult with one text block.
func TextResult(text string) map[string]any {
	return map[string]any{"content": []any{map[string]any{"type": "text", "text": text}}}
}

// ErrorResult is the extension's isError result for a code.
func ErrorResult(code, message, hint string) map[string]any {
	return map[string]any{
		"content":           []any{map[string]any{"type": "text", "text": code + ": " + message + "\nhint: " + hint}},
		"structuredContent": map[string]any{"error": map[string]any{"code": code, "message": message, "hint": hint}},
		"isError":           true,
	}
}

// Schema is an object input schema with the given properties.
func Schema(props map[string]any) map[string]any {
	return map[string]any{"type": "object", "properties": props}
}
