package link

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"

	"github.com/torii-browser/torii/internal/atomicfile"
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
// nothing about stored tickets. One entry list per paired device, so the
// table is bounded by the device store. With a path, the hashes are also
// on disk, so a daemon restart does not send the extension's first
// reconnect the anonymous way, where a flood could keep it out (SECURITY
// I-57).
type tickets struct {
	mu       sync.Mutex
	byHash   map[[32]byte]string
	byDevice map[string][][32]byte // newest last

	path   string // "" keeps them in memory only
	log    *slog.Logger
	saveMu sync.Mutex // one write at a time, each of the state as it is then
}

// ticketFile is the file's form: hashes only, never a ticket, so reading
// it gives nobody a way in.
type ticketFile struct {
	Version int                 `json:"version"`
	Devices map[string][]string `json:"devices"` // device ID → hex SHA-256, oldest first
}

const ticketFileVersion = 1

func newTickets() *tickets {
	return &tickets{byHash: map[[32]byte]string{}, byDevice: map[string][][32]byte{}, log: slog.New(slog.DiscardHandler)}
}

// loadTickets reads path ("" for none). A missing, unreadable, too open or
// corrupt file only costs the extension its reserved way in until its next
// authentication, so it is a warning, never a reason not to start; a file
// others could write is not trusted. Hashes of devices that are no longer
// paired are dropped, and the file rewritten without them.
func loadTickets(path string, paired func(device string) bool, log *slog.Logger) *tickets {
	t := newTickets()
	t.path, t.log = path, log
	if path == "" {
		return t
	}
	data, exists, err := atomicfile.ReadPrivate(path)
	if err != nil {
		log.Warn("link: reconnect tickets not loaded; the extension's next reconnect goes the anonymous way", "err", err)
		return t
	}
	if !exists {
		return t
	}
	var f ticketFile
	if err := json.Unmarshal(data, &f); err != nil || f.Version != ticketFileVersion {
		log.Warn("link: reconnect tickets file is corrupt; ignored", "path", path, "err", err, "version", f.Version)
		return t
	}
	dropped := false
	for device, list := range f.Devices {
		if !paired(device) {
			dropped = true
			continue
		}
		var hs [][32]byte
		for _, x := range list {
			var h [32]byte
			b, err := hex.DecodeString(x)
			if err != nil || len(b) != len(h) {
				dropped = true
				continue
			}
			copy(h[:], b)
			if _, dup := t.byHash[h]; dup {
				dropped = true
				continue
			}
			hs = append(hs, h)
			t.byHash[h] = device
		}
		for len(hs) > ticketsKept {
			delete(t.byHash, hs[0])
			hs, dropped = hs[1:], true
		}
		if len(hs) > 0 {
			t.byDevice[device] = hs
		}
	}
	if dropped {
		t.save()
	}
	return t
}

// issue returns a fresh ticket for device; the oldest of its previous ones
// beyond ticketsKept stops working. The hashes are on disk before the
// ticket is returned, so the one the extension holds survives a restart.
func (t *tickets) issue(device string) string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	tok := pairing.EncodeB64(b[:])
	h := sha256.Sum256([]byte(tok))
	t.mu.Lock()
	hs := append(t.byDevice[device], h)
	for len(hs) > ticketsKept {
		delete(t.byHash, hs[0])
		hs = hs[1:]
	}
	t.byDevice[device] = hs
	t.byHash[h] = device
	t.mu.Unlock()
	t.save()
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

// forget drops a device's tickets (revocation), from the file too.
func (t *tickets) forget(device string) {
	t.mu.Lock()
	_, had := t.byDevice[device]
	for _, h := range t.byDevice[device] {
		delete(t.byHash, h)
	}
	delete(t.byDevice, device)
	t.mu.Unlock()
	if had {
		t.save()
	}
}

// save writes the hashes as they are now (0600, atomic: a kill at any
// moment leaves the old file or the new one). Writes are serialised and
// each takes its snapshot under saveMu, so a slower write never replaces
// a newer state with an older one. Once per authentication, off every
// other path.
func (t *tickets) save() {
	if t.path == "" {
		return
	}
	t.saveMu.Lock()
	defer t.saveMu.Unlock()
	f := ticketFile{Version: ticketFileVersion, Devices: map[string][]string{}}
	t.mu.Lock()
	for d, hs := range t.byDevice {
		for _, h := range hs {
			f.Devices[d] = append(f.Devices[d], hex.EncodeToString(h[:]))
		}
	}
	t.mu.Unlock()
	data, err := json.Marshal(f)
	if err == nil {
		err = atomicfile.Write(t.path, data, 0o600)
	}
	if err != nil {
		t.log.Warn("link: could not save reconnect tickets; they last until the daemon stops", "err", err)
	}
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
