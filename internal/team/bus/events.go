package bus

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
)

// Event kinds every replica acts on.
const (
	EventTokenRevoked  = "token.revoked"
	EventDeviceRevoked = "device.revoked"
	EventUserDeleted   = "user.deleted"
	EventPairDecided   = "pair.decided"
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
// of that time: it should re-read what it caches once Ready again.
func (b *Bus) Subscribe(f func(Event)) (stop func(), err error) {
	sub, err := b.nc.Subscribe(eventsSubject, func(m *nats.Msg) {
		var e Event
		if err := json.Unmarshal(m.Data, &e); err != nil {
			b.log.Warn("bus: an event did not decode", "err", err)
			return
		}
		f(e)
	})
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	return func() { _ = sub.Unsubscribe() }, nil
}
