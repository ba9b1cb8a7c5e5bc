package pairing

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/torii-browser/torii/internal/atomicfile"
)

// Device is one paired extension (or other client holding a P-256 key).
type Device struct {
	ID        string    `json:"deviceId"`
	Name      string    `json:"name"`
	Origin    string    `json:"origin"`
	PublicKey []byte    `json:"publicKey"`
	CreatedAt time.Time `json:"createdAt"`
	LastSeen  time.Time `json:"lastSeen"`
}

// Device store errors.
var (
	ErrUnknownDevice = errors.New("pairing: unknown device")
	ErrBadPublicKey  = errors.New("pairing: public key is not a 65-byte uncompressed P-256 point")
	ErrBadDeviceName = errors.New("pairing: device name must be 1-64 printable characters")
	ErrBadOrigin     = errors.New("pairing: origin must be non-empty printable ASCII")
	ErrCorruptStore  = errors.New("pairing: device store is corrupt")
)

// MaxDeviceName bounds names shown in the popup and terminal.
const MaxDeviceName = 64

// touchInterval: lastSeen is advisory, so writes closer together than this
// are skipped to keep the disk quiet on every reconnect.
const touchInterval = time.Minute

type deviceFile struct {
	Version int      `json:"version"`
	Devices []Device `json:"devices"`
}

// DeviceStore persists devices.json (0600, atomic). Safe for concurrent use.
type DeviceStore struct {
	path      string
	mu        sync.Mutex
	devices   []Device
	persisted map[string]time.Time // lastSeen as last written, per device
}

