package link_test

import (
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/pairing"
)

// runAt is one run of a link server on the state in dir, as a daemon
// start is: the stores and the ticket file are read afresh. stop ends it.
type runAt struct {
	srv  *link.Server
	url  string
	devs *pairing.DeviceStore
	log  *linktest.LogBuffer
	stop func()
}

func startAt(t *testing.T, dir string) *runAt {
	t.Helper()
	id, devs := linktest.Stores(t, dir)
	lb := &linktest.LogBuffer{}
	srv := link.NewServer(link.Options{Identity: id, Devices: devs, Pairer: slowApprover{devs, 0}, LoopbackBind: true,
		TicketFile: filepath.Join(dir, "tickets.json"), Logger: slog.New(slog.NewTextHandler(lb, nil))})
	hs := httptest.NewServer(srv)
	var once sync.Once
	stop := func() {
		once.Do(func() {
			srv.Hub().CloseAll(websocket.StatusGoingAway, "test over")
			srv.Hub().Wait()
			hs.Close()
		})
	}
	t.Cleanup(stop)
	return &runAt{srv: srv, url: "ws" + strings.TrimPrefix(hs.URL, "http") + "/acp", devs: devs, log: lb, stop: stop}
}

// pairedAt pairs a fresh device into dir's store.
func pairedAt(t *testing.T, dir string) *linktest.Device {
	t.Helper()
	id, devs := linktest.Stores(t, dir)
	d, _ := linktest.NewDevice("extension")
	stored, err := devs.Add(d.Name, linktest.ExtensionOrigin, d.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	d.ID, d.DaemonKey = stored.ID, id.PublicKey()
	return d
}

// ticketOf authenticates d on a fresh connection to r and returns its ticket.
func ticketOf(t *testing.T, r *runAt, d *linktest.Device) string {
	t.Helper()
	c := ctx(t)
	cl, err := linktest.Dial(c, r.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	return authTicket(t, c, cl, d)
}

// reserves reports whether a connection offering tk takes a reserved slot
// (the unauthenticated count does not move) on r.
func reserves(t *testing.T, r *runAt, tk string) bool {
	t.Helper()
	base := r.srv.Hub().Unauthenticated()
	return probeUnauth(t, r.srv, r.url, withTicket(tk)) == base
}

// probeUnauth dials url with opts and returns the server's count of
// unauthenticated connections while it is open. It returns once the server
// has forgotten the closed connection too (a moment after the client sees
// it closed), so the next probe's baseline does not include it.
func probeUnauth(t *testing.T, srv *link.Server, url string, opts *linktest.Options) int {
	t.Helper()
	c := ctx(t)
	before := srv.Hub().Unauthenticated()
	cl, err := linktest.Dial(c, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	n := srv.Hub().Unauthenticated()
	cl.Close()
	if _, err := cl.WaitClosed(c); err != nil {
		t.Fatal(err)
	}
	waitHub(t, srv.Hub(), "the server to forget a closed connection", func() bool { return srv.Hub().Unauthenticated() <= before })
	return n
}

// SECURITY I-57: a ticket issued before a restart still takes the
// device's reserved slot after it, and the reconnect on it is never
// evicted however many anonymous connections arrive first; the file holds
// hashes only, owner-only.
func TestTicketSurvivesRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dev := pairedAt(t, dir)
	first := startAt(t, dir)
	tk := ticketOf(t, first, dev)
	first.stop()

	path := filepath.Join(dir, "tickets.json")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("tickets file mode %04o, want 0600", fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), tk) {
		t.Fatal("the tickets file holds the ticket itself")
	}

	second := startAt(t, dir)
	c := ctx(t)
	withT, err := linktest.Dial(c, second.url, withTicket(tk))
	if err != nil {
		t.Fatal(err)
	}
	defer withT.Close()
	var flood []*linktest.Client
	defer func() {
		for _, f := range flood {
			f.Close()
		}
	}()
	for i := 0; i < 2*link.MaxUnauthenticated; i++ {
		f, err := linktest.Dial(c, second.url, nil)
		if err != nil {
			t.Fatalf("flood %d: %v", i, err)
		}
		flood = append(flood, f)
	}
	if n := second.srv.Hub().Unauthenticated(); n != link.MaxUnauthenticated {
		t.Fatalf("unauthenticated count %d, want the cap %d", n, link.MaxUnauthenticated)
	}
	next := authTicket(t, c, withT, dev)
	withT.Close()
	second.stop()

	// The ticket issued after the restart is saved too.
	third := startAt(t, dir)
	if !reserves(t, third, next) {
		t.Fatal("a ticket issued after a restart did not survive the next one")
	}
}

// A corrupt, unreadable or too open tickets file is ignored with a
// warning: the server starts, pairing and authentication work, and the
// next authentication writes a good file.
func TestCorruptTicketFileIsIgnored(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		data string
		mode os.FileMode
	}{
		{"garbage", "{\"version\":1,\"devices\":{\"dev_", 0o600},
		{"wrong version", `{"version":99,"devices":{}}`, 0o600},
		{"bad hashes", `{"version":1,"devices":{"dev_x":["zz", 7]}}`, 0o600},
		{"open to others", `{"version":1,"devices":{}}`, 0o644},
		{"a directory", "", os.ModeDir | 0o700},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			dev := pairedAt(t, dir)
			path := filepath.Join(dir, "tickets.json")
			if tc.mode.IsDir() {
				if err := os.Mkdir(path, 0o700); err != nil {
					t.Fatal(err)
				}
			} else {
				if err := os.WriteFile(path, []byte(tc.data), tc.mode); err != nil {
					t.Fatal(err)
				}
				_ = os.Chmod(path, tc.mode)
			}
			r := startAt(t, dir)
			tk := ticketOf(t, r, dev)
			if !strings.Contains(r.log.String(), "tickets") {
				t.Errorf("no warning about the tickets file in the log:\n%s", r.log)
			}
			if tc.mode.IsDir() {
				return // nothing can be saved over a directory; in memory it still works
			}
			r.stop()
			if !reserves(t, startAt(t, dir), tk) {
				t.Fatal("after a corrupt file, a new ticket was not saved")
			}
		})
	}
}

