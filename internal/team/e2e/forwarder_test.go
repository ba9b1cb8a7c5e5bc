package e2e_test

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// forwarder stands in for a Kubernetes Service in front of the replicas:
// each accepted connection goes to the next replica, round robin, skipping
// those that refuse it. It remembers which replica each live connection
// reached, so a test can tell a browser's home replica from outside.
type forwarder struct {
	ln       net.Listener
	backends func() []string // the replicas' addresses, index = replica number
	mu       sync.Mutex
	next     int
	live     map[*fwdConn]struct{}
	conns    chan int // the replica each newly forwarded connection reached
	// firstDone is closed when the first connection forwarded has ended:
	// `torii launch --server`'s request for a one-time secret, which must
	// not be taken for the browser's link.
	firstDone chan struct{}
	seen      int
}

type fwdConn struct{ backend int }

func newForwarder(t *testing.T, start int, backends func() []string) *forwarder {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &forwarder{ln: ln, backends: backends, next: start, live: map[*fwdConn]struct{}{}, conns: make(chan int, 256),
		firstDone: make(chan struct{})}
	go f.serve()
	t.Cleanup(func() { ln.Close() })
	return f
}

func (f *forwarder) Addr() string { return f.ln.Addr().String() }

func (f *forwarder) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		go f.forward(c)
	}
}

func (f *forwarder) forward(c net.Conn) {
	defer c.Close()
	addrs := f.backends()
	f.mu.Lock()
	from := f.next
	f.next = (f.next + 1) % len(addrs)
	f.mu.Unlock()
	var up net.Conn
	idx := -1
	for i := range addrs {
		j := (from + i) % len(addrs)
		u, err := net.DialTimeout("tcp", addrs[j], time.Second)
		if err == nil {
			up, idx = u, j
			break
		}
	}
	if up == nil {
		return // no replica accepts: the client sees the connection close, as with a Service with no endpoints
	}
	defer up.Close()
	fc := &fwdConn{backend: idx}
	f.mu.Lock()
	f.live[fc] = struct{}{}
	f.seen++
	first := f.seen == 1
	f.mu.Unlock()
	select {
	case f.conns <- idx:
	default:
	}
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(up, c); closeWrite(up); done <- struct{}{} }()
	go func() { _, _ = io.Copy(c, up); closeWrite(c); done <- struct{}{} }()
	<-done
	// One side ended: a replica that died or a browser that left ends both.
	c.Close()
	up.Close()
	<-done
	f.mu.Lock()
	delete(f.live, fc)
	f.mu.Unlock()
	if first {
		close(f.firstDone)
	}
}

func closeWrite(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
}

// homes lists the replicas that hold a live connection now.
func (f *forwarder) homes() map[int]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := map[int]int{}
	for c := range f.live {
		m[c.backend]++
	}
	return m
}
