package control

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/torii-browser/torii/internal/osproc"
	"github.com/torii-browser/torii/internal/wire"
)

// ErrDaemonNotRunning means no daemon answers on the control socket.
var ErrDaemonNotRunning = errors.New("torii daemon is not running; start it with `torii serve`")

// Client is a control-socket connection. Calls may run concurrently.
type Client struct {
	conn net.Conn
	peer *wire.Peer
}

// DialSocket connects to one of the daemon's unix sockets (control or MCP);
// no listener there is ErrDaemonNotRunning.
func DialSocket(ctx context.Context, socketPath string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socketPath)
	if err != nil {
		if osproc.NoListener(err) {
			return nil, fmt.Errorf("%w (no listener at %s)", ErrDaemonNotRunning, socketPath)
		}
		return nil, fmt.Errorf("dial %s: %w", socketPath, err)
	}
	return c, nil
}

// Answers reports whether a daemon listens on socketPath, waiting at most
// a second for it.
func Answers(socketPath string) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	c, err := DialSocket(ctx, socketPath)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// Dial connects to the daemon's control socket.
func Dial(ctx context.Context, socketPath string) (*Client, error) {
	c, err := DialSocket(ctx, socketPath)
	if err != nil {
		return nil, err
	}
	// The daemon sends nothing but answers; a line it garbles is dropped.
	cl := &Client{conn: c, peer: wire.NewPeer(wire.NewLineFramer(c, c, MaxLine), wire.Options{QuietBadFrames: true})}
	go cl.peer.Run(context.Background())
	return cl, nil
}

// Call sends method with params and decodes the result into result (may be
// nil). An error the daemon answered is returned as *wire.Error; a
// closed or broken connection gives wire.ErrClosed.
func (c *Client) Call(ctx context.Context, method string, params, result any) error {
	p, err := c.peer.Start(ctx, nil, method, params)
	if err != nil {
		return err
	}
	if err := p.Wait(ctx, result); err != nil {
		var rpcErr *wire.Error
		if errors.As(err, &rpcErr) || errors.Is(err, wire.ErrClosed) || ctx.Err() != nil {
			return err
		}
		return fmt.Errorf("control: decode %s result: %w", method, err)
	}
	return nil
}

// Close closes the connection.
func (c *Client) Close() error {
	err := c.conn.Close()
	<-c.peer.Done()
	return err
}
