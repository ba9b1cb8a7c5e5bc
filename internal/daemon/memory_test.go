package daemon

import (
	"context"
	"os"
	"os/exec"
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
	if os.Getenv("TORII_RECLAIM_ALONE") != "1" {
		// In a process of its own: what the package's other tests leave winding down (daemons
		// closing their connections) allocates too, and on a loaded machine for seconds.
		cmd := exec.Command(os.Args[0], "-test.run=^TestReclaimAfterWork$", "-test.count=1")
		cmd.Env = append(os.Environ(), "TORII_RECLAIM_ALONE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return
	}
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
		time.Sleep(20 * time.Millisecond) // the heap is polled: the runtime offers no event for memory returned
	}
}
