package pairing

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/atomicfile"
)

func devKey(t *testing.T, label string) []byte {
	t.Helper()
	id, err := NewIdentityFromScalar(seeded("devstore/" + label))
	if err != nil {
		t.Fatal(err)
	}
	return id.PublicKey()
}

func TestDeviceStorePersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "devices.json")
	s, err := OpenDeviceStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.List()) != 0 {
		t.Fatal("new store not empty")
	}
	k1, k2 := devKey(t, "1"), devKey(t, "2")
	d1, err := s.Add("Work laptop · Chrome", vectorOrigin, k1)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(d1.ID, "dev_") || len(d1.ID) < 12 {
		t.Fatalf("id %q", d1.ID)
	}
	d2, err := s.Add("Other", vectorOrigin, k2)
	if err != nil {
		t.Fatal(err)
	}
	if d1.ID == d2.ID {
		t.Fatal("duplicate ids")
	}
	// Same origin + key: the existing device, not a new one.
	again, err := s.Add("renamed", vectorOrigin, k1)
	if err != nil || again.ID != d1.ID || len(s.List()) != 2 {
		t.Fatalf("re-add: %+v %v (%d devices)", again, err, len(s.List()))
	}
	// Same key from another origin is another device.
	d3, err := s.Add("Other origin", "chrome-extension://aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", k1)
	if err != nil || d3.ID == d1.ID {
		t.Fatalf("other origin: %+v %v", d3, err)
	}

	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %04o, want 0600", fi.Mode().Perm())
	}

	r, err := OpenDeviceStore(path)
	if err != nil {
		t.Fatal(err)
	}
	got, ok := r.Get(d1.ID)
	if !ok || got.Name != d1.Name || got.Origin != vectorOrigin || !bytes.Equal(got.PublicKey, k1) || !got.CreatedAt.Equal(d1.CreatedAt) {
		t.Fatalf("reloaded %+v, want %+v", got, d1)
	}
	if len(r.List()) != 3 {
		t.Fatalf("reloaded %d devices", len(r.List()))
	}

	if err := r.Revoke(d1.ID); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Get(d1.ID); ok {
		t.Fatal("revoked device still present")
	}
	if err := r.Revoke(d1.ID); !errors.Is(err, ErrUnknownDevice) {
		t.Fatalf("second revoke: %v", err)
	}
	r2, err := OpenDeviceStore(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r2.Get(d1.ID); ok || len(r2.List()) != 2 {
		t.Fatal("revocation not persisted")
	}
	// After revocation the same key pairs as a fresh device with a new ID.
	d4, err := r2.Add("back", vectorOrigin, k1)
	if err != nil || d4.ID == d1.ID {
		t.Fatalf("re-pair after revoke: %+v %v", d4, err)
	}
}

func TestDeviceStoreCopies(t *testing.T) {
	s, _ := OpenDeviceStore(filepath.Join(t.TempDir(), "devices.json"))
	d, err := s.Add("x", vectorOrigin, devKey(t, "c"))
	if err != nil {
		t.Fatal(err)
	}
	d.PublicKey[5] ^= 0xff
	l := s.List()
	l[0].PublicKey[6] ^= 0xff
	got, _ := s.Get(d.ID)
	if !bytes.Equal(got.PublicKey, devKey(t, "c")) {
		t.Fatal("caller mutation reached the store")
	}
}

func TestDeviceStoreBadInput(t *testing.T) {
	s, _ := OpenDeviceStore(filepath.Join(t.TempDir(), "devices.json"))
	k := devKey(t, "b")
	off := bytes.Clone(k)
	off[64] ^= 1
	cases := []struct {
		name, dname, origin string
		key                 []byte
		want                error
	}{
		{"empty name", "", vectorOrigin, k, ErrBadDeviceName},
		{"blank name", "   ", vectorOrigin, k, ErrBadDeviceName},
		{"long name", strings.Repeat("é", MaxDeviceName+1), vectorOrigin, k, ErrBadDeviceName},
		{"newline in name", "a\nb", vectorOrigin, k, ErrBadDeviceName},
		{"escape in name", "a\x1b[2Jb", vectorOrigin, k, ErrBadDeviceName},
		{"bidi override in name", "a\u202eb", vectorOrigin, k, ErrBadDeviceName},
		{"invalid utf8 name", "a\xffb", vectorOrigin, k, ErrBadDeviceName},
		{"empty origin", "x", "", k, ErrBadOrigin},
		{"origin with space", "x", "chrome-extension://a b", k, ErrBadOrigin},
		{"short key", "x", vectorOrigin, k[:64], ErrBadPublicKey},
		{"off-curve key", "x", vectorOrigin, off, ErrBadPublicKey},
		{"nil key", "x", vectorOrigin, nil, ErrBadPublicKey},
	}
	for _, c := range cases {
		if _, err := s.Add(c.dname, c.origin, c.key); !errors.Is(err, c.want) {
			t.Errorf("%s: err %v, want %v", c.name, err, c.want)
		}
	}
	if len(s.List()) != 0 {
		t.Fatal("bad input was stored")
	}
	if err := s.Touch("dev_nope", time.Now()); !errors.Is(err, ErrUnknownDevice) {
		t.Errorf("touch unknown: %v", err)
	}
	if _, ok := s.Get("dev_nope"); ok {
		t.Error("get unknown")
	}
}

