package bus

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/team/teamtest"
)

// Online from the watched view follows a claim and a release, and drops a
// key whose lease ran out as seen here (the bucket tells no one of
// expiries), while a fresh read still asks the bucket.
func TestOnlineViewFollowsClaimsReleasesAndLeases(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	var mu sync.Mutex
	skew := time.Duration(0)
	caller := newBus(t, srv, "caller", withClock(func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return time.Now().Add(skew)
	}))
	home := newBus(t, srv, "home")
	dev := deviceID(t)
	until := func(what string, ok func(map[string]string) bool) {
		t.Helper()
		ctx := ctxFor(t, 5*time.Second)
		for {
			online, err := caller.Online(ctx, false)
			if err == nil && ok(online) {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: Online = %v %v", what, online, err)
			case <-time.After(5 * time.Millisecond): // the watch's delivery, on NATS's time
			}
		}
	}
	stop := serve(t, home, dev, echo("home"))
	until("after the claim", func(m map[string]string) bool { return m[dev] == "home" })

	mu.Lock()
	skew = defaultTiming.lease // no renewal seen for a whole lease
	mu.Unlock()
	if online, _ := caller.Online(context.Background(), false); online[dev] != "" {
		t.Fatalf("a key whose lease ran out here is still online: %v", online)
	}
	if online, err := caller.Online(ctxFor(t, 5*time.Second), true); err != nil || online[dev] != "home" {
		t.Fatalf("the bucket read: %v %v", online, err)
	}
	until("after a renewal", func(m map[string]string) bool { return m[dev] == "home" })

	stop()
	until("after the release", func(m map[string]string) bool { _, ok := m[dev]; return !ok })
}

// ClaimedSince says whether a browser may have connected since a moment:
// a claim seen after it, a view not complete, or NATS away all say yes; a
// renewal is not a claim.
func TestClaimedSinceSeesClaimsNotRenewals(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	caller, home := newBus(t, srv, "caller"), newBus(t, srv, "home")
	dev := deviceID(t)
	ctx := ctxFor(t, 10*time.Second)
	for !caller.viewComplete() {
		select {
		case <-ctx.Done():
			t.Fatal("the view never completed")
		case <-time.After(5 * time.Millisecond): // the watch's first delivery
		}
	}
	before := time.Now()
	if caller.ClaimedSince(before) {
		t.Fatal("a claim reported with none made")
	}
	serve(t, home, dev, echo("home"))
	for !caller.ClaimedSince(before) {
		select {
		case <-ctx.Done():
			t.Fatal("the claim was never seen")
		case <-time.After(5 * time.Millisecond): // the watch's delivery
		}
	}
	after := time.Now()
	home.renewAll() // a renewal, seen by the watch like any put
	if online, err := caller.Online(ctx, true); err != nil || online[dev] != "home" {
		t.Fatalf("Online: %v %v", online, err)
	}
	time.Sleep(50 * time.Millisecond) // let the renewal's put reach the view
	if caller.ClaimedSince(after) {
		t.Fatal("a renewal was taken for a claim")
	}
}

// viewComplete reports whether Online may answer from the view.
func (b *Bus) viewComplete() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.view.ready
}

// A renewal that writes the key just as the device is released (its
// update or re-creation lands after the release's delete) takes its own
// write back out: a released device never reads as online again.
func TestRenewalRacingAReleaseIsWithdrawn(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATS(t)
	home := newBus(t, srv, "home")
	dev := deviceID(t)
	stop := serve(t, home, dev, echo("home"))
	home.mu.Lock()
	s := home.served[dev]
	home.mu.Unlock()
	s.mu.Lock()
	rev := s.rev // what a renewal read before the release
	s.mu.Unlock()
	stop()
	ctx := ctxFor(t, 5*time.Second)
	kv := home.bucket()
	n, err := kv.Create(ctx, dev, home.record()) // the renewal's write, after the release
	if err != nil {
		t.Fatal(err)
	}
	home.keepOrUndo(ctx, kv, s, rev, n)
	if online, err := home.Online(ctx, true); err != nil || online[dev] != "" {
		t.Fatalf("a released device is online again: %v %v", online, err)
	}
}
