package admin

import (
	"testing"
	"time"
)

func TestLimiterBlocksAtMaxAndAgesOut(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	l := newLimiter(3, time.Minute)
	l.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if l.blocked("a") {
			t.Fatalf("blocked after %d failures", i)
		}
		l.fail("a")
		now = now.Add(10 * time.Second)
	}
	wait, blocked := l.retryAfter("a")
	if !blocked || wait != 30 { // the first failure, 30 s ago, ages out in 30 s
		t.Fatalf("wait %d blocked %v", wait, blocked)
	}
	if l.blocked("b") {
		t.Fatal("keys are independent")
	}
	now = now.Add(30 * time.Second)
	if l.blocked("a") {
		t.Fatal("still blocked once the oldest failure aged out")
	}
	now = now.Add(time.Hour)
	l.blocked("a")
	if len(l.hits) != 0 {
		t.Fatalf("stale keys kept: %v", l.hits)
	}
}

func TestLimiterBoundsItsKeys(t *testing.T) {
	t.Parallel()
	now := time.Unix(1_000_000, 0)
	l := newLimiter(5, time.Minute)
	l.now = func() time.Time { return now }
	for i := 0; i < maxKeys; i++ {
		l.fail(string(rune(i)))
	}
	now = now.Add(2 * time.Minute)
	l.fail("new")
	if len(l.hits) != 1 {
		t.Fatalf("%d keys kept", len(l.hits))
	}
}
