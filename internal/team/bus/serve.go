package bus

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
)

// Handler runs one call at the device's home.
type Handler func(ctx context.Context, r CallRequest) *mcp.CallToolResult

// ServeOption tunes ServeDevice.
type ServeOption func(*served)

// OnEvicted is called (once, on its own goroutine) when another replica
// claims the device: the browser reconnected there, so this replica's link
// is stale and should be closed. New calls already go to the new home.
func OnEvicted(f func(deviceID string)) ServeOption {
	return func(s *served) { s.onEvicted = f }
}

// served is one device this replica is home for.
type served struct {
	id        string
	h         Handler
	onEvicted func(string)
	callSub   *nats.Subscription
	cancelSub *nats.Subscription

	mu       sync.Mutex
	rev      uint64 // our last presence revision; 0 when we hold none
	gone     bool   // stopped or evicted: new calls are refused as moved
	inflight map[string]context.CancelFunc
}

// ServeDevice makes this replica the device's home: calls on its subject
// reach h; a cancel for a call cancels h's ctx. It claims presence (a lease
// renewed while served; the latest claim wins, as the browser's newest link
// is the live one). stop unsubscribes and releases the lease if still ours.
// Serving a device this replica already serves replaces the earlier serve.
func (b *Bus) ServeDevice(deviceID string, h Handler, opts ...ServeOption) (stop func(), err error) {
	if err := validDevice(deviceID); err != nil {
		return nil, err
	}
	s := &served{id: deviceID, h: h, inflight: map[string]context.CancelFunc{}}
	for _, o := range opts {
		o(s)
	}
	// Subscribe before claiming, so the moment others see the claim the
	// subject already reaches us. A queue group: while an old home has not
	// yet learned it was replaced, each call still runs on one of them only.
	if s.callSub, err = b.nc.QueueSubscribeSyncWithChan(callSubject(deviceID), "home", b.homeCh); err != nil {
		return nil, err
	}
	if s.cancelSub, err = b.nc.ChanSubscribe(cancelSubject(deviceID), b.homeCh); err != nil {
		_ = s.callSub.Unsubscribe()
		return nil, err
	}
	b.mu.Lock()
	b.subs[s.callSub], b.subs[s.cancelSub] = s, s
	if b.closed {
		delete(b.subs, s.callSub)
		delete(b.subs, s.cancelSub)
		b.mu.Unlock()
		_ = s.callSub.Unsubscribe()
		_ = s.cancelSub.Unsubscribe()
		return nil, ErrUnavailable
	}
	old := b.served[deviceID]
	b.served[deviceID] = s
	b.mu.Unlock()
	if old != nil {
		b.retire(old)
	}
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	defer cancel()
	if err := b.claim(ctx, s); err != nil {
		b.stopServing(s)
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { b.stopServing(s) }) }, nil
}

// retire stops new calls reaching s; its in-flight calls run on and can
// still be cancelled until the last one ends.
func (b *Bus) retire(s *served) {
	s.mu.Lock()
	already := s.gone
	s.gone = true
	idle := len(s.inflight) == 0
	s.mu.Unlock()
	if already {
		return
	}
	// Drained, not dropped: a call the server routed here before it had our
	// unsubscribe (another replica's publish can overtake it) still arrives,
	// finds no serve and is refused as moved, so its caller tries the new
	// home at once rather than waiting out a lost home.
	b.mu.Lock()
	delete(b.subs, s.callSub)
	b.mu.Unlock()
	_ = s.callSub.Drain()
	if idle {
		b.dropCancels(s)
	}
}

func (b *Bus) dropCancels(s *served) {
	b.mu.Lock()
	_, live := b.subs[s.cancelSub]
	delete(b.subs, s.cancelSub)
	b.mu.Unlock()
	if live {
		_ = s.cancelSub.Unsubscribe()
	}
}

// stopServing ends s: no new calls, presence released if still ours.
func (b *Bus) stopServing(s *served) {
	b.retire(s)
	b.mu.Lock()
	if b.served[s.id] == s {
		delete(b.served, s.id)
	}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	b.release(ctx, s)
}

// dispatch reads calls and cancels for every served device from one
// channel, so a cancel is never handled before the call it cancels.
func (b *Bus) dispatch() {
	for {
		select {
		case <-b.ctx.Done():
			return
		case m := <-b.homeCh:
			b.onHomeMsg(m)
		}
	}
}

