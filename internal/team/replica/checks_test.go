package replica

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

// fakeStore answers the checks' four questions from maps and counts them.
type fakeStore struct {
	store.Store
	mu      sync.Mutex
	tokens  map[string]store.Token // by secret
	devices []store.Device
	down    bool
	asked   int
	// answered, when set, runs after CheckToken read its answer and
	// before it returns it.
	answered func()
}

func (f *fakeStore) CheckToken(_ context.Context, secret string) (store.Token, error) {
	f.mu.Lock()
	f.asked++
	t, ok := f.tokens[secret]
	down, answered := f.down, f.answered
	f.mu.Unlock()
	if answered != nil {
		answered()
	}
	switch {
	case down:
		return store.Token{}, store.ErrUnavailable
	case !ok:
		return store.Token{}, store.ErrNotFound
	}
	return t, nil
}

func (f *fakeStore) LiveTokens(_ context.Context, ids []string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, store.ErrUnavailable
	}
	var out []string
	for _, t := range f.tokens {
		for _, id := range ids {
			if t.ID == id {
				out = append(out, id)
			}
		}
	}
	return out, nil
}

func (f *fakeStore) Devices(_ context.Context, userID string) ([]store.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked++
	if f.down {
		return nil, store.ErrUnavailable
	}
	var out []store.Device
	for _, d := range f.devices {
		if d.UserID == userID {
			out = append(out, d)
		}
	}
	return out, nil
}

func (f *fakeStore) UsersDevices(_ context.Context, userIDs []string) ([]store.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, store.ErrUnavailable
	}
	var out []store.Device
	for _, d := range f.devices {
		for _, u := range userIDs {
			if d.UserID == u {
				out = append(out, d)
			}
		}
	}
	return out, nil
}

func (f *fakeStore) revokeToken(secret string) {
	f.mu.Lock()
	delete(f.tokens, secret)
	f.mu.Unlock()
}

func (f *fakeStore) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

func (f *fakeStore) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked
}

// clock is a settable now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newTestChecks() (*checks, *fakeStore, *clock) {
	f := &fakeStore{tokens: map[string]store.Token{"s3cret": {ID: "t1", UserID: "u1"}},
		devices: []store.Device{{ID: "d1", UserID: "u1", Name: "laptop"}}}
	clk := &clock{t: time.Unix(1000, 0)}
	c := newChecks(f, checkMaxAge)
	c.now = clk.now
	return c, f, clk
}

var bg = context.Background()

// SECURITY I-93: a token revoked in the store with no event reaching this
// replica passes for at most checkMaxAge, and the re-confirming loop drops
// it at its next round.
func TestRememberedTokenPassesNoLongerThanItsBound(t *testing.T) {
	t.Parallel()
	if checkMaxAge > 2*time.Second {
		t.Fatalf("checkMaxAge %s is past SECURITY I-93's 2 s", checkMaxAge)
	}
	c, f, clk := newTestChecks()
	if _, err := c.CheckToken(bg, "s3cret"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CheckToken(bg, "s3cret"); err != nil || f.count() != 1 {
		t.Fatalf("the second check asked the store again (%d asks, %v)", f.count(), err)
	}
	f.revokeToken("s3cret")
	clk.add(checkMaxAge - time.Millisecond)
	if _, err := c.CheckToken(bg, "s3cret"); err != nil {
		t.Fatalf("within its bound the remembered answer is used: %v", err)
	}
	clk.add(time.Millisecond)
	if _, err := c.CheckToken(bg, "s3cret"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a revoked token passed at its bound: %v", err)
	}

	// The loop's round forgets it at once.
	c, f, _ = newTestChecks()
	if _, err := c.CheckToken(bg, "s3cret"); err != nil {
		t.Fatal(err)
	}
	f.revokeToken("s3cret")
	c.refresh(bg)
	if _, err := c.CheckToken(bg, "s3cret"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a token the store no longer has passed after a round: %v", err)
	}
}

// A live token re-confirmed by the loop keeps passing without a query of
// its own; a store that fails a round has every answer dropped at once, so
// the next check gets the store's error (the 503), never a pass.
func TestRoundsKeepLiveTokensAndAStoreFailureDropsThem(t *testing.T) {
	t.Parallel()
	c, f, clk := newTestChecks()
	if _, err := c.CheckToken(bg, "s3cret"); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		clk.add(checkMaxAge / 2)
		c.refresh(bg)
	}
	if _, err := c.CheckToken(bg, "s3cret"); err != nil || f.count() != 1 {
		t.Fatalf("a re-confirmed token asked the store (%d asks, %v)", f.count(), err)
	}
	f.setDown(true)
	c.refresh(bg)
	if _, err := c.CheckToken(bg, "s3cret"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("after a failed round: %v, want the store's ErrUnavailable", err)
	}
	// So does any other failed query (an audit write calls failed too).
	f.setDown(false)
	if _, err := c.CheckToken(bg, "s3cret"); err != nil {
		t.Fatal(err)
	}
	c.failed(store.ErrUnavailable)
	f.setDown(true)
	if _, err := c.CheckToken(bg, "s3cret"); !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("after a failed query: %v, want the store's ErrUnavailable", err)
	}
	c.failed(store.ErrNotFound) // an answer, not a failure: nothing dropped
}

