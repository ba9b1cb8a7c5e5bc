package gateway_test

import (
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// waitGone waits for the process pid to end: a pidfd becomes readable when
// it does, so the wait is on that event, whoever reaps the process.
func waitGone(t *testing.T, pid int, d time.Duration) {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return // already gone
	}
	if err != nil {
		t.Fatalf("pidfd_open %d: %v", pid, err)
	}
	defer unix.Close(fd)
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		n, err := unix.Poll(fds, int(d.Milliseconds()))
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			t.Fatalf("poll pidfd: %v", err)
		}
		if n == 0 {
			t.Fatalf("process %d still runs after %s", pid, d)
		}
		return
	}
}
