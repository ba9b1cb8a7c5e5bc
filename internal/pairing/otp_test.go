package pairing

import (
	"sync"
	"testing"
	"time"
)

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func newClock() *fakeClock { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func pairTr(n byte) []byte {
	return PairTranscript("req", vectorOrigin, []byte{n}, []byte{2}, []byte{3}, []byte{4})
}

func TestOTPSingleUse(t *testing.T) {
	clk := newClock()
	o := NewOTPs(60*time.Second, clk.now)
	otp, exp := o.Issue()
	if b, err := DecodeB64(otp); err != nil || len(b) != 32 {
		t.Fatalf("otp %q is not 32 bytes base64url: %v", otp, err)
	}
	if !exp.Equal(clk.now().Add(60 * time.Second)) {
		t.Fatalf("expiry %v", exp)
	}
	tr := pairTr(1)
	if !o.Consume(tr, OTPProof(otp, tr)) {
		t.Fatal("valid proof refused")
	}
	if o.Consume(tr, OTPProof(otp, tr)) {
		t.Fatal("second use accepted")
	}
	tr2 := pairTr(2)
	if o.Consume(tr2, OTPProof(otp, tr2)) {
		t.Fatal("consumed secret accepted with another transcript")
	}
}

func TestOTPExpiry(t *testing.T) {
	clk := newClock()
	o := NewOTPs(60*time.Second, clk.now)
	otp, _ := o.Issue()
	clk.add(59 * time.Second)
	if o.Live() != 1 {
		t.Fatal("secret expired early")
	}
	clk.add(time.Second) // exactly at expiry: dead
	tr := pairTr(1)
	if o.Consume(tr, OTPProof(otp, tr)) {
		t.Fatal("expired secret accepted")
	}
	if o.Live() != 0 {
		t.Fatal("expired secret still held")
	}
}

func TestOTPNonMatchingConsumesNothing(t *testing.T) {
	clk := newClock()
	o := NewOTPs(0, clk.now) // 0 means the 60 s default
	a, exp := o.Issue()
	if exp.Sub(clk.now()) != DefaultOTPTTL {
		t.Fatalf("default ttl %v", exp.Sub(clk.now()))
	}
	b, _ := o.Issue()
	tr := pairTr(1)
	for _, bad := range [][]byte{nil, {}, OTPProof("guess", tr), OTPProof(a, pairTr(9))[:31], OTPProof(a, pairTr(9))} {
		if o.Consume(tr, bad) {
			t.Fatalf("bad proof %x accepted", bad)
		}
	}
	if o.Live() != 2 {
		t.Fatalf("non-matching attempts consumed secrets: %d live", o.Live())
	}
	// Consuming b leaves a usable.
	if !o.Consume(tr, OTPProof(b, tr)) || o.Live() != 1 {
		t.Fatal("b not consumed alone")
	}
	if !o.Consume(tr, OTPProof(a, tr)) || o.Live() != 0 {
		t.Fatal("a not usable after b")
	}
}

func TestOTPConcurrentSingleUse(t *testing.T) {
	o := NewOTPs(time.Minute, nil)
	otp, _ := o.Issue()
	tr := pairTr(1)
	proof := OTPProof(otp, tr)
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if o.Consume(tr, proof) {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if wins != 1 {
		t.Fatalf("%d concurrent consumers won, want 1", wins)
	}
}

func TestOTPBounded(t *testing.T) {
	o := NewOTPs(time.Minute, newClock().now)
	for i := 0; i < maxLiveOTPs+10; i++ {
		o.Issue()
	}
	if o.Live() != maxLiveOTPs {
		t.Fatalf("live %d, want cap %d", o.Live(), maxLiveOTPs)
	}
}
