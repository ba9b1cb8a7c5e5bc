package broker

import (
	"context"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/toolerr"
)

// Arrival is a call's place in the order its connection read it, stamped
// when the message was read: the connection reads on at once, and the
// call takes its place in the queue only after the call read before it
// took (or gave up) its own (SECURITY I-25). The stamp also orders the
// queue, so across connections calls are served in the order they were
// read.
type Arrival struct {
	seq    uint64
	prev   <-chan struct{} // the previous call's placed; nil for the first
	placed chan struct{}
	once   sync.Once
}

// Order is one connection's arrival order.
type Order struct {
	mu   sync.Mutex
	last chan struct{}
}

// Arrive stamps the next call read on o. It never blocks.
func (b *Broker) Arrive(o *Order) *Arrival {
	a := &Arrival{seq: b.stamp.Add(1), placed: make(chan struct{})}
	o.mu.Lock()
	a.prev, o.last = o.last, a.placed
	o.mu.Unlock()
	return a
}

// Placed says the call holds its place in the queue, or never will (it
// was refused, answered or cancelled before): the next call may take its
// own. Idempotent; a nil Arrival is a no-op.
func (a *Arrival) Placed() {
	if a != nil {
		a.once.Do(func() { close(a.placed) })
	}
}

// turn waits until the call read before a holds its place: ctx ending is
// a cancel, the call's deadline (less minRun) is busy, as a wait in the
// queue would be; nothing was sent either way.
func turn(ctx context.Context, a *Arrival, tool string, deadline time.Time) *toolerr.Error {
	if a == nil || a.prev == nil {
		return nil
	}
	select {
	case <-a.prev:
		return nil
	default:
	}
	if testHookTurnWait != nil {
		testHookTurnWait(a)
	}
	t := time.NewTimer(time.Until(deadline.Add(-minRun)))
	defer t.Stop()
	select {
	case <-a.prev:
		return nil
	case <-ctx.Done():
		return toolerr.New(toolerr.Cancelled, "%s was cancelled while queued; nothing was sent", tool)
	case <-t.C:
		return &toolerr.Error{Code: toolerr.Busy,
			Message: tool + " waited all of its deadline behind the call read before it on its connection, without being sent; nothing was sent",
			Hint:    "Retry once the calls ahead of it have answered; nothing was sent."}
	}
}

// testHookTurnWait, if set, runs when a call starts waiting for its turn.
var testHookTurnWait func(*Arrival)
