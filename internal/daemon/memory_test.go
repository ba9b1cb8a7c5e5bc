package daemon

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var sink [][]byte

// TestReclaimAfterWork: a burst of work too small to trigger a collection
// of its own (well under the runtime's 4 MB minimum heap goal) still leaves
// the daemon's heap at its peak; the first quiet check after it collects
// and returns that memory to the system.
func TestReclaimAfterWork(t *testing.T) {
	debug.FreeOSMemory() // start from a heap holding nothing it does not use
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	for i := 0; i < 30000; i++ { // ~2 MB in small objects, then dropped
		sink = append(sink, make([]byte, 64))
	}
	sink = nil
	var peak runtime.MemStats
	runtime.ReadMemStats(&peak)
	if peak.HeapAlloc < before.HeapAlloc+1<<20 {
		t.Fatalf("the burst was collected before the check began (heap %d → %d); nothing to observe", before.HeapAlloc, peak.HeapAlloc)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go reclaimMemory(ctx, 50*time.Millisecond)

	deadline := time.Now().Add(5 * time.Second)
	for {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		if ms.NumGC > peak.NumGC && ms.HeapAlloc < before.HeapAlloc+512<<10 && ms.HeapIdle-ms.HeapReleased < 1<<20 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("5 s after the work ended the heap still holds it: alloc %d (was %d before it), idle not returned %d, collections %d → %d",
				ms.HeapAlloc, before.HeapAlloc, ms.HeapIdle-ms.HeapReleased, peak.NumGC, ms.NumGC)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
