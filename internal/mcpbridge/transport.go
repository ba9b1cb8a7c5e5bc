package mcpbridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/link"
	torpc "github.com/torii-browser/torii/internal/wire"
)

// Error codes the transport hands the SDK client for link failures. They
// never reach a wire: CallToolMeta turns them into typed tool errors.
const (
	codeBusy   = -32050 // the link's pending budget is full; nothing was sent
	codeClosed = -32051 // the link ended before the answer came
	// codeTooLarge: the link closed because a frame (this answer, most
	// likely) was over its cap.
	codeTooLarge = -32052
)

// tunnel is an mcp.Transport whose one connection carries each MCP message
// as MCP-over-ACP `mcp/message` on a link connection: a request becomes an
// outer request (the outer id correlates; the inner message has none), a
// notification an outer notification, and the SDK's notifications/cancelled
// becomes `mcp/cancel {requestId}` naming the outer id.
type tunnel struct {
	conn   Conn
	connID string
	ctx    context.Context // the bridge's: ends with the link or Close

	in   chan jsonrpc.Message
	eof  chan struct{} // closed once no answer can come any more
	stop sync.Once

	mu      sync.Mutex
	calls   map[string]*tunnelCall // by inner id
	closing bool                   // no call may start waiting any more
	wg      sync.WaitGroup         // calls whose answer is still to be delivered
}

type tunnelCall struct {
	outer  json.RawMessage
	cancel context.CancelFunc
}

var (
	_ mcp.Transport  = (*tunnel)(nil)
	_ mcp.Connection = (*tunnel)(nil)
)

func newTunnel(ctx context.Context, conn Conn, connID string) *tunnel {
	t := &tunnel{conn: conn, connID: connID, ctx: ctx, in: make(chan jsonrpc.Message, 16),
		eof: make(chan struct{}), calls: map[string]*tunnelCall{}}
	go func() {
		<-ctx.Done()
		// Every call still waiting now fails (the link is gone or the
		// bridge closed); their answers go in before the end of stream, so
		// each caller gets its own typed error rather than a generic one.
		t.mu.Lock()
		t.closing = true
		for _, c := range t.calls {
			c.cancel()
		}
		t.mu.Unlock()
		t.wg.Wait()
		t.stop.Do(func() { close(t.eof) })
	}()
	return t
}

// Connect is the mcp.Transport: the tunnel is its own single connection.
func (t *tunnel) Connect(context.Context) (mcp.Connection, error) { return t, nil }

// SessionID is empty: the connectionId is the session, and nothing else reads it.
func (t *tunnel) SessionID() string { return "" }

// Close ends the stream for the SDK (the bridge closes the MCP connection itself).
func (t *tunnel) Close() error {
	t.stop.Do(func() { close(t.eof) })
	return nil
}

// Read returns the next answer; answers already delivered come before the end.
func (t *tunnel) Read(ctx context.Context) (jsonrpc.Message, error) {
	select {
	case m := <-t.in:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.eof:
		select {
		case m := <-t.in:
			return m, nil
		default:
		}
		return nil, io.EOF
	}
}

// message is an mcp/message envelope.
type message struct {
	ConnectionID string `json:"connectionId"`
	Method       string `json:"method"`
	Params       any    `json:"params,omitempty"`
}

// Write sends one message. It fails only when the link is gone: the SDK
// closes the connection on a write error, so a refusal that concerns one
// call (the pending budget) comes back as that call's error answer.
func (t *tunnel) Write(ctx context.Context, msg jsonrpc.Message) error {
	switch m := msg.(type) {
	case *jsonrpc.Request:
		var params any
		if len(m.Params) > 0 {
			params = m.Params
		}
		if !m.ID.IsValid() {
			if m.Method == "notifications/cancelled" {
				t.cancelled(m.Params)
				return nil
			}
			return t.conn.Notify(ctx, "mcp/message", message{t.connID, m.Method, params})
		}
		return t.call(m, params)
	case *jsonrpc.Response:
		// The daemon serves nothing to the provider: no request of its can
		// be pending, so there is nothing to answer.
		return nil
	}
	return fmt.Errorf("mcpbridge: unexpected message %T", msg)
}

