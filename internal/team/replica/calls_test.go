package replica

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/wire"
)

// A token's revocation cancels its calls and ends its sessions here, and
// no other token's (SECURITY I-93).
func TestRevokeCancelsOnlyThatTokensCalls(t *testing.T) {
	t.Parallel()
	var cs calls
	cs.init()
	ctxU, cancelU := context.WithCancel(context.Background())
	ctxV, cancelV := context.WithCancel(context.Background())
	defer cancelU()
	defer cancelV()
	cs.add(callRequest{CallID: "1", UserID: "u", TokenID: "tu"}, cancelU)
	cs.add(callRequest{CallID: "2", UserID: "v", TokenID: "tv"}, cancelV)
	ku, kv := sessionKey("tu", "d1", "s"), sessionKey("tv", "d2", "s")
	cs.session("tu", "u", ku)
	cs.session("tv", "v", kv)
	if got := cs.revoke("tu", ""); !slices.Equal(got, []string{ku}) {
		t.Fatalf("revoke ended %q", got)
	}
	select {
	case <-ctxU.Done():
	case <-time.After(time.Second):
		t.Fatal("the revoked token's call was not cancelled")
	}
	if ctxV.Err() != nil {
		t.Fatal("another token's call was cancelled")
	}
	if got := cs.revoke("", "v"); !slices.Equal(got, []string{kv}) || ctxV.Err() == nil {
		t.Fatalf("deleting user v ended %q, cancelled %v", got, ctxV.Err())
	}
}

// Session keys of different tokens or devices never collide, whatever the
// session name holds.
func TestSessionKeysKeepTokensAndDevicesApart(t *testing.T) {
	t.Parallel()
	keys := map[string]bool{}
	for _, k := range []string{
		sessionKey("t1", "d1", "s"), sessionKey("t2", "d1", "s"), sessionKey("t1", "d2", "s"),
		sessionKey("t1", "d1", ""), sessionKey("t1", "d1\x00t2", "s"),
	} {
		if keys[k] {
			t.Fatalf("key %q made twice", k)
		}
		keys[k] = true
	}
}

func TestInflightWaitsForEveryCall(t *testing.T) {
	t.Parallel()
	var f inflight
	f.Wait() // nothing runs: returns at once
	f.Add(1)
	f.Add(1)
	done := make(chan struct{})
	go func() { f.Wait(); close(done) }()
	f.Done()
	select {
	case <-done:
		t.Fatal("Wait returned with a call running")
	default:
	}
	f.Done()
	<-done
	f.Add(1) // a call joining after a drain began is counted again
	f.Done()
	f.Wait()
}

// Past five pairing requests a minute a replica refuses.
func TestPairingBudget(t *testing.T) {
	t.Parallel()
	p := newPairer(&replica{}, time.Second)
	for i := range pairPerMinute {
		if err := p.admit(); err != nil {
			t.Fatalf("attempt %d refused: %v", i, err)
		}
	}
	err := p.admit()
	if e, ok := err.(*wire.Error); !ok || e.Code != wire.CodeRateLimited {
		t.Fatalf("sixth attempt: %v", err)
	}
	// A managed launch's one-time secret has its own, larger budget: a
	// fleet of launched browsers is not held to five a minute.
	for i := range otpPairPerMinute {
		if err := p.admitOTP(); err != nil {
			t.Fatalf("one-time-secret attempt %d refused: %v", i, err)
		}
	}
	if err := p.admitOTP(); err == nil {
		t.Fatal("one-time-secret attempts past the budget were admitted")
	}
}

func TestTokenClientsRefusedOnACP(t *testing.T) {
	t.Parallel()
	if _, ok := (noTokens{}).Check("anything"); ok {
		t.Fatal("a token was accepted on /acp")
	}
}
