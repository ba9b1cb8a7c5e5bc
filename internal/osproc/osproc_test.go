package osproc

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// A second holder is refused while the first holds the lock, and gets it once released.
func TestTryLockExcludesAnotherHolder(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lock")
	a, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := TryLock(a); err != nil {
		t.Fatalf("first lock: %v", err)
	}
	// The holder's pid stays readable to others while locked.
	if _, err := a.WriteAt([]byte("123\n"), 0); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != "123\n" {
		t.Fatalf("read while locked: %q, %v", got, err)
	}
	if err := TryLock(b); !errors.Is(err, ErrLocked) {
		t.Fatalf("second lock while held: %v, want ErrLocked", err)
	}
	if err := Unlock(a); err != nil {
		t.Fatal(err)
	}
	if err := TryLock(b); err != nil {
		t.Fatalf("second lock after release: %v", err)
	}
	_ = Unlock(b)
}

// A detached child is alive until stopped, and not alive after.
func TestDetachedChildStopsAndDies(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^TestHelperSleep$")
	cmd.Env = append(os.Environ(), "OSPROC_HELPER=1")
	Detach(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	pid := cmd.Process.Pid
	if !Alive(pid) {
		t.Fatalf("pid %d not alive after start", pid)
	}
	if err := Stop(pid, true, false); err != nil {
		t.Fatalf("stop: %v", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = Stop(pid, true, true)
		t.Fatal("child still running 10 s after Stop")
	}
	if Alive(pid) {
		t.Fatalf("pid %d alive after it exited", pid)
	}
	if Alive(0) || Alive(-1) {
		t.Fatal("pid 0 or -1 reported alive")
	}
}

func TestHelperSleep(t *testing.T) {
	t.Parallel()
	if os.Getenv("OSPROC_HELPER") != "1" {
		t.Skip("helper process for TestDetachedChildStopsAndDies")
	}
	time.Sleep(time.Minute) // a process that runs until it is stopped; Stop ends it long before
}