func idKey(id jsonrpc.ID) string { return fmt.Sprint(id.Raw()) }

// call starts the outer request now, so requests leave in the order the
// SDK wrote them, and waits for its answer on a goroutine.
func (t *tunnel) call(m *jsonrpc.Request, params any) error {
	if t.ctx.Err() != nil {
		t.answer(m.ID, nil, &jsonrpc.Error{Code: codeClosed, Message: "the link is closed"})
		return nil
	}
	cctx, cancel := context.WithCancel(t.ctx)
	p, err := t.conn.Start(cctx, nil, "mcp/message", message{t.connID, m.Method, params})
	if err != nil {
		cancel()
		code := int64(codeClosed)
		if errors.Is(err, torpc.ErrBusy) {
			code = codeBusy
		}
		t.answer(m.ID, nil, &jsonrpc.Error{Code: code, Message: err.Error()})
		return nil
	}
	k := idKey(m.ID)
	t.mu.Lock()
	if t.closing {
		t.mu.Unlock()
		cancel()
		t.answer(m.ID, nil, &jsonrpc.Error{Code: codeClosed, Message: "the link is closed"})
		return nil
	}
	t.calls[k] = &tunnelCall{outer: p.ID(), cancel: cancel}
	t.wg.Add(1)
	t.mu.Unlock()
	go func() {
		defer t.wg.Done()
		defer cancel()
		var raw json.RawMessage
		err := p.Wait(cctx, &raw)
		t.mu.Lock()
		_, live := t.calls[k]
		delete(t.calls, k)
		t.mu.Unlock()
		var rpcErr *torpc.Error
		switch {
		case err == nil:
			t.answer(m.ID, raw, nil)
		case errors.As(err, &rpcErr):
			// An inner MCP error is the outer JSON-RPC error.
			we := &jsonrpc.Error{Code: int64(rpcErr.Code), Message: rpcErr.Message}
			if d, ok := rpcErr.Data.(json.RawMessage); ok {
				we.Data = d
			}
			t.answer(m.ID, nil, we)
		case !live:
			// The SDK cancelled it and no longer waits.
		case errors.Is(err, link.ErrFrameTooLarge):
			t.answer(m.ID, nil, &jsonrpc.Error{Code: codeTooLarge, Message: err.Error()})
		default:
			t.answer(m.ID, nil, &jsonrpc.Error{Code: codeClosed, Message: err.Error()})
		}
	}()
	return nil
}

func (t *tunnel) answer(id jsonrpc.ID, result json.RawMessage, e *jsonrpc.Error) {
	r := &jsonrpc.Response{ID: id, Result: result}
	if e != nil {
		r.Error = e
	}
	select {
	case t.in <- r:
	case <-t.eof:
	}
}

// cancelled turns the SDK's notifications/cancelled into mcp/cancel naming
// the outer id, and stops waiting for that call.
func (t *tunnel) cancelled(raw json.RawMessage) {
	var p mcp.CancelledParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return
	}
	id, err := jsonrpc.MakeID(p.RequestID)
	if err != nil {
		return
	}
	k := idKey(id)
	t.mu.Lock()
	c := t.calls[k]
	delete(t.calls, k)
	t.mu.Unlock()
	if c == nil {
		return
	}
	c.cancel()
	if t.conn.Context().Err() != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(t.ctx), controlTimeout)
	defer cancel()
	_ = t.conn.Notify(ctx, "mcp/cancel", struct {
		RequestID    json.RawMessage `json:"requestId"`
		ConnectionID string          `json:"connectionId"`
	}{c.outer, t.connID})
}