// A revoked device's tickets leave the file with the revocation, and a
// device removed while the server was down has its hashes dropped at load.
func TestRevokedTicketDoesNotSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dev := pairedAt(t, dir)
	other := pairedAt(t, dir)
	r := startAt(t, dir)
	tk, otherTk := ticketOf(t, r, dev), ticketOf(t, r, other)
	if err := r.devs.Revoke(dev.ID); err != nil {
		t.Fatal(err)
	}
	r.srv.Hub().CloseDevice(dev.ID)
	r.stop()
	data, _ := os.ReadFile(filepath.Join(dir, "tickets.json"))
	if strings.Contains(string(data), dev.ID) {
		t.Fatalf("a revoked device is still in the tickets file: %s", data)
	}
	r = startAt(t, dir)
	if reserves(t, r, tk) {
		t.Fatal("a revoked device's ticket reserved a slot after a restart")
	}
	if !reserves(t, r, otherTk) {
		t.Fatal("another device's ticket was lost with the revocation")
	}
	r.stop()

	// Revoked behind the server's back (no CloseDevice): dropped at load.
	if err := r.devs.Revoke(other.ID); err != nil {
		t.Fatal(err)
	}
	r = startAt(t, dir)
	if reserves(t, r, otherTk) {
		t.Fatal("a ticket of a device no longer paired reserved a slot")
	}
	data, _ = os.ReadFile(filepath.Join(dir, "tickets.json"))
	if strings.Contains(string(data), other.ID) {
		t.Fatalf("a device no longer paired is still in the tickets file: %s", data)
	}
}
