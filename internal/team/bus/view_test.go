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
