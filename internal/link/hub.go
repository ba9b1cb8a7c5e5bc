package link

import (
	"sort"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Kind tells how a connection authenticated.
type Kind string

const (
	KindPending Kind = "unauthenticated" // extension before torii/auth
	KindDevice  Kind = "device"          // paired extension, signed challenge passed
	KindToken   Kind = "token"           // bearer token client
)

// ConnInfo describes a live connection (control method `status`).
type ConnInfo struct {
	ID         string    `json:"id"`
	Kind       Kind      `json:"kind"`
	DeviceID   string    `json:"deviceId,omitempty"`
	DeviceName string    `json:"deviceName,omitempty"`
	TokenID    string    `json:"tokenId,omitempty"`
	Origin     string    `json:"origin"`
	Since      time.Time `json:"since"`
}

// Hub tracks live connections so revocation and shutdown can close them.
type Hub struct {
	mu     sync.Mutex
	conns  map[string]*Conn
	unauth int    // slots held: reservations and connections with counted set
	seq    uint64 // arrival order, for eviction
	wg     sync.WaitGroup

	// Reserved slots of ticket holders before they authenticate (SECURITY
	// I-57): per device, and which connection holds one.
	reservedBy  map[string]int
	reservedFor map[*Conn]string
	tickets     *tickets

	// changed is closed, and replaced, whenever a connection comes or goes
	// or a slot is taken or given back; see Changed.
	changed chan struct{}
}

func newHub() *Hub {
	return &Hub{conns: map[string]*Conn{}, reservedBy: map[string]int{}, reservedFor: map[*Conn]string{}, tickets: newTickets(),
		changed: make(chan struct{})}
}

// Changed returns a channel that is closed at the hub's next change: a
// connection added or removed, a slot taken or given back. A watcher reads
// the state it cares about after taking the channel, then waits on it, so
// no change is missed between the two.
func (h *Hub) Changed() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.changed
}

// signalLocked wakes every watcher of Changed. Under h.mu.
func (h *Hub) signalLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
}

// reserveFor takes one of device's reserved slots for a connection about
// to be upgraded with its ticket; false when the device holds them all.
func (h *Hub) reserveFor(device string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.reservedBy[device] >= MaxReservedPerDevice {
		return false
	}
	h.reservedBy[device]++
	h.signalLocked()
	return true
}

// unreserve gives back a reserved slot whose upgrade failed.
func (h *Hub) unreserve(device string) {
	h.mu.Lock()
	h.unreserveLocked(device)
	h.mu.Unlock()
}

func (h *Hub) unreserveLocked(device string) {
	if h.reservedBy[device]--; h.reservedBy[device] <= 0 {
		delete(h.reservedBy, device)
	}
	h.signalLocked()
}

// bindReserved records that c holds a reserved slot of device.
func (h *Hub) bindReserved(c *Conn, device string) {
	h.mu.Lock()
	h.reservedFor[c] = device
	h.mu.Unlock()
}

// reservedDevice is the device whose reserved slot c holds, if any.
func (h *Hub) reservedDevice(c *Conn) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reservedFor[c]
}

// reserve takes an unauthenticated slot (SECURITY I-4). At the cap the
// oldest anonymous connection gives its slot to the newcomer: ok with the
// victim, which the caller closes. A connection is anonymous until it names
// a paired device in torii/hello, or has a pairing pending or approved on
// it; an attacker cannot name a paired device, so the extension's own
// reconnect can always get in, however fast others connect. ok is false
// only when every slot is held by such a connection.
func (h *Hub) reserve() (ok bool, victim *Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.unauth < MaxUnauthenticated {
		h.unauth++
		h.signalLocked()
		return true, nil
	}
	for _, c := range h.conns {
		if c.counted && c.anonymous() && (victim == nil || c.seq < victim.seq) {
			victim = c
		}
	}
	if victim == nil {
		return false, nil
	}
	victim.counted = false // its slot passes to the newcomer
	return true, victim
}