func (b *Bus) onHomeMsg(m *nats.Msg) {
	id, kind, ok := splitDeviceSubject(m.Subject)
	if !ok {
		return
	}
	// The subscription, not the subject alone, names the served device: a
	// message for device A can only ever reach A's handler.
	b.mu.Lock()
	s := b.subs[m.Sub]
	draining := b.draining
	b.mu.Unlock()
	if s != nil && s.id != id {
		s = nil
	}
	if kind == "cancel" {
		var c cancelMsg
		if s == nil || json.Unmarshal(m.Data, &c) != nil {
			return
		}
		s.mu.Lock()
		cancel := s.inflight[c.CallID]
		s.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return
	}
	if m.Reply == "" {
		return
	}
	if s == nil {
		b.refuse(m, refusedMoved)
		return
	}
	if draining {
		b.refuse(m, refusedDraining)
		return
	}
	var r CallRequest
	if err := json.Unmarshal(m.Data, &r); err != nil || r.DeviceID != id || r.CallID == "" {
		b.refuse(m, refusedBad)
		return
	}
	ctx, cancel := context.WithCancel(b.ctx)
	if r.BudgetMs > 0 {
		// SECURITY I-91: the deadline is this replica's now plus the budget.
		ctx, cancel = context.WithTimeout(b.ctx, time.Duration(r.BudgetMs)*time.Millisecond)
	}
	s.mu.Lock()
	if s.gone {
		s.mu.Unlock()
		cancel()
		b.refuse(m, refusedMoved)
		return
	}
	s.inflight[r.CallID] = cancel
	s.mu.Unlock()
	b.mu.Lock()
	b.inflight++
	b.mu.Unlock()
	go b.run(ctx, cancel, s, m.Reply, r)
}

func (b *Bus) run(ctx context.Context, cancel context.CancelFunc, s *served, reply string, r CallRequest) {
	defer func() {
		cancel()
		s.mu.Lock()
		delete(s.inflight, r.CallID)
		idle := s.gone && len(s.inflight) == 0
		s.mu.Unlock()
		if idle {
			b.dropCancels(s)
		}
		b.mu.Lock()
		b.inflight--
		b.checkDrained()
		b.mu.Unlock()
	}()
	// Heartbeats only while the handler runs past an interval: a call that
	// answers sooner costs its caller no message but the result.
	hb := &nats.Msg{Subject: reply, Header: nats.Header{hdrKind: []string{kindHeartbeat}}}
	var mu sync.Mutex // stopped and beat, for the timer's goroutine
	var beat *time.Timer
	stopped := false
	mu.Lock()
	beat = time.AfterFunc(b.t.heartbeat, func() {
		mu.Lock()
		defer mu.Unlock()
		if !stopped {
			_ = b.nc.PublishMsg(hb)
			beat.Reset(b.t.heartbeat)
		}
	})
	mu.Unlock()
	res := b.h(ctx, s, r)
	mu.Lock()
	stopped = true
	beat.Stop()
	mu.Unlock()
	data, err := json.Marshal(res)
	if err != nil {
		data, _ = json.Marshal(errorResult("the result did not encode: " + err.Error()))
	}
	_ = b.nc.PublishMsg(&nats.Msg{Subject: reply, Header: nats.Header{hdrKind: []string{kindResult}}, Data: data})
}

// h runs the handler, turning a panic or a nil result into an error result
// so the caller is never left waiting for a home that is still alive.
func (b *Bus) h(ctx context.Context, s *served, r CallRequest) (res *mcp.CallToolResult) {
	defer func() {
		if p := recover(); p != nil {
			b.log.Error("bus: call handler panicked", "device", s.id, "tool", r.Tool, "panic", p)
			res = errorResult("the call failed at the device's replica")
		}
	}()
	if res = s.h(ctx, r); res == nil {
		res = errorResult("the device's replica returned no result")
	}
	return res
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

func (b *Bus) refuse(m *nats.Msg, why string) {
	_ = b.nc.PublishMsg(&nats.Msg{Subject: m.Reply,
		Header: nats.Header{hdrKind: []string{kindRefused}, hdrRefusal: []string{why}}})
}

// Serving reports whether this replica is the device's home now: it serves
// the device, holds its presence and is not draining, so a call for it may
// run here without a trip through NATS, reaching the same handler.
func (b *Bus) Serving(deviceID string) bool {
	b.mu.Lock()
	s := b.served[deviceID]
	draining := b.draining
	b.mu.Unlock()
	if s == nil || draining {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.gone && s.rev != 0
}

// Drain stops taking new calls for served devices: they are refused at
// once (ErrDraining at the caller: nothing ran). Calls in flight finish;
// Drained tells when they have.
func (b *Bus) Drain() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.draining = true
	b.checkDrained()
}

// checkDrained closes drained once draining with nothing in flight; b.mu held.
func (b *Bus) checkDrained() {
	if b.draining && b.inflight == 0 && !b.drainedClosed {
		close(b.drained)
		b.drainedClosed = true
	}
}

// Drained is closed once Drain was called and no call is in flight.
func (b *Bus) Drained() <-chan struct{} { return b.drained }

// splitDeviceSubject parses torii.dev.<id>.<kind>.
func splitDeviceSubject(subj string) (id, kind string, ok bool) {
	const pre = "torii.dev."
	if len(subj) <= len(pre) || subj[:len(pre)] != pre {
		return "", "", false
	}
	rest := subj[len(pre):]
	for i := len(rest) - 1; i >= 0; i-- {
		if rest[i] == '.' {
			id, kind = rest[:i], rest[i+1:]
			return id, kind, validDevice(id) == nil && (kind == "call" || kind == "cancel")
		}
	}
	return "", "", false
}