func TestDeviceStoreRefusesBadFiles(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "devices.json")
	s, _ := OpenDeviceStore(path)
	if _, err := s.Add("x", vectorOrigin, devKey(t, "f")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenDeviceStore(path); !errors.Is(err, atomicfile.ErrPermTooOpen) {
		t.Fatalf("0644: %v", err)
	}
	for name, body := range map[string]string{
		"not json":      "{",
		"bad key":       `{"version":1,"devices":[{"deviceId":"dev_1","publicKey":"AAAA"}]}`,
		"no id":         `{"version":1,"devices":[{"deviceId":"","publicKey":"` + stdB64(devKey(t, "f")) + `"}]}`,
		"duplicate ids": `{"version":1,"devices":[{"deviceId":"dev_1","publicKey":"` + stdB64(devKey(t, "f")) + `"},{"deviceId":"dev_1","publicKey":"` + stdB64(devKey(t, "g")) + `"}]}`,
	} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_")+".json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := OpenDeviceStore(p); !errors.Is(err, ErrCorruptStore) {
			t.Errorf("%s: %v, want ErrCorruptStore", name, err)
		}
	}
}

// stdB64 is how encoding/json writes []byte.
func stdB64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func TestDeviceStoreTouch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "devices.json")
	s, _ := OpenDeviceStore(path)
	d, err := s.Add("x", vectorOrigin, devKey(t, "t"))
	if err != nil {
		t.Fatal(err)
	}
	t1 := d.LastSeen.Add(10 * time.Second)
	if err := s.Touch(d.ID, t1); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Get(d.ID); !got.LastSeen.Equal(t1) {
		t.Fatalf("in-memory lastSeen %v, want %v", got.LastSeen, t1)
	}
	// Within a minute of the stored value: the file is not rewritten.
	r, _ := OpenDeviceStore(path)
	if got, _ := r.Get(d.ID); !got.LastSeen.Equal(d.LastSeen) {
		t.Fatalf("touch within a minute was written: %v", got.LastSeen)
	}
	t2 := d.LastSeen.Add(2 * time.Minute)
	if err := s.Touch(d.ID, t2); err != nil {
		t.Fatal(err)
	}
	r, _ = OpenDeviceStore(path)
	if got, _ := r.Get(d.ID); !got.LastSeen.Equal(t2) {
		t.Fatalf("touch after a minute not written: %v, want %v", got.LastSeen, t2)
	}
}

func TestDeviceStoreConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "devices.json")
	s, _ := OpenDeviceStore(path)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := s.Add("x", vectorOrigin, devKey(t, string(rune('a'+i))))
			if err != nil {
				t.Error(err)
				return
			}
			_ = s.Touch(d.ID, time.Now().Add(time.Hour))
			s.List()
		}()
	}
	wg.Wait()
	r, err := OpenDeviceStore(path)
	if err != nil || len(r.List()) != 8 {
		t.Fatalf("after concurrent adds: %v, %d devices", err, len(r.List()))
	}
}

// Two devices never share a name: a second one asking for a taken name
// (any case) gets the first free suffix, still within MaxDeviceName; a
// rename to a taken name is refused and leaves the name as it was.
func TestDeviceNamesDistinct(t *testing.T) {
	s, err := OpenDeviceStore(filepath.Join(t.TempDir(), "devices.json"))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Add("Chrome on Linux", "o", devKey(t, "a"))
	b, _ := s.Add("chrome on linux", "o", devKey(t, "b"))
	c, _ := s.Add("Chrome on Linux", "o", devKey(t, "c"))
	if a.Name != "Chrome on Linux" || b.Name != "chrome on linux (2)" || c.Name != "Chrome on Linux (3)" {
		t.Fatalf("names: %q %q %q", a.Name, b.Name, c.Name)
	}
	long := strings.Repeat("x", MaxDeviceName)
	l1, _ := s.Add(long, "o", devKey(t, "l1"))
	l2, _ := s.Add(long, "o", devKey(t, "l2"))
	if l1.Name != long || len([]rune(l2.Name)) != MaxDeviceName || !strings.HasSuffix(l2.Name, " (2)") {
		t.Fatalf("long names: %q %q", l1.Name, l2.Name)
	}
	if _, err := s.Rename(b.ID, "CHROME ON LINUX"); !errors.Is(err, ErrNameTaken) {
		t.Fatalf("rename to a taken name: %v", err)
	}
	if got, _ := s.Get(b.ID); got.Name != "chrome on linux (2)" {
		t.Fatalf("refused rename changed the name: %q", got.Name)
	}
	if _, err := s.Rename(b.ID, "Work"); err != nil {
		t.Fatal(err)
	}
	if got, ok := s.Find("work"); !ok || got.ID != b.ID {
		t.Fatalf("find by name, any case: %+v %v", got, ok)
	}
	if _, err := s.Rename("dev_nope", "x"); !errors.Is(err, ErrUnknownDevice) {
		t.Fatalf("rename unknown: %v", err)
	}
}

// A store written before names were distinct is made so when opened: the
// later device of a shared name gets the suffix, on disk too.
func TestDeviceStoreOpensWithDistinctNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "devices.json")
	s, err := OpenDeviceStore(path)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := s.Add("Chrome on Linux", "o", devKey(t, "a"))
	b, _ := s.Add("Other", "o", devKey(t, "b"))
	// As an older daemon could have written it.
	s.mu.Lock()
	s.devices[1].Name = "Chrome on Linux"
	if err := s.save(s.devices); err != nil {
		t.Fatal(err)
	}
	s.mu.Unlock()
	for range 2 {
		s2, err := OpenDeviceStore(path)
		if err != nil {
			t.Fatal(err)
		}
		ga, _ := s2.Get(a.ID)
		gb, _ := s2.Get(b.ID)
		if ga.Name != "Chrome on Linux" || gb.Name != "Chrome on Linux (2)" {
			t.Fatalf("opened: %q %q", ga.Name, gb.Name)
		}
	}
}
