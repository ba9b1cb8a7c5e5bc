package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// presence is the value under a device's key: which replica holds its link.
type presence struct {
	Replica string `json:"replica"`
	Owner   string `json:"owner"` // the Bus instance, so "still ours" survives a replica restarting under the same name
	Since   int64  `json:"since"` // unix ms on the claiming replica's clock, for people reading the bucket
}

// ensureBucket creates the presence bucket if missing. Its max age is the
// lease: a key not renewed (its replica died or lost NATS) disappears. It
// lives in memory: presence is rebuilt from the live links after a NATS
// restart (see afterReconnect).
func (b *Bus) ensureBucket(ctx context.Context) error {
	cfg := jetstream.KeyValueConfig{Bucket: presenceBucket, TTL: b.t.lease, History: 1,
		Storage: jetstream.MemoryStorage, Description: "torii: which replica holds each browser's link"}
	kv, err := b.js.CreateKeyValue(ctx, cfg)
	if errors.Is(err, jetstream.ErrBucketExists) {
		kv, err = b.js.KeyValue(ctx, presenceBucket)
	}
	if err != nil {
		return fmt.Errorf("presence bucket %s: %w", presenceBucket, err)
	}
	b.mu.Lock()
	b.kv = kv
	b.mu.Unlock()
	return nil
}

func (b *Bus) bucket() jetstream.KeyValue {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.kv
}

func decodePresence(data []byte) (presence, bool) {
	var p presence
	return p, json.Unmarshal(data, &p) == nil
}

func (b *Bus) record() []byte {
	data, _ := json.Marshal(presence{Replica: b.replica, Owner: b.owner, Since: b.now().UnixMilli()})
	return data
}

// claim makes this replica the device's home in the bucket, whoever held
// it: the browser's newest link is the live one.
func (b *Bus) claim(ctx context.Context, s *served) error {
	kv := b.bucket()
	if kv == nil {
		return ErrUnavailable
	}
	rev, err := kv.Put(ctx, s.id, b.record())
	if err != nil {
		return fmt.Errorf("%w: claim presence of %s: %v", ErrUnavailable, s.id, err)
	}
	s.mu.Lock()
	s.rev = rev
	s.mu.Unlock()
	return nil
}

// release deletes the key only if our revision is still the latest: a
// newer claim by another replica stays.
func (b *Bus) release(ctx context.Context, s *served) {
	s.mu.Lock()
	rev := s.rev
	s.rev = 0
	s.mu.Unlock()
	kv := b.bucket()
	if rev == 0 || kv == nil {
		return
	}
	if err := kv.Delete(ctx, s.id, jetstream.LastRevision(rev)); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		b.log.Debug("bus: presence not released", "device", s.id, "err", err)
	}
}

// renew extends our lease without ever overwriting a newer claim: the
// update names our last revision. A mismatch means the key expired (we
// re-create it) or another replica claimed the device (we are evicted).
func (b *Bus) renew(ctx context.Context, s *served) {
	kv := b.bucket()
	s.mu.Lock()
	rev, gone := s.rev, s.gone
	s.mu.Unlock()
	if kv == nil || gone {
		return
	}
	var err error
	if rev != 0 {
		var n uint64
		if n, err = kv.Update(ctx, s.id, b.record(), rev); err == nil {
			b.keepOrUndo(ctx, kv, s, rev, n)
			return
		}
		if !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
			b.log.Debug("bus: presence not renewed", "device", s.id, "err", err)
			return
		}
	}
	e, err := kv.Get(ctx, s.id)
	switch {
	case errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted):
		// Our lease lapsed (NATS was away): the link is still here, claim again.
		n, err := kv.Create(ctx, s.id, b.record())
		if err == nil {
			b.keepOrUndo(ctx, kv, s, rev, n)
		} else if !errors.Is(err, jetstream.ErrKeyExists) {
			b.log.Debug("bus: presence not re-claimed", "device", s.id, "err", err)
		}
	case err != nil:
		b.log.Debug("bus: presence not read", "device", s.id, "err", err)
	default:
		var p presence
		if json.Unmarshal(e.Value(), &p) == nil && p.Owner == b.owner {
			b.setRev(s, rev, e.Revision())
			return
		}
		b.evict(s)
	}
}

func (b *Bus) setRev(s *served, old, rev uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rev == old && !s.gone {
		s.rev = rev
		return true
	}
	return false
}

// keepOrUndo records the revision a renewal wrote, unless s was released
// while it wrote: the release deleted an older revision (or saw it deleted)
// and the renewal put the key back for a device no longer served here, so
// the renewal's own revision is deleted again.
func (b *Bus) keepOrUndo(ctx context.Context, kv jetstream.KeyValue, s *served, old, rev uint64) {
	if b.setRev(s, old, rev) {
		return
	}
	if err := kv.Delete(ctx, s.id, jetstream.LastRevision(rev)); err != nil && !errors.Is(err, jetstream.ErrKeyRevisionMismatch) {
		b.log.Debug("bus: presence renewed after its release not withdrawn", "device", s.id, "err", err)
	}
}

// evict retires s because another replica is now the device's home, and
// tells the owner of s so it closes its stale link.
func (b *Bus) evict(s *served) {
	b.mu.Lock()
	current := b.served[s.id] == s
	if current {
		delete(b.served, s.id)
	}
	b.mu.Unlock()
	if !current {
		return
	}
	s.mu.Lock()
	s.rev = 0 // the key is someone else's now: never delete it
	s.mu.Unlock()
	b.retire(s)
	b.log.Info("bus: device claimed by another replica", "device", s.id)
	if s.onEvicted != nil {
		go s.onEvicted(s.id)
	}
}