// Revocation events drop their answers at once; a resync (NATS lost:
// events missed) drops every answer.
func TestEventsDropRememberedAnswers(t *testing.T) {
	t.Parallel()
	for _, e := range []bus.Event{
		{Kind: evTokenRevoked, ID: "t1", UserID: "u1"},
		{Kind: evUserDeleted, ID: "u1", UserID: "u1"},
		{Kind: bus.EventResync},
	} {
		c, f, _ := newTestChecks()
		if _, err := c.CheckToken(bg, "s3cret"); err != nil {
			t.Fatal(err)
		}
		f.revokeToken("s3cret")
		c.onEvent(e.Kind, e.ID, e.UserID)
		if _, err := c.CheckToken(bg, "s3cret"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after %s the revoked token passed: %v", e.Kind, err)
		}
	}
	for _, e := range []bus.Event{
		{Kind: evDeviceRevoked, ID: "d1", UserID: "u1"},
		{Kind: evDeviceRevoked, ID: "d1"},
		{Kind: evUserDeleted, ID: "u1", UserID: "u1"},
		{Kind: bus.EventResync},
	} {
		c, f, _ := newTestChecks()
		byID := func(d store.Device) bool { return d.ID == "d1" }
		if _, err := c.userDevice(bg, "u1", byID); err != nil {
			t.Fatal(err)
		}
		f.mu.Lock()
		f.devices = nil
		f.mu.Unlock()
		c.onEvent(e.Kind, e.ID, e.UserID)
		if _, err := c.userDevice(bg, "u1", byID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("after %+v the revoked device passed: %v", e, err)
		}
	}
}

// An answer the store gave before a drop is not remembered after it: the
// event may be about that very token.
func TestAnAnswerAskedBeforeADropIsNotKept(t *testing.T) {
	t.Parallel()
	c, f, _ := newTestChecks()
	f.answered = func() {
		f.mu.Lock()
		f.answered = nil
		f.mu.Unlock()
		f.revokeToken("s3cret")
		c.onEvent(evTokenRevoked, "t1", "u1")
	}
	if _, err := c.CheckToken(bg, "s3cret"); err != nil {
		t.Fatal(err) // live when the store read it
	}
	if _, err := c.CheckToken(bg, "s3cret"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("an answer from before the revocation's event was kept: %v", err)
	}
}

// A device not in the remembered list is asked of the store (paired a
// moment ago), and another user's device is never found.
func TestDeviceLookupAsksTheStoreOnAMiss(t *testing.T) {
	t.Parallel()
	c, f, _ := newTestChecks()
	byID := func(id string) func(store.Device) bool { return func(d store.Device) bool { return d.ID == id } }
	if _, err := c.userDevice(bg, "u1", byID("d1")); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.devices = append(f.devices, store.Device{ID: "d2", UserID: "u1"}, store.Device{ID: "d3", UserID: "u2"})
	f.mu.Unlock()
	if _, err := c.userDevice(bg, "u1", byID("d2")); err != nil {
		t.Fatalf("a device paired a moment ago: %v", err)
	}
	if _, err := c.userDevice(bg, "u1", byID("d3")); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another user's device: %v", err)
	}
}
