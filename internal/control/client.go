package control

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/torii-browser/torii/internal/jsonrpc"
)

// ErrDaemonNotRunning means no daemon answers on the control socket.
var ErrDaemonNotRunning = errors.New("torii daemon is not running; start it with `torii serve`")

// ErrClosed is returned by calls on a closed or broken client.
var ErrClosed = errors.New("control: connection closed")

// Client is a control-socket connection. Calls may run concurrently.
type Client struct {
	conn net.Conn
	next atomic.Int64

	wmu     sync.Mutex
	mu      sync.Mutex
	pending map[string]chan *jsonrpc.Message
	err     error
	done    chan struct{}
}

// Dial connects to the daemon's control socket.
func Dial(ctx context.Context, socketPath string) (*Client, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socketPath)
	if err != nil {
		if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED) {
			return nil, fmt.Errorf("%w (no listener at %s)", ErrDaemonNotRunning, socketPath)
		}
		return nil, fmt.Errorf("control: dial: %w", err)
	}
	cl := &Client{conn: c, pending: map[string]chan *jsonrpc.Message{}, done: make(chan struct{})}
	go cl.readLoop()
	return cl, nil
}

func (c *Client) readLoop() {
	r := bufio.NewReaderSize(c.conn, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(r, MaxLine)
		if err != nil {
			break
		}
		msg, rpcErr := jsonrpc.Decode(line)
		if rpcErr != nil || !msg.IsResponse() {
			continue
		}
		c.mu.Lock()
		ch := c.pending[string(msg.ID)]
		delete(c.pending, string(msg.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- msg
		}
	}
	c.mu.Lock()
	c.err = fmt.Errorf("%w: %v", ErrClosed, err)
	c.mu.Unlock()
	close(c.done)
}

// Call sends method with params and decodes the result into result (may be
// nil). An error the daemon answered is returned as *jsonrpc.Error.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	id := jsonrpc.IntID(c.next.Add(1))
	req, err := jsonrpc.NewRequest(id, method, params)
	if err != nil {
		return fmt.Errorf("control: encode params: %w", err)
	}
	b, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ch := make(chan *jsonrpc.Message, 1)
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return c.err
	}
	c.pending[string(id)] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, string(id))
		c.mu.Unlock()
	}()
	c.wmu.Lock()
	_, err = c.conn.Write(append(b, '\n'))
	c.wmu.Unlock()
	if f, _ := ctx.Value(sentKey{}).(func()); f != nil {
		f()
	}
	if err != nil {
		return fmt.Errorf("%w: %v", ErrClosed, err)
	}
	var msg *jsonrpc.Message
	select {
	case msg = <-ch:
	case <-c.done:
		// The reply may have arrived just before the connection closed
		// (e.g. `shutdown`): prefer it.
		select {
		case msg = <-ch:
		default:
			c.mu.Lock()
			defer c.mu.Unlock()
			return c.err
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	if msg.Error != nil {
		return msg.Error
	}
	if result != nil {
		if err := json.Unmarshal(msg.Result, result); err != nil {
			return fmt.Errorf("control: decode %s result: %w", method, err)
		}
	}
	return nil
}

type sentKey struct{}

// WithSent returns ctx carrying f, which Call runs once its request has been
// written to the socket (or the write failed), before the answer: `torii mcp`
// uses it to keep a session's calls in arrival order without serialising them.
func WithSent(ctx context.Context, f func()) context.Context {
	return context.WithValue(ctx, sentKey{}, f)
}

// Close closes the connection.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.done
	return err
}
