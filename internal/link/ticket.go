package link

import (
	"crypto/rand"
	"crypto/sha256"
	"strings"
	"sync"

	"github.com/torii-browser/torii/internal/pairing"
)

// A reconnect ticket is the paired extension's reserved way in (SECURITY
// I-57). Every successful torii/auth returns a fresh random ticket; the
// extension offers it on its next upgrade as the subprotocol
// "torii.ticket.<ticket>". A connection that shows a live ticket of a
// paired device, from that device's origin, does not take one of the
// MaxUnauthenticated slots and can never be evicted for a newcomer: it has
// one of the device's MaxReservedPerDevice reserved slots, and must
// authenticate as that device. Nothing but the daemon and the extension
// ever sees a ticket (loopback, or TLS off it), so no flood of anonymous
// connections, however fast, can keep that reconnect out.
const (
	TicketSubprotocolPrefix = "torii.ticket."
	// MaxReservedPerDevice bounds what a ticket's holder can keep open
	// before authenticating.
	MaxReservedPerDevice = 2
	// ticketsKept per device: the one just issued and the one before, so
	// an auth reply lost with its connection does not cost the extension
	// its way in.
	ticketsKept = 2
)

// tickets maps ticket hashes to devices. Only hashes are kept, and a
// lookup is a map probe on a SHA-256 of the offered value, which leaks
// nothing about stored tickets. One entry list per paired device that has
// authenticated during this run, so the table is bounded by the device
// store.
type tickets struct {
	mu       sync.Mutex
	byHash   map[[32]byte]string
	byDevice map[string][][32]byte // newest last
}

func newTickets() *tickets {
	return &tickets{byHash: map[[32]byte]string{}, byDevice: map[string][][32]byte{}}
}

// issue returns a fresh ticket for device; the oldest of its previous ones
// beyond ticketsKept stops working.
func (t *tickets) issue(device string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := pairing.EncodeB64(b[:])
	h := sha256.Sum256([]byte(tok))
	t.mu.Lock()
	defer t.mu.Unlock()
	hs := append(t.byDevice[device], h)
	for len(hs) > ticketsKept {
		delete(t.byHash, hs[0])
		hs = hs[1:]
	}
	t.byDevice[device] = hs
	t.byHash[h] = device
	return tok
}

// device is the device a ticket was issued to.
func (t *tickets) device(tok string) (string, bool) {
	if tok == "" {
		return "", false
	}
	h := sha256.Sum256([]byte(tok))
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.byHash[h]
	return d, ok
}

// forget drops a device's tickets (revocation).
func (t *tickets) forget(device string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, h := range t.byDevice[device] {
		delete(t.byHash, h)
	}
	delete(t.byDevice, device)
}

// offeredTicket is the ticket among the offered subprotocols, if any.
func offeredTicket(protocols []string) string {
	for _, h := range protocols {
		for _, p := range strings.Split(h, ",") {
			if t, ok := strings.CutPrefix(strings.TrimSpace(p), TicketSubprotocolPrefix); ok {
				return t
			}
		}
	}
	return ""
}
