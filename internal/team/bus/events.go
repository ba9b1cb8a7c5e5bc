package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
)

// Event kinds every replica acts on.
const (
	EventTokenRevoked  = "token.revoked"
	EventDeviceRevoked = "device.revoked"
	EventUserDeleted   = "user.deleted"
	EventPairDecided   = "pair.decided"
	// EventResync is never published: Subscribe's f gets it when this
	// replica's NATS connection drops and again when it is back, since the
	// events of that time are lost to it; whatever f keeps because events
	// would tell it of a change must be read again.
	EventResync = "bus.resync"
)

// Event tells every replica (this one included) that something changed in
// the store that live links or calls must follow.
type Event struct {
	Kind   string `json:"kind"`
	ID     string `json:"id"`
	UserID string `json:"userId"`
}

// Publish sends e to every replica. It returns once the NATS server has
// it, so a revocation reported done has left this replica.
func (b *Bus) Publish(ctx context.Context, e Event) error {
	switch e.Kind {
	case EventTokenRevoked, EventDeviceRevoked, EventUserDeleted, EventPairDecided:
	default:
		return fmt.Errorf("bus: unknown event kind %q", e.Kind)
	}
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	if err := b.nc.Publish(eventsSubject, data); err != nil {
		return fmt.Errorf("%w: event not sent: %v", ErrUnavailable, err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
	}
	if err := b.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("%w: event may not have been sent: %v", ErrUnavailable, err)
	}
	return nil
}

// Subscribe calls f for every event from every replica, one at a time in
// the order they arrive. A replica disconnected from NATS misses the events
// of that time: f gets EventResync when the connection drops and when it
// is back.
func (b *Bus) Subscribe(f func(Event)) (stop func(), err error) {
	var mu sync.Mutex // one call of f at a time, events and resyncs alike
	call := func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		f(e)
	}
	sub, err := b.nc.Subscribe(eventsSubject, func(m *nats.Msg) {
		var e Event
		if err := json.Unmarshal(m.Data, &e); err != nil {
			b.log.Warn("bus: an event did not decode", "err", err)
			return
		}
		if e.Kind == EventResync {
			return // only this replica's connection says so
		}
		call(e)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	// A round trip, so the server has the subscription when this returns:
	// no event published afterwards, by any replica, is missed.
	if err := b.nc.FlushTimeout(5 * time.Second); err != nil {
		_ = sub.Unsubscribe()
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	b.mu.Lock()
	b.resyncN++
	id := b.resyncN
	b.resync[id] = func() { call(Event{Kind: EventResync}) }
	b.mu.Unlock()
	return func() {
		_ = sub.Unsubscribe()
		b.mu.Lock()
		delete(b.resync, id)
		b.mu.Unlock()
	}, nil
}

// connChanged tells every subscriber that events may have been missed.
func (b *Bus) connChanged() {
	b.mu.Lock()
	fs := make([]func(), 0, len(b.resync))
	for _, f := range b.resync {
		fs = append(fs, f)
	}
	b.mu.Unlock()
	for _, f := range fs {
		f()
	}
}
