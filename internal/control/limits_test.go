package control

import (
	"context"
	"errors"
	"io"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

func startLimited(t *testing.T, h Handler, l Limits) string {
	t.Helper()
	path := filepath.Join(socketDir(t), "run", "torii.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := NewServer(h, nil)
	s.SetLimits(l)
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done; s.Close() })
	return path
}

// A client that trickles an endless line is dropped once the line has
// taken longer than the line deadline; an idle connection between lines
// is not.
func TestEndlessSlowLineIsDropped(t *testing.T) {
	t.Parallel()
	path := startLimited(t, echo, Limits{LineTimeout: 300 * time.Millisecond})
	idle, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		c.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"x":"`))
		for {
			// The trickle is what is tested: a byte every 20 ms keeps the
			// connection busy but never ends the line.
			time.Sleep(20 * time.Millisecond)
			if _, err := c.Write([]byte("a")); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	c.SetReadDeadline(start.Add(5 * time.Second))
	_, err = io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("a trickled endless line still holds the connection after 5 s")
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Fatalf("dropped after %s", el)
	}
	// The idle connection (no line started) still works.
	idle.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}` + "\n"))
	idle.SetReadDeadline(time.Now().Add(3 * time.Second))
	buf := make([]byte, 256)
	n, err := idle.Read(buf)
	if err != nil || !strings.Contains(string(buf[:n]), `"id":2`) {
		t.Fatalf("idle connection: %q %v", buf[:n], err)
	}
}

// An endless line sent fast hits MaxLine: an error, then the connection
// is dropped.
func TestEndlessFastLineIsRefused(t *testing.T) {
	t.Parallel()
	path := startLimited(t, echo, Limits{})
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() {
		chunk := []byte(strings.Repeat("x", 64<<10))
		for {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if !strings.Contains(string(b), "request too large") {
		t.Fatalf("no refusal: %q %v", b, err)
	}
}

// failingListener fails its first n accepts as a process out of file
// descriptors would.
type failingListener struct {
	net.Listener
	left atomic.Int32
}

func (f *failingListener) Accept() (net.Conn, error) {
	if f.left.Add(-1) >= 0 {
		return nil, &net.OpError{Op: "accept", Net: "unix", Err: syscall.EMFILE}
	}
	return f.Listener.Accept()
}

// An accept error is retried with back-off, never the end of Serve.
func TestAcceptErrorsAreSurvived(t *testing.T) {
	t.Parallel()
	path := filepath.Join(socketDir(t), "run", "torii.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	fl := &failingListener{Listener: ln}
	fl.left.Store(8)
	ctx, cancel := context.WithCancel(context.Background())
	s := NewServer(echo, nil)
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, fl) }()
	defer func() { cancel(); <-served; s.Close() }()
	cl, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
	defer ccancel()
	var out map[string]any
	if err := cl.Call(cctx, "echo", map[string]int{"a": 1}, &out); err != nil {
		t.Fatalf("call after 8 failed accepts: %v", err)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned: %v", err)
	default:
	}
}

// Past MaxConns a newcomer is closed at once; the others keep working.
func TestControlConnectionCap(t *testing.T) {
	t.Parallel()
	path := startLimited(t, echo, Limits{MaxConns: 4})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var held []*Client
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := 0; i < 4; i++ {
		c, err := Dial(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Call(ctx, "echo", map[string]int{}, nil); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	extra, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	if err := extra.Call(ctx, "echo", map[string]int{}, nil); err == nil {
		t.Fatal("a fifth connection was served")
	}
	if err := held[0].Call(ctx, "echo", map[string]int{}, nil); err != nil {
		t.Fatalf("a held connection after the refusal: %v", err)
	}
}
