package daemon

import (
	"context"
	"net"
	"testing"

	"github.com/torii-browser/torii/internal/osproc"
)

// SECURITY I-49: the HTTP budget stays below the fd limit and under a fixed
// cap, so a flood of held connections cannot grow what the runtime keeps.
func TestConnectionBudgetIsCapped(t *testing.T) {
	t.Parallel()
	tcp, ctl := connBudgets()
	limit := osproc.FDLimit()
	if limit == 0 {
		limit = 1024
	}
	if tcp > maxTCPConns || tcp+ctl >= limit {
		t.Fatalf("budgets %d + %d against fd limit %d and cap %d", tcp, ctl, limit, maxTCPConns)
	}
}

// At the cap the oldest idle connection goes, passing over busy and
// upgraded ones however old they are.
func TestBudgetEvictsOldestIdleFirst(t *testing.T) {
	t.Parallel()
	l := newBudgetListener(nil, 3, 3)
	var mine []net.Conn
	admit := func() *budgetConn {
		a, b := net.Pipe()
		mine = append(mine, b)
		t.Cleanup(func() { a.Close(); b.Close() })
		bc := l.admit(a)
		if bc == nil {
			t.Fatal("refused")
		}
		return bc
	}
	busy, upgraded, idle := admit(), admit(), admit()
	done := serving(context.WithValue(context.Background(), budgetConnKey{}, busy))
	defer done()
	l.mu.Lock()
	upgraded.hijacked = true
	l.mu.Unlock()
	admit()
	if l.Open() != 3 {
		t.Fatalf("open %d, want 3", l.Open())
	}
	if _, err := idle.Write([]byte("x")); err == nil {
		t.Fatal("the oldest idle connection was not closed")
	}
	for _, c := range []*budgetConn{busy, upgraded} {
		l.mu.Lock()
		kept := c.elem != nil
		l.mu.Unlock()
		if !kept {
			t.Fatal("a busy or upgraded connection was evicted")
		}
	}
}
