package daemon

import (
	"container/list"
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"sync"

	"github.com/torii-browser/torii/internal/osproc"
)

// fdReserve is what the connection budgets leave of the process's file
// descriptor limit for everything else: state files, the audit database,
// agents' pipes, a browser being launched.
const fdReserve = 256

// maxTCPConns caps the HTTP listener's connections whatever the fd limit.
// Legitimate use is far below it (one extension per browser, at most 256
// authenticated and 128 unauthenticated link connections, a few agents'
// /mcp streams). What a flood of held connections leaves behind after it
// ends scales with this cap, not with the flood: every connection open at
// once costs ~25 KB while it lasts (buffers, goroutine stack), and the Go
// runtime keeps span, stack and poller structures sized by that peak. At
// 2,048 a held-connection flood left the daemon ~5 MB larger than idle, at
// 512 under 1 MB (SECURITY I-49).
const maxTCPConns = 512

// connBudgets splits the file-descriptor limit between the HTTP listener
// and the control socket (SECURITY I-49): both stay below it, so a flood of
// connections is refused or evicted by the daemon before accept can fail.
func connBudgets() (tcp, control int) {
	limit := 1024 // where the limit is unknown (or, on Windows, does not exist)
	if l := osproc.FDLimit(); l > 0 {
		limit = min(l, 1<<20)
	}
	reserve := min(fdReserve, limit/4)
	budget := limit - reserve
	control = max(8, min(256, budget/8))
	return max(16, min(maxTCPConns, budget-control)), control
}

// budgetListener caps the open TCP connections, in total and per source
// address. At a cap the oldest connection that is not serving a request (one
// that has sent nothing yet, or an idle keep-alive connection) is closed to
// make room, so idle connections can never keep a newcomer out; when every
// connection is busy the newcomer is closed instead. Upgraded WebSocket
// connections count against the budget until they close, and are governed by
// the link's own limits.
//
// On loopback every local process shares one source address, so the
// per-source cap only matters on a non-loopback bind; there the eviction
// rule is what keeps a flood from shutting others out.
type budgetListener struct {
	net.Listener
	max, perSource int

	mu       sync.Mutex
	order    list.List // of *budgetConn, oldest first: eviction walks it from the front
	bySource map[string]int
}

func newBudgetListener(ln net.Listener, maxConns, perSource int) *budgetListener {
	return &budgetListener{Listener: ln, max: maxConns, perSource: perSource, bySource: map[string]int{}}
}

type budgetConn struct {
	net.Conn
	l        *budgetListener
	elem     *list.Element // in l.order; nil once forgotten (guarded by l.mu)
	source   string
	active   int  // requests in a handler (guarded by l.mu)
	hijacked bool // upgraded to a WebSocket (guarded by l.mu)
	once     sync.Once
}

func (c *budgetConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c) })
	return err
}

// Accept returns the next connection within the budget. Accept errors are
// returned as they are: http.Server retries temporary ones (EMFILE) with
// back-off.
func (l *budgetListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if bc := l.admit(c); bc != nil {
			return bc, nil
		}
		_ = c.Close()
	}
}

func (l *budgetListener) admit(c net.Conn) *budgetConn {
	source := ""
	if a, ok := c.RemoteAddr().(*net.TCPAddr); ok {
		source = a.IP.String()
	}
	l.mu.Lock()
	var evict []*budgetConn
	if l.perSource > 0 && l.bySource[source] >= l.perSource {
		v := l.oldestIdle(func(o *budgetConn) bool { return o.source == source })
		if v == nil {
			l.mu.Unlock()
			return nil
		}
		evict = append(evict, v)
	}
	if l.order.Len()-len(evict) >= l.max {
		v := l.oldestIdle(func(o *budgetConn) bool { return len(evict) == 0 || o != evict[0] })
		if v == nil {
			l.mu.Unlock()
			return nil
		}
		evict = append(evict, v)
	}
	for _, v := range evict {
		l.forget(v)
	}
	bc := &budgetConn{Conn: c, l: l, source: source}
	bc.elem = l.order.PushBack(bc)
	l.bySource[source]++
	l.mu.Unlock()
	for _, v := range evict {
		_ = v.Close()
	}
	return bc
}

// oldestIdle is the longest-open connection whose request, if any, has not
// reached a handler: one still sending its headers (however slowly) counts
// as idle. Under l.mu. The walk passes over busy and upgraded connections
// only, which the link's own caps keep to a few hundred.
func (l *budgetListener) oldestIdle(match func(*budgetConn) bool) *budgetConn {
	for e := l.order.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*budgetConn); c.active == 0 && !c.hijacked && match(c) {
			return c
		}
	}
	return nil
}

// forget removes c from the counts (under l.mu); its Close is then a no-op
// for the budget.
func (l *budgetListener) forget(c *budgetConn) {
	if c.elem == nil {
		return
	}
	l.order.Remove(c.elem)
	c.elem = nil
	if l.bySource[c.source]--; l.bySource[c.source] <= 0 {
		delete(l.bySource, c.source)
	}
}

func (l *budgetListener) release(c *budgetConn) {
	l.mu.Lock()
	l.forget(c)
	l.mu.Unlock()
}

// connState is the http.Server ConnState hook: an upgraded connection is
// the link's to govern and is never evicted.
func (l *budgetListener) connState(c net.Conn, st http.ConnState) {
	if st != http.StateHijacked {
		return
	}
	if bc := asBudgetConn(c); bc != nil {
		l.mu.Lock()
		bc.hijacked = true
		l.mu.Unlock()
	}
}

func asBudgetConn(c net.Conn) *budgetConn {
	if tc, ok := c.(*tls.Conn); ok {
		c = tc.NetConn()
	}
	bc, _ := c.(*budgetConn)
	return bc
}

type budgetConnKey struct{}

// connContext is the http.Server ConnContext hook: handlers find their
// connection, so the guard can mark it busy while a request is served.
func connContext(ctx context.Context, c net.Conn) context.Context {
	if bc := asBudgetConn(c); bc != nil {
		return context.WithValue(ctx, budgetConnKey{}, bc)
	}
	return ctx
}

// serving marks the request's connection busy until the returned func runs.
func serving(ctx context.Context) func() {
	bc, _ := ctx.Value(budgetConnKey{}).(*budgetConn)
	if bc == nil {
		return func() {}
	}
	bc.l.mu.Lock()
	bc.active++
	bc.l.mu.Unlock()
	return func() {
		bc.l.mu.Lock()
		bc.active--
		bc.l.mu.Unlock()
	}
}

// Open is the number of connections counted now.
func (l *budgetListener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}
