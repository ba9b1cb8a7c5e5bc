//go:build !linux

package gateway_test

import (
	"syscall"
	"testing"
	"time"
)

// waitGone waits for the process pid to end. Without pidfds there is no
// event for another process's end, so this re-checks on a clock.
func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for syscall.Kill(pid, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs after %s", pid, d)
		}
		<-tick.C
	}
}
