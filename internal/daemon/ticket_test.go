package daemon

import (
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
)

// SECURITY I-57 across daemon restarts, over real sockets.

func ticketOpts(tk string) *linktest.Options {
	return &linktest.Options{Subprotocols: []string{link.Subprotocol, link.TicketSubprotocolPrefix + tk}}
}

// ticketFor authenticates d on a new connection and returns the ticket.
func (td *testDaemon) ticketFor(ctx context.Context, d *linktest.Device) string {
	td.t.Helper()
	c, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		td.t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SayHello(ctx, d.ID); err != nil {
		td.t.Fatal(err)
	}
	res, err := c.Auth(ctx, d)
	if err != nil || res.Ticket == "" {
		td.t.Fatalf("auth: %v (ticket %q)", err, res.Ticket)
	}
	return res.Ticket
}

// holdAllSlots fills every unauthenticated slot with connections that name
// a paired device in torii/hello and never authenticate: none of them can
// be evicted (SECURITY I-4), so the next upgrade without a live ticket is
// refused with 503. It returns once that refusal is seen.
func (td *testDaemon) holdAllSlots(ctx context.Context, deviceID string) {
	td.t.Helper()
	for i := 0; ; i++ {
		c, err := linktest.Dial(ctx, td.url, nil)
		if linktest.StatusOf(err) == http.StatusServiceUnavailable {
			if i != link.MaxUnauthenticated {
				td.t.Fatalf("503 after %d held connections, want %d", i, link.MaxUnauthenticated)
			}
			return
		}
		if err != nil {
			td.t.Fatalf("flood %d: %v", i, err)
		}
		td.t.Cleanup(func() { c.Close() })
		if _, err := c.SayHello(ctx, deviceID); err != nil {
			td.t.Fatalf("flood %d hello: %v", i, err)
		}
	}
}

// A ticket issued before a restart gets the reserved slot after it: with
// every unauthenticated slot held, the extension's reconnect still gets
// in and authenticates.
func TestTicketSurvivesDaemonRestartUnderFlood(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	td2, dev, tk := td.ticketAcrossRestart(ctx)
	back, err := linktest.Connect(ctx, td2.url, dev, ticketOpts(tk))
	if err != nil {
		t.Fatalf("the reconnect with a ticket from before the restart: %v", err)
	}
	back.Close()
	if _, err := linktest.Dial(ctx, td2.url, nil); linktest.StatusOf(err) != http.StatusServiceUnavailable {
		t.Fatalf("an anonymous upgrade during the flood: %v, want 503", err)
	}
}

// ticketAcrossRestart pairs a device, takes its ticket, restarts the
// daemon and fills every unauthenticated slot of the new one.
func (td *testDaemon) ticketAcrossRestart(ctx context.Context) (*testDaemon, *linktest.Device, string) {
	td.t.Helper()
	dev, c := td.otpPairedDevice(ctx, "ext")
	c.Close()
	tk := td.ticketFor(ctx, dev)
	td.stop()
	td2 := runDaemon(td.t, td.opts)
	td2.holdAllSlots(ctx, dev.ID)
	return td2, dev, tk
}

// A corrupt tickets file does not stop the daemon: it starts, and the next
// authentication writes a good file that the next start uses.
func TestCorruptTicketFileDoesNotStopDaemon(t *testing.T) {
	t.Parallel()
	paths := testPaths(t)
	if err := paths.Ensure(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(paths.Tickets(), []byte("{\"version\":1,\"devices\":{\"dev_"), 0o600); err != nil {
		t.Fatal(err)
	}
	td := runDaemon(t, Options{Paths: paths, Config: startDaemonCfg(), Version: "test", Logger: testLogger(t)})
	ctx := tctx(t)
	td2, dev, tk := td.ticketAcrossRestart(ctx)
	back, err := linktest.Connect(ctx, td2.url, dev, ticketOpts(tk))
	if err != nil {
		t.Fatalf("the ticket saved over a corrupt file did not survive the restart: %v", err)
	}
	back.Close()
}

// A revoked device's ticket does not survive a restart: at a full house it
// goes the anonymous way and is refused, while another device's ticket
// still gets in.
func TestRevokedTicketDoesNotSurviveDaemonRestart(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	dev, c1 := td.otpPairedDevice(ctx, "revoked")
	other, c2 := td.otpPairedDevice(ctx, "kept")
	c1.Close()
	c2.Close()
	tk, otherTk := td.ticketFor(ctx, dev), td.ticketFor(ctx, other)
	var res DevicesRevokeResult
	td.call("devices.revoke", DevicesRevokeParams{DeviceID: dev.ID}, &res)
	td.stop()

	td2 := runDaemon(t, td.opts)
	td2.holdAllSlots(ctx, other.ID)
	if _, err := linktest.Dial(ctx, td2.url, ticketOpts(tk)); linktest.StatusOf(err) != http.StatusServiceUnavailable {
		t.Fatalf("a revoked device's ticket after a restart: %v, want 503 (the anonymous way, full)", err)
	}
	back, err := linktest.Connect(ctx, td2.url, other, ticketOpts(otherTk))
	if err != nil {
		t.Fatalf("the other device's ticket after the revocation and a restart: %v", err)
	}
	back.Close()
}
