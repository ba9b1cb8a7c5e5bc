package bus

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// view is this replica's copy of the presence bucket, kept by the watch
// (startWatch), so Online answers from memory instead of scanning the
// bucket with a consumer of its own on every call. A key's lease is
// counted from when this replica saw its last put; the bucket drops an
// expired key without telling watchers, so the view drops it by the same
// lease. Until the watch has delivered the bucket's keys, and from the
// moment the connection drops, the view is not used.
type view struct {
	gen       int // the watch filling it
	ready     bool
	keys      map[string]viewEntry
	lastClaim time.Time // the newest claimed (monotonic, as b.now gives it)
}

type viewEntry struct {
	replica string
	owner   string
	seen    time.Time // the last put
	claimed time.Time // the first put of this holder: when this replica saw the claim
}

// resetView starts an empty view for watch gen; b.mu held.
func (b *Bus) resetView(gen int) {
	b.view = view{gen: gen, keys: map[string]viewEntry{}, lastClaim: b.now()}
}

// viewPut records a watched entry of gen. A key the bucket already held
// when the watch began is counted as seen then (its put's time is the
// server's clock, not this replica's): a home that died just before this
// replica started watching stays listed at most one lease longer, and a
// call to it meets no responder, ErrNoHome, "nothing ran".
func (b *Bus) viewPut(gen int, e jetstream.KeyValueEntry) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.view.gen != gen || validDevice(e.Key()) != nil {
		return
	}
	if e.Operation() != jetstream.KeyValuePut {
		delete(b.view.keys, e.Key())
		return
	}
	if p, ok := decodePresence(e.Value()); ok {
		now := b.now()
		claimed := now
		if old, ok := b.view.keys[e.Key()]; ok && old.owner == p.Owner {
			claimed = old.claimed // a renewal
		}
		b.view.keys[e.Key()] = viewEntry{replica: p.Replica, owner: p.Owner, seen: now, claimed: claimed}
		if claimed.After(b.view.lastClaim) {
			b.view.lastClaim = claimed
		}
	}
}

// ClaimedSince reports whether a browser may have connected since t (on
// this replica's clock): a claim was seen after t, or the view cannot say.
// A browser's link is authenticated (its last-seen time stored) before
// its home claims it, so a list of devices read after every claim seen
// has their last-seen times.
func (b *Bus) ClaimedSince(t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.view.ready || !b.nc.IsConnected() || !b.view.lastClaim.Before(t)
}

// viewReady marks gen's view complete: the watch delivered every key.
func (b *Bus) viewReady(gen int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.view.gen == gen {
		b.view.ready = true
	}
}

// viewLost stops using the view: the connection dropped, so puts and
// deletes may be missed until the watch is restarted.
func (b *Bus) viewLost() {
	b.mu.Lock()
	b.view.ready = false
	b.mu.Unlock()
}

// online is the view's devices with a live lease, or false when the view
// cannot be used.
func (b *Bus) online() (map[string]string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.view.ready || !b.nc.IsConnected() {
		return nil, false
	}
	now := b.now()
	out := make(map[string]string, len(b.view.keys))
	for id, e := range b.view.keys {
		if now.Sub(e.seen) < b.t.lease {
			out[id] = e.replica
		} else {
			delete(b.view.keys, id)
		}
	}
	return out, true
}
