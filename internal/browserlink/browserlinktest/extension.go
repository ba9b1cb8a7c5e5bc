// Package browserlinktest is a fake extension for tests: what the
// extension's worker does on the link for the browser-tool leg
// (extension/src/background/tools.ts), in Go, plugged into
// linktest.Options.Handler. It records every frame it receives so tests can
// assert the wire (call ids, cancels, deadlines).
package browserlinktest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/wire"
)

// Event is one frame the fake received.
type Event struct {
	Method string          // a browserlink.Method*
	ID     json.RawMessage // nil for a notification
	Params json.RawMessage
}

// CallFunc runs one tool call. ctx ends on the call's cancel or when the
// link ends; the fake leaves the deadline to the daemon's side (the worker's
// side of it is tested against testdata/link).
type CallFunc func(ctx context.Context, name string, args json.RawMessage) (any, error)

// Provider serves one extension's tools.
type Provider struct {
	ServerID string
	Tools    []map[string]any
	Call     CallFunc
	// FailList refuses torii/tools/list (an extension that cannot serve).
	FailList bool

	mu       sync.Mutex
	inflight map[string]context.CancelFunc // by callId
	// early holds cancels that overtook their call: requests and
	// notifications are handled on separate goroutines.
	early  map[string]bool
	events chan Event
}

// New returns a fake serving tools with call. serverID is the id it
// declares in session/new.
func New(serverID string, tools []map[string]any, call CallFunc) *Provider {
	return &Provider{ServerID: serverID, Tools: tools, Call: call,
		inflight: map[string]context.CancelFunc{}, early: map[string]bool{}, events: make(chan Event, 4096)}
}

// Events delivers every received frame in order of arrival.
func (p *Provider) Events() <-chan Event { return p.events }

// WaitFor returns the next event with the given method, skipping others,
// or an error after d.
func (p *Provider) WaitFor(method string, d time.Duration) (Event, error) {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case e := <-p.events:
			if e.Method == method {
				return e, nil
			}
		case <-t.C:
			return Event{}, fmt.Errorf("browserlinktest: no %s within %s", method, d)
		}
	}
}

// WaitForCall returns the next call of the named tool, skipping other events.
func (p *Provider) WaitForCall(name string, d time.Duration) (Event, error) {
	end := time.Now().Add(d)
	for {
		e, err := p.WaitFor(browserlink.MethodCall, time.Until(end))
		if err != nil {
			return e, err
		}
		var c browserlink.CallParams
		if json.Unmarshal(e.Params, &c) == nil && c.Tool == name {
			return e, nil
		}
	}
}

// SetTools changes the catalogue the next torii/tools/list returns.
func (p *Provider) SetTools(tools []map[string]any) {
	p.mu.Lock()
	p.Tools = tools
	p.mu.Unlock()
}

// Inflight is the number of calls running now.
func (p *Provider) Inflight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.inflight)
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
	p.record(Event{Method: method, ID: id, Params: params})
	switch method {
	case browserlink.MethodList:
		if p.FailList {
			return nil, wire.Errorf(wire.CodeInternalError, "%s failed on purpose", method)
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		return map[string]any{"tools": p.Tools}, nil
	case browserlink.MethodCancel:
		var c browserlink.CancelParams
		_ = json.Unmarshal(params, &c)
		p.mu.Lock()
		cancel := p.inflight[c.CallID]
		if cancel == nil && len(p.early) < 1024 {
			p.early[c.CallID] = true
		}
		p.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return nil, nil
	case browserlink.MethodSessionEnded:
		return nil, nil
	case browserlink.MethodCall:
		var c browserlink.CallParams
		if err := json.Unmarshal(params, &c); err != nil || c.CallID == "" || c.Deadline <= 0 {
			return nil, wire.Errorf(wire.CodeInvalidParams, "%s: callId, tool and deadline are required", method)
		}
		cctx, cancel := context.WithCancel(ctx)
		p.mu.Lock()
		p.inflight[c.CallID] = cancel
		if p.early[c.CallID] {
			delete(p.early, c.CallID)
			cancel()
		}
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.inflight, c.CallID)
			p.mu.Unlock()
			cancel()
		}()
		return p.Call(cctx, c.Tool, c.Arguments)
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "browserlinktest: no method %s", method)
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
