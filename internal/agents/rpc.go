package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/torii-browser/torii/internal/wire"
)

// MaxLine bounds one newline-delimited JSON-RPC message from an agent. A
// longer line is a protocol violation: the connection ends (the stream
// cannot be resynchronised mid-line) and the agent is reported crashed.
const MaxLine = 8 << 20

// maxAgentRequests bounds the agent's requests (session/request_permission)
// handled at once; the reader blocks beyond it, which pushes back on the
// agent through the pipe.
const maxAgentRequests = 8

// ErrClosed is returned by Call once the agent's stdout has ended.
var ErrClosed = errors.New("agents: connection to the agent closed")

// rpcConn is ACP's stdio transport from the client side: newline-delimited
// JSON-RPC 2.0 over the shared peer.
//
// Why not acp-go-sdk's Connection here: it queues inbound notifications in
// a 1,024-slot channel and closes the whole connection when that overflows,
// so an agent that floods session/update would look crashed. The peer
// handles notifications inline instead: a slow consumer blocks the read,
// the OS pipe fills, and the agent's own writes block — memory stays
// bounded by MaxLine plus the session's update buffer. The scripted test
// agent uses the SDK's typed agent side, so the wire is checked against it.
type rpcConn struct {
	peer *wire.Peer
	ctx  context.Context // ends when the agent's stdout has
}

func newRPCConn(r io.Reader, w io.Writer, log *slog.Logger,
	notify func(string, json.RawMessage),
	handle func(context.Context, string, json.RawMessage) (any, *wire.Error)) *rpcConn {
	ctx, cancel := context.WithCancel(context.Background())
	peer := wire.NewPeer(wire.NewLineFramer(r, w, MaxLine), wire.Options{
		StringIDs:      true,
		MaxInFlight:    maxAgentRequests,
		QuietBadFrames: true, // an agent's garbled line is dropped, not argued with
		Handle: func(ctx context.Context, m *wire.Message) (any, error) {
			res, e := handle(ctx, m.Method, m.Params)
			if e != nil {
				return nil, e
			}
			return res, nil
		},
		Notify: func(_ context.Context, m *wire.Message) { notify(m.Method, m.Params) },
	})
	c := &rpcConn{peer: peer, ctx: ctx}
	go func() {
		err := peer.Run(ctx)
		if errors.Is(err, wire.ErrLineTooLong) {
			log.Warn("agents: a line from the agent is over the limit; connection ended", "limit", MaxLine)
		}
		cancel()
	}()
	return c
}

// Done is closed when the agent's stdout has ended.
func (c *rpcConn) Done() <-chan struct{} { return c.peer.Done() }

// Call sends a request and waits for the answer; a JSON-RPC error comes
// back as *wire.Error. result may be nil or *json.RawMessage.
func (c *rpcConn) Call(ctx context.Context, method string, params, result any) error {
	err := c.peer.Call(ctx, method, params, result)
	if errors.Is(err, wire.ErrClosed) {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	return err
}

// Notify sends a notification.
func (c *rpcConn) Notify(method string, params any) error {
	select {
	case <-c.peer.Done():
		return ErrClosed
	default:
	}
	return c.peer.Notify(c.ctx, method, params)
}
