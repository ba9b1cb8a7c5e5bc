package agents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/torii-browser/torii/internal/jsonrpc"
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
// JSON-RPC 2.0.
//
// Why not acp-go-sdk's Connection here: it queues inbound notifications in
// a 1,024-slot channel and closes the whole connection when that overflows,
// so an agent that floods session/update would look crashed. This reader
// handles notifications inline instead: a slow consumer blocks the read,
// the OS pipe fills, and the agent's own writes block — memory stays
// bounded by MaxLine plus the session's update buffer. The scripted test
// agent uses the SDK's typed agent side, so the wire is checked against it.
type rpcConn struct {
	w      io.Writer
	wmu    sync.Mutex
	log    *slog.Logger
	next   atomic.Int64
	notify func(method string, params json.RawMessage)
	handle func(ctx context.Context, method string, params json.RawMessage) (any, *jsonrpc.Error)

	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Message
	err     error
}

func newRPCConn(r io.Reader, w io.Writer, log *slog.Logger,
	notify func(string, json.RawMessage),
	handle func(context.Context, string, json.RawMessage) (any, *jsonrpc.Error)) *rpcConn {
	ctx, cancel := context.WithCancel(context.Background())
	c := &rpcConn{w: w, log: log, notify: notify, handle: handle, ctx: ctx, cancel: cancel,
		pending: map[string]chan *jsonrpc.Message{}}
	go c.readLoop(r)
	return c
}

// Done is closed when the agent's stdout has ended.
func (c *rpcConn) Done() <-chan struct{} { return c.ctx.Done() }

func (c *rpcConn) readLoop(r io.Reader) {
	br := bufio.NewReaderSize(r, 64<<10)
	sem := make(chan struct{}, maxAgentRequests)
	var cause error
	for {
		line, err := readLine(br)
		if err != nil {
			cause = err
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		msg, rpcErr := jsonrpc.Decode(line)
		if rpcErr != nil {
			c.log.Debug("agents: bad line from agent", "err", rpcErr)
			continue
		}
		switch {
		case msg.Method == "":
			c.mu.Lock()
			ch := c.pending[string(msg.ID)]
			delete(c.pending, string(msg.ID))
			c.mu.Unlock()
			if ch != nil {
				ch <- msg
			}
		case !msg.HasID():
			c.notify(msg.Method, msg.Params)
		default:
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				res, e := c.handle(c.ctx, msg.Method, msg.Params)
				var out *jsonrpc.Message
				if e != nil {
					out = jsonrpc.NewErrorResponse(msg.ID, e)
				} else if out, err = jsonrpc.NewResult(msg.ID, res); err != nil {
					out = jsonrpc.NewErrorResponse(msg.ID, jsonrpc.Errorf(jsonrpc.CodeInternalError, "%v", err))
				}
				_ = c.write(out)
			}()
		}
	}
	c.mu.Lock()
	c.err = cause
	for _, ch := range c.pending {
		close(ch)
	}
	c.pending = nil
	c.mu.Unlock()
	c.cancel()
}

var errLineTooLong = fmt.Errorf("agents: a line from the agent is over %d bytes", MaxLine)

// readLine reads one line of at most MaxLine bytes.
func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxLine {
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}

func (c *rpcConn) write(m *jsonrpc.Message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.ctx.Err() != nil {
		return ErrClosed
	}
	_, err = c.w.Write(b)
	return err
}

// Call sends a request and waits for the answer; a JSON-RPC error comes
// back as *jsonrpc.Error. result may be nil or *json.RawMessage.
func (c *rpcConn) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc.RawID(strconv.FormatInt(c.next.Add(1), 10))
	req, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		return err
	}
	ch := make(chan *jsonrpc.Message, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		return ErrClosed
	}
	c.pending[string(id)] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.pending != nil {
			delete(c.pending, string(id))
		}
		c.mu.Unlock()
	}()
	if err := c.write(req); err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	select {
	case m, ok := <-ch:
		if !ok || m == nil {
			return ErrClosed
		}
		return m.DecodeResult(result)
	case <-ctx.Done():
		return ctx.Err()
	case <-c.ctx.Done():
		select {
		case m, ok := <-ch:
			if ok && m != nil {
				return m.DecodeResult(result)
			}
		default:
		}
		return ErrClosed
	}
}

// Notify sends a notification.
func (c *rpcConn) Notify(method string, params any) error {
	m, err := jsonrpc.NewRequest(nil, method, params)
	if err != nil {
		return err
	}
	return c.write(m)
}
