package replica

import "sync"

// inflight counts calls running on this replica, so a drain can wait for
// them while new ones may still arrive (a WaitGroup forbids that).
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed while n is 0
}

func (f *inflight) Add(d int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.zero == nil {
		f.zero = make(chan struct{})
		close(f.zero)
	}
	if f.n == 0 && d > 0 {
		f.zero = make(chan struct{})
	}
	f.n += d
	if f.n == 0 {
		close(f.zero)
	}
}

func (f *inflight) Done() { f.Add(-1) }

// Wait returns when no call runs.
func (f *inflight) Wait() {
	f.mu.Lock()
	if f.zero == nil || f.n == 0 {
		f.mu.Unlock()
		return
	}
	ch := f.zero
	f.mu.Unlock()
	<-ch
}