// OpenDeviceStore loads path, or starts empty if it does not exist. A file
// open to group or others is refused (*atomicfile.PermError).
func OpenDeviceStore(path string) (*DeviceStore, error) {
	s := &DeviceStore{path: path, persisted: map[string]time.Time{}}
	// SECURITY I-9: whoever can write this file can pair a device.
	data, exists, err := atomicfile.ReadPrivate(path)
	if err != nil {
		return nil, err
	}
	if !exists {
		return s, nil
	}
	var f deviceFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptStore, path, err)
	}
	seen := map[string]bool{}
	for _, d := range f.Devices {
		if d.ID == "" || seen[d.ID] || !ValidPublicKey(d.PublicKey) {
			return nil, fmt.Errorf("%w: %s: bad entry %q", ErrCorruptStore, path, d.ID)
		}
		seen[d.ID] = true
		s.persisted[d.ID] = d.LastSeen
	}
	s.devices = f.Devices
	// Stores from before names were made distinct may hold two devices of
	// one name; the later ones get a suffix, so a name picks one browser.
	changed := false
	for i := range s.devices {
		if n := s.uniqueNameLocked(s.devices[i].Name, s.devices[i].ID, i); n != s.devices[i].Name {
			s.devices[i].Name, changed = n, true
		}
	}
	if changed {
		if err := s.save(s.devices); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// ValidName reports whether n may name a device.
func ValidName(n string) bool { return validName(n) }

func validName(n string) bool {
	if n == "" || !utf8.ValidString(n) || utf8.RuneCountInString(n) > MaxDeviceName {
		return false
	}
	for _, r := range n {
		// Control and format characters could spoof what the terminal shows.
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return strings.TrimSpace(n) != ""
}

func validOrigin(o string) bool {
	if o == "" || len(o) > 512 {
		return false
	}
	for i := 0; i < len(o); i++ {
		if o[i] <= 0x20 || o[i] >= 0x7f {
			return false
		}
	}
	return true
}

func clone(d Device) Device {
	d.PublicKey = slices.Clone(d.PublicKey)
	return d
}

// Add records a newly paired device. Pairing the same key from the same
// origin again returns the existing device, so a retried approval does not
// create duplicates.
func (s *DeviceStore) Add(name, origin string, publicKey []byte) (Device, error) {
	if !validName(name) {
		return Device{}, fmt.Errorf("%w: %q", ErrBadDeviceName, name)
	}
	if !validOrigin(origin) {
		return Device{}, fmt.Errorf("%w: %q", ErrBadOrigin, origin)
	}
	if !ValidPublicKey(publicKey) {
		return Device{}, ErrBadPublicKey
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.Origin == origin && string(d.PublicKey) == string(publicKey) {
			return clone(d), nil
		}
	}
	now := time.Now().UTC().Truncate(time.Second)
	d := Device{
		ID:        "dev_" + randomHex(12),
		Name:      s.uniqueNameLocked(name, ""),
		Origin:    origin,
		PublicKey: slices.Clone(publicKey),
		CreatedAt: now,
		LastSeen:  now,
	}
	next := append(slices.Clone(s.devices), d)
	if err := s.save(next); err != nil {
		return Device{}, err
	}
	s.devices = next
	s.persisted[d.ID] = d.LastSeen
	return clone(d), nil
}

// ErrNameTaken: another device already has the name asked for.
var ErrNameTaken = errors.New("pairing: another device already has that name")

// uniqueNameLocked is name, or name with the first free " (N)" suffix when
// another device (not except) has it: people and `--browser` tell browsers
// apart by name. Names compare case-insensitively. Under s.mu.
// With before >= 0 only the devices before that index count (loading).
func (s *DeviceStore) uniqueNameLocked(name, except string, before ...int) string {
	devs := s.devices
	if len(before) > 0 {
		devs = devs[:before[0]]
	}
	taken := func(n string) bool {
		for _, d := range devs {
			if d.ID != except && strings.EqualFold(d.Name, n) {
				return true
			}
		}
		return false
	}
	if !taken(name) {
		return name
	}
	for i := 2; ; i++ {
		suffix := fmt.Sprintf(" (%d)", i)
		base := []rune(name)
		if len(base)+len(suffix) > MaxDeviceName {
			base = base[:MaxDeviceName-len(suffix)]
		}
		if n := string(base) + suffix; !taken(n) {
			return n
		}
	}
}

// Rename gives device id a new name, which no other device may have.
func (s *DeviceStore) Rename(id, name string) (Device, error) {
	if !validName(name) {
		return Device{}, fmt.Errorf("%w: %q", ErrBadDeviceName, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.index(id)
	if i < 0 {
		return Device{}, fmt.Errorf("%w: %q", ErrUnknownDevice, id)
	}
	if s.uniqueNameLocked(name, id) != name {
		return Device{}, fmt.Errorf("%w: %q", ErrNameTaken, name)
	}
	next := slices.Clone(s.devices)
	next[i].Name = name
	if err := s.save(next); err != nil {
		return Device{}, err
	}
	s.devices = next
	return clone(next[i]), nil
}

// Find is the device with ID or name nameOrID (names case-insensitively,
// an exact match first).
func (s *DeviceStore) Find(nameOrID string) (Device, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.devices {
		if d.ID == nameOrID || d.Name == nameOrID {
			return clone(d), true
		}
	}
	for _, d := range s.devices {
		if strings.EqualFold(d.Name, nameOrID) {
			return clone(d), true
		}
	}
	return Device{}, false
}

// Get returns a copy of the device with id.
func (s *DeviceStore) Get(id string) (Device, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := s.index(id); i >= 0 {
		return clone(s.devices[i]), true
	}
	return Device{}, false
}

// List returns copies of all devices, oldest first.
func (s *DeviceStore) List() []Device {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Device, len(s.devices))
	for i, d := range s.devices {
		out[i] = clone(d)
	}
	return out
}

// Revoke removes the device; the caller closes its live connections.
func (s *DeviceStore) Revoke(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.index(id)
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrUnknownDevice, id)
	}
	next := slices.Delete(slices.Clone(s.devices), i, i+1)
	if err := s.save(next); err != nil {
		return err
	}
	s.devices = next
	delete(s.persisted, id)
	return nil
}

// Touch sets lastSeen. The file is rewritten only when the stored value is
// more than a minute older, so List may be fresher than the file.
func (s *DeviceStore) Touch(id string, t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.index(id)
	if i < 0 {
		return fmt.Errorf("%w: %q", ErrUnknownDevice, id)
	}
	t = t.UTC()
	s.devices[i].LastSeen = t
	if t.Sub(s.persisted[id]) < touchInterval {
		return nil
	}
	if err := s.save(s.devices); err != nil {
		return err
	}
	s.persisted[id] = t
	return nil
}

func (s *DeviceStore) index(id string) int {
	for i, d := range s.devices {
		if d.ID == id {
			return i
		}
	}
	return -1
}

func (s *DeviceStore) save(devs []Device) error {
	if devs == nil {
		devs = []Device{}
	}
	data, err := json.MarshalIndent(deviceFile{Version: 1, Devices: devs}, "", "  ")
	if err != nil {
		return err
	}
	// SECURITY I-9: 0600, atomic.
	return atomicfile.Write(s.path, append(data, '\n'), 0o600)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
