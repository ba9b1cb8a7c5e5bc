package link_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/pairing"
)

// ticketServer is a link server with two paired devices and their store.
func ticketServer(t *testing.T) (*link.Server, string, *pairing.DeviceStore, *linktest.Device, *linktest.Device) {
	t.Helper()
	dir := t.TempDir()
	id, devs := linktest.Stores(t, dir)
	var paired []*linktest.Device
	for _, name := range []string{"extension", "other profile"} {
		d, _ := linktest.NewDevice(name)
		stored, err := devs.Add(d.Name, linktest.ExtensionOrigin, d.PublicKey())
		if err != nil {
			t.Fatal(err)
		}
		d.ID, d.DaemonKey = stored.ID, id.PublicKey()
		paired = append(paired, d)
	}
	srv := link.NewServer(link.Options{Identity: id, Devices: devs, Pairer: slowApprover{devs, 0}, LoopbackBind: true})
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Hub().CloseAll(websocket.StatusGoingAway, "test over")
		srv.Hub().Wait()
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http") + "/acp", devs, paired[0], paired[1]
}

// authTicket authenticates d on c and returns the ticket it was given.
func authTicket(t *testing.T, c context.Context, cl *linktest.Client, d *linktest.Device) string {
	t.Helper()
	if _, err := cl.SayHello(c, d.ID); err != nil {
		t.Fatal(err)
	}
	res, err := cl.Auth(c, d)
	if err != nil {
		t.Fatal(err)
	}
	if res.Ticket == "" {
		t.Fatal("torii/auth gave no ticket")
	}
	return res.Ticket
}

func withTicket(tk string) *linktest.Options {
	return &linktest.Options{Subprotocols: []string{link.Subprotocol, link.TicketSubprotocolPrefix + tk}}
}

// SECURITY I-57: a reconnect that shows its ticket is never evicted, however
// many anonymous connections arrive before it says anything; the same
// connection without a ticket is (1013).
func TestTicketReconnectIsNeverEvicted(t *testing.T) {
	t.Parallel()
	srv, url, _, dev, _ := ticketServer(t)
	c, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	first, err := linktest.Dial(c, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	tk := authTicket(t, c, first, dev)
	first.Close()

	// The second round uses the ticket the first one's auth returned.
	for round := 0; round < 2; round++ {
		withT, err := linktest.Dial(c, url, withTicket(tk))
		if err != nil {
			t.Fatalf("round %d: dial with ticket: %v", round, err)
		}
		without, err := linktest.Dial(c, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Twice the cap of anonymous newcomers, before either says hello:
		// each one past the cap evicts the oldest anonymous connection.
		var flood []*linktest.Client
		for i := 0; i < 2*link.MaxUnauthenticated; i++ {
			f, err := linktest.Dial(c, url, nil)
			if err != nil {
				t.Fatalf("flood %d: %v", i, err)
			}
			flood = append(flood, f)
		}
		if code, err := without.WaitClosed(c); err != nil || code != websocket.StatusTryAgainLater {
			t.Fatalf("round %d: the connection without a ticket: close %v (%v), want 1013", round, code, err)
		}
		tk = authTicket(t, c, withT, dev)
		if n := srv.Hub().Unauthenticated(); n != link.MaxUnauthenticated {
			t.Fatalf("round %d: unauthenticated count %d, want the cap %d", round, n, link.MaxUnauthenticated)
		}
		withT.Close()
		for _, f := range flood {
			f.Close()
		}
	}
}

// A ticket reserves at most MaxReservedPerDevice connections; the next one
// with it is an ordinary anonymous connection.
func TestTicketReservesAtMostTwo(t *testing.T) {
	t.Parallel()
	srv, url, _, dev, _ := ticketServer(t)
	c := ctx(t)
	first, err := linktest.Dial(c, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	tk := authTicket(t, c, first, dev)
	first.Close()
	for i := 0; i < link.MaxReservedPerDevice+1; i++ {
		cl, err := linktest.Dial(c, url, withTicket(tk))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
	}
	if n := srv.Hub().Unauthenticated(); n != 1 {
		t.Fatalf("unauthenticated count %d, want 1 (two reserved, one anonymous)", n)
	}
}

// The slot is the ticket's device's only: authenticating as another paired
// device on it fails and closes the connection (1008).
func TestTicketConnectionMustBeItsDevice(t *testing.T) {
	t.Parallel()
	_, url, _, dev, other := ticketServer(t)
	c := ctx(t)
	first, err := linktest.Dial(c, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	tk := authTicket(t, c, first, dev)
	first.Close()
	cl, err := linktest.Dial(c, url, withTicket(tk))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if _, err := cl.SayHello(c, other.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Auth(c, other); err == nil {
		t.Fatal("another device authenticated on a ticket's reserved slot")
	}
	if code, _ := cl.WaitClosed(c); code != websocket.StatusPolicyViolation {
		t.Fatalf("close %v, want 1008", code)
	}
}

// Only the two newest tickets of a device work, and none once the device is
// revoked.
func TestStaleOrRevokedTicketReservesNothing(t *testing.T) {
	t.Parallel()
	srv, url, devs, dev, _ := ticketServer(t)
	c := ctx(t)
	var tks []string
	for i := 0; i < 3; i++ {
		cl, err := linktest.Dial(c, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		tks = append(tks, authTicket(t, c, cl, dev))
		cl.Close()
	}
	unauth := func(opts *linktest.Options) int { return probeUnauth(t, srv, url, opts) }
	base := srv.Hub().Unauthenticated()
	if n := unauth(withTicket(tks[0])); n != base+1 {
		t.Fatalf("the oldest of three tickets reserved a slot (count %d)", n)
	}
	if n := unauth(withTicket(tks[2])); n != base {
		t.Fatalf("the newest ticket did not reserve a slot (count %d)", n)
	}
	if err := devs.Revoke(dev.ID); err != nil {
		t.Fatal(err)
	}
	srv.Hub().CloseDevice(dev.ID)
	if n := unauth(withTicket(tks[2])); n != base+1 {
		t.Fatalf("a revoked device's ticket reserved a slot (count %d)", n)
	}
}