// renewLoop is the lease: each served device's key is renewed well within
// its max age.
func (b *Bus) renewLoop() {
	tick := time.NewTicker(b.t.renew)
	defer tick.Stop()
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-tick.C:
			b.renewAll()
		}
	}
}

func (b *Bus) renewAll() {
	b.mu.Lock()
	all := make([]*served, 0, len(b.served))
	for _, s := range b.served {
		all = append(all, s)
	}
	b.mu.Unlock()
	ctx, cancel := context.WithTimeout(b.ctx, b.t.renew)
	defer cancel()
	for _, s := range all {
		b.renew(ctx, s)
	}
}

// startWatch follows every change to the bucket, so a replica learns it was
// replaced as home within milliseconds rather than at its next renewal.
func (b *Bus) startWatch() error {
	kv := b.bucket()
	if kv == nil {
		return ErrUnavailable
	}
	ctx, cancel := context.WithCancel(b.ctx)
	b.mu.Lock()
	b.watchGen++
	gen := b.watchGen
	b.resetView(gen)
	b.mu.Unlock()
	// From the bucket's current keys on: they fill the view (see view.go);
	// only later changes can evict, as before the watch nothing was served
	// that a key already there could be newer than.
	w, err := kv.WatchAll(ctx)
	if err != nil {
		cancel()
		return err
	}
	b.mu.Lock()
	b.stopWatch = cancel
	b.mu.Unlock()
	go func() {
		defer func() { _ = w.Stop() }()
		initial := true
		for {
			select {
			case <-ctx.Done():
				return
			case e, ok := <-w.Updates():
				if !ok {
					b.viewLost()
					return
				}
				if e == nil { // every key the bucket held has been seen
					initial = false
					b.viewReady(gen)
					continue
				}
				b.viewPut(gen, e)
				if !initial && e.Operation() == jetstream.KeyValuePut {
					b.onPresence(gen, e)
				}
			}
		}
	}()
	return nil
}

func (b *Bus) onPresence(gen int, e jetstream.KeyValueEntry) {
	var p presence
	if json.Unmarshal(e.Value(), &p) != nil || p.Owner == b.owner {
		return
	}
	b.mu.Lock()
	s := b.served[e.Key()]
	stale := gen != b.watchGen
	b.mu.Unlock()
	if s == nil || stale {
		return
	}
	// Only a claim newer than ours evicts. While our own claim is in
	// flight (rev 0) an update may be one that ours is about to replace;
	// a newer claim missed then is caught by the next renewal.
	s.mu.Lock()
	newer := s.rev != 0 && e.Revision() > s.rev
	s.mu.Unlock()
	if newer {
		b.evict(s)
	}
}

// afterReconnect restores what a NATS outage may have lost: the bucket (it
// lives in memory), the watch, and this replica's claims on the devices
// whose links it still holds. Claims are renewed, not forced, so a device
// that moved meanwhile is not taken back.
func (b *Bus) afterReconnect() {
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	// A server that just started may not answer JetStream requests yet.
	wait := 50 * time.Millisecond
	for {
		err := b.ensureBucket(ctx)
		if err == nil {
			break
		}
		select {
		case <-ctx.Done():
			b.log.Warn("bus: presence bucket not restored after reconnect", "err", err)
			return
		case <-time.After(wait):
			wait = min(2*wait, time.Second)
		}
	}
	b.mu.Lock()
	if b.stopWatch != nil {
		b.stopWatch()
	}
	b.mu.Unlock()
	if err := b.startWatch(); err != nil {
		b.log.Warn("bus: presence watch not restored after reconnect", "err", err)
	}
	b.renewAll()
	if b.restored != nil {
		b.restored()
	}
}

// Home returns the replica holding the device's link, if any.
func (b *Bus) Home(ctx context.Context, deviceID string) (replica string, ok bool, err error) {
	if err := validDevice(deviceID); err != nil {
		return "", false, err
	}
	kv := b.bucket()
	if kv == nil {
		return "", false, ErrUnavailable
	}
	e, err := kv.Get(ctx, deviceID)
	if errors.Is(err, jetstream.ErrKeyNotFound) || errors.Is(err, jetstream.ErrKeyDeleted) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("%w: presence: %v", ErrUnavailable, err)
	}
	var p presence
	if err := json.Unmarshal(e.Value(), &p); err != nil {
		return "", false, fmt.Errorf("bus: presence of %s does not decode: %v", deviceID, err)
	}
	return p.Replica, true, nil
}

// Online returns every device with a live lease and the replica holding
// it: from the watched view (a change shows there once the watch brings
// it, within milliseconds), or by reading the bucket when fresh or while
// the view is not complete.
func (b *Bus) Online(ctx context.Context, fresh bool) (map[string]string, error) {
	if !fresh {
		if out, ok := b.online(); ok {
			return out, nil
		}
	}
	kv := b.bucket()
	if kv == nil {
		return nil, ErrUnavailable
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		return nil, fmt.Errorf("%w: presence: %v", ErrUnavailable, err)
	}
	defer func() { _ = w.Stop() }()
	out := map[string]string{}
	for {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: presence: %v", ErrUnavailable, ctx.Err())
		case e, ok := <-w.Updates():
			if !ok {
				return nil, fmt.Errorf("%w: presence watch ended", ErrUnavailable)
			}
			if e == nil { // every current key has been seen
				return out, nil
			}
			if p, ok := decodePresence(e.Value()); ok && validDevice(e.Key()) == nil {
				out[e.Key()] = p.Replica
			}
		}
	}
}
