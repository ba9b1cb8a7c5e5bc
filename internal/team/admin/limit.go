package admin

import (
	"sync"
	"time"
)

// limiter counts failures per key in a sliding window: once a key has max
// failures within the window it is blocked until the oldest ages out.
type limiter struct {
	max    int
	window time.Duration
	now    func() time.Time

	mu   sync.Mutex
	hits map[string][]time.Time
}

func newLimiter(max int, window time.Duration) *limiter {
	return &limiter{max: max, window: window, now: time.Now, hits: map[string][]time.Time{}}
}

// maxKeys bounds the map: past it, keys with no recent failure are dropped.
const maxKeys = 10000

// recent prunes key's failures older than the window; mu is held.
func (l *limiter) recent(key string, now time.Time) []time.Time {
	h := l.hits[key]
	i := 0
	for i < len(h) && now.Sub(h[i]) >= l.window {
		i++
	}
	h = h[i:]
	if len(h) == 0 {
		delete(l.hits, key)
		return nil
	}
	l.hits[key] = h
	return h
}

func (l *limiter) fail(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(l.hits) >= maxKeys {
		for k := range l.hits {
			l.recent(k, now)
		}
	}
	l.hits[key] = append(l.recent(key, now), now)
}

// retryAfter reports whether key is blocked, and for how many seconds.
func (l *limiter) retryAfter(key string) (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	h := l.recent(key, now)
	if len(h) < l.max {
		return 0, false
	}
	wait := int(l.window-now.Sub(h[len(h)-l.max])+time.Second-1) / int(time.Second)
	if wait < 1 {
		wait = 1
	}
	return wait, true
}

func (l *limiter) blocked(key string) bool {
	_, b := l.retryAfter(key)
	return b
}
