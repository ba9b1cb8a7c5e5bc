package daemon

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// reclaimEvery is how often the daemon checks for memory a flood left
// behind. The Go runtime gives freed heap back to the system only slowly;
// after a flood of connections the daemon's RSS would stay at its peak for
// minutes, so once the heap in use has fallen well below what is held, the
// rest is returned at once (SECURITY I-49: what a flood grows, its end
// shrinks).
const reclaimEvery = 5 * time.Second

// reclaimSlack: held-but-unused heap below this is left to the runtime.
// (ReadMemStats stops the world for microseconds; every 5 s is nothing, and
// the forced collection that follows costs about a millisecond on a heap of
// a few MB.) At 16 MB, what a flood left stayed held: 38–47 MB of RSS
// against 22 MB idle.
const reclaimSlack = 2 << 20

func reclaimMemory(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	prev := runtime.NumGoroutine()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// A flood's end shows as most of its goroutines (one or more per
		// connection) gone; its garbage may not even be collected yet, so
		// the heap figures alone would not show it.
		g := runtime.NumGoroutine()
		ended := prev > 256 && g < prev/2
		prev = g
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ended {
			// Connections' buffers sit in sync.Pools, which one collection
			// only moves to their victim caches: a second one frees them.
			runtime.GC()
		}
		if ended || ms.HeapSys-ms.HeapReleased > ms.HeapAlloc+reclaimSlack {
			debug.FreeOSMemory()
		}
	}
}
