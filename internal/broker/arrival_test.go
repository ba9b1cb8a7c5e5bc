package broker

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/toolerr"
)

// Calls stamped in the order they were read are queued and run in that
// order even when their handlers reach the broker in the opposite one: each
// later call is held until the one read before it has its place.
func TestArrivalOrderWhenCallsRace(t *testing.T) {
	b, f := setup(t, config.Broker{MaxInFlight: 8})
	waiting := make(chan *Arrival, 8)
	testHookTurnWait = func(a *Arrival) { waiting <- a }
	t.Cleanup(func() { testHookTurnWait = nil })
	s := b.NewSession("one", KindStdio)
	var o Order
	arr := make([]*Arrival, 4)
	for i := range arr {
		arr[i] = b.Arrive(&o)
	}
	var wg sync.WaitGroup
	// The last read reaches the broker first; each waits for its turn
	// before the one read before it is let in.
	for i := len(arr) - 1; i >= 0; i-- {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.CallTool(context.Background(), Call{Name: "work", Arguments: args(i), Owner: s, Arrival: arr[i]})
		}()
		if i > 0 {
			select {
			case got := <-waiting:
				if got != arr[i] {
					t.Fatalf("call %d did not wait for its turn", i)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("call %d never waited for the call read before it", i)
			}
		}
	}
	for range arr {
		f.gate <- struct{}{}
	}
	wg.Wait()
	for i, got := range f.started {
		if want := fmt.Sprintf("one:work:%d", i); got != want {
			t.Fatalf("run %d: %s, want %s (all %v)", i, got, want, f.started)
		}
	}
}

// A call read earlier that gives up its place (answered or cancelled
// before reaching the broker) lets the next one in; one that never does
// holds the next only within that call's own deadline, which then fails
// busy without sending anything.
func TestArrivalGivenUpAndDeadline(t *testing.T) {
	b, f := setup(t, config.Broker{MaxInFlight: 8})
	close(f.gate)
	s := b.NewSession("one", KindStdio)
	var o Order
	gone, next := b.Arrive(&o), b.Arrive(&o)
	gone.Placed()
	if r := b.CallTool(context.Background(), Call{Name: "work", Arguments: args(1), Owner: s, Arrival: next}); code(r) != "ok" {
		t.Fatalf("after a given-up call: %s", code(r))
	}
	_, held := b.Arrive(&o), b.Arrive(&o) // the first is read, never handled
	r := b.CallTool(context.Background(), Call{Name: "work", Arguments: args(2), Owner: s, Arrival: held, Timeout: minRun + 50*time.Millisecond})
	if code(r) != string(toolerr.Busy) {
		t.Fatalf("held past its deadline: %s", code(r))
	}
	if f.startedN() != 1 {
		t.Fatalf("%d calls reached the extension, want 1", f.startedN())
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, last := b.Arrive(&o), b.Arrive(&o)
	if r := b.CallTool(ctx, Call{Name: "work", Arguments: args(3), Owner: s, Arrival: last}); code(r) != string(toolerr.Cancelled) {
		t.Fatalf("cancelled while waiting its turn: %s", code(r))
	}
}