// release gives back a slot reserved for an upgrade that failed.
func (h *Hub) release() {
	h.mu.Lock()
	h.unauth--
	h.signalLocked()
	h.mu.Unlock()
}

// releaseLocked gives back c's slot, unauthenticated or reserved, if it
// still holds one. Under h.mu.
func (h *Hub) releaseLocked(c *Conn) {
	if c.counted {
		c.counted = false
		h.unauth--
		h.signalLocked()
	}
	if d, ok := h.reservedFor[c]; ok {
		delete(h.reservedFor, c)
		h.unreserveLocked(d)
	}
}

func (h *Hub) releaseConn(c *Conn) {
	h.mu.Lock()
	h.releaseLocked(c)
	h.mu.Unlock()
}

// roomFor reports whether another authenticated connection may open
// (SECURITY I-51).
func (h *Hub) roomFor() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.conns)-h.unauth < MaxConnections
}

func (h *Hub) add(c *Conn) {
	h.mu.Lock()
	h.seq++
	c.seq = h.seq
	h.conns[c.id] = c
	h.wg.Add(1)
	h.signalLocked()
	h.mu.Unlock()
}

func (h *Hub) remove(c *Conn) {
	h.mu.Lock()
	delete(h.conns, c.id)
	h.signalLocked()
	h.mu.Unlock()
	h.wg.Done()
}

// Connections lists live connections, oldest first.
func (h *Hub) Connections() []ConnInfo {
	h.mu.Lock()
	out := make([]ConnInfo, 0, len(h.conns))
	for _, c := range h.conns {
		out = append(out, c.Info())
	}
	h.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Since.Before(out[j].Since) })
	return out
}

// Get returns a live connection by ID.
func (h *Hub) Get(id string) *Conn {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.conns[id]
}

// Unauthenticated is the number of connections still before torii/auth.
func (h *Hub) Unauthenticated() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.unauth
}

// ExtensionConnected reports whether a paired device is authenticated now.
func (h *Hub) ExtensionConnected() bool { return len(h.ConnectedDevices()) > 0 }

// ConnectedDevices is the set of device IDs with a live authenticated
// connection. One being closed (revoked, replaced, shutting down) no longer
// counts, though its close handshake may still run.
func (h *Hub) ConnectedDevices() map[string]bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]bool{}
	for _, c := range h.conns {
		c.mu.Lock()
		if c.kind == KindDevice && !c.closing {
			out[c.deviceID] = true
		}
		c.mu.Unlock()
	}
	return out
}

// CloseDevice closes every connection of a device with 1008 "device
// revoked" and returns how many it closed. SECURITY I-7: call it after the
// device is removed from the store; authentication re-checks the store
// under the hub lock, so no connection can slip between the two.
func (h *Hub) CloseDevice(deviceID string) int {
	h.tickets.forget(deviceID)
	return h.closeWhere(func(ci ConnInfo) bool {
		return ci.Kind == KindDevice && ci.DeviceID == deviceID
	}, websocket.StatusPolicyViolation, "device revoked")
}

// CloseToken closes every connection that authenticated with a token.
func (h *Hub) CloseToken(tokenID string) int {
	return h.closeWhere(func(ci ConnInfo) bool {
		return ci.Kind == KindToken && ci.TokenID == tokenID
	}, websocket.StatusPolicyViolation, "token revoked")
}

// CloseAll closes every connection (shutdown uses 1001 going away).
func (h *Hub) CloseAll(code websocket.StatusCode, reason string) int {
	return h.closeWhere(func(ConnInfo) bool { return true }, code, reason)
}

func (h *Hub) closeWhere(match func(ConnInfo) bool, code websocket.StatusCode, reason string) int {
	h.mu.Lock()
	var hit []*Conn
	for _, c := range h.conns {
		if match(c.Info()) {
			hit = append(hit, c)
		}
	}
	h.mu.Unlock()
	for _, c := range hit {
		c.Close(code, reason)
	}
	return len(hit)
}

// Wait blocks until every connection's goroutines have ended.
func (h *Hub) Wait() { h.wg.Wait() }
