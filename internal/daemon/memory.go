package daemon

import (
	"context"
	"runtime"
	"runtime/debug"
	"time"
)

// reclaimEvery is how often the daemon checks for memory a burst of work
// left behind. The Go runtime gives freed heap back to the system only
// slowly; after a flood of connections the daemon's RSS would stay at its
// peak for minutes, so once the heap in use has fallen well below what is
// held, or the work has ended, the rest is returned at once (SECURITY I-49:
// what a flood grows, its end shrinks).
const reclaimEvery = 3 * time.Second

// reclaimSlack: held-but-unused heap below this is left to the runtime.
// (ReadMemStats stops the world for microseconds; every few seconds is
// nothing, and the forced collection that follows costs about a millisecond
// on a heap of a few MB.) At 16 MB, what a flood left stayed held: 38–47 MB
// of RSS against 22 MB idle.
const reclaimSlack = 2 << 20

// quietAllocs: fewer heap allocations than this between two checks is a
// daemon with nothing to do (an attached extension's keep-alives make a few
// hundred); one tool call makes a few hundred on its own.
const quietAllocs = 5000

func reclaimMemory(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	prevG := runtime.NumGoroutine()
	var prevMallocs uint64
	busy := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		// A flood's end shows as most of its goroutines (one or more per
		// connection) gone; its garbage may not even be collected yet, so
		// the heap figures alone would not show it.
		g := runtime.NumGoroutine()
		floodEnded := prevG > 256 && g < prevG/2
		prevG = g
		// Any stretch of work — legitimate calls included — leaves a heap
		// grown to its peak and goroutine stacks the runtime keeps; held
		// until the next collection and then only slowly returned, that
		// made the idle daemon's RSS wander by megabytes with the traffic
		// it had last served. The first quiet check after work returns it,
		// so the idle level is the same whatever came before.
		quiet := ms.Mallocs-prevMallocs < quietAllocs
		prevMallocs = ms.Mallocs
		workEnded := busy && quiet
		busy = !quiet
		if floodEnded || workEnded {
			// Connections' buffers sit in sync.Pools, which one collection
			// only moves to their victim caches: a second one frees them.
			runtime.GC()
		}
		if floodEnded || workEnded || ms.HeapSys-ms.HeapReleased > ms.HeapAlloc+reclaimSlack {
			debug.FreeOSMemory()
		}
	}
}
