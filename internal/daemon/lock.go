package daemon

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/torii-browser/torii/internal/osproc"
)

// AlreadyRunningError: another daemon holds the state directory's lock.
type AlreadyRunningError struct {
	PID      int // 0 if it could not be read
	StateDir string
}

func (e *AlreadyRunningError) Error() string {
	return fmt.Sprintf("another torii daemon (pid %d) is using %s; it already serves (see `torii status`), or stop it with `torii stop`; for a second daemon set TORII_STATE_DIR", e.PID, e.StateDir)
}

// lockFile is a file lock (flock, or LockFileEx on Windows) held for the daemon's life. Such a lock (not a PID file
// check) is released by the kernel when the process dies, so a crash never
// leaves a stale lock.
type lockFile struct{ f *os.File }

func acquireLock(path, stateDir string) (*lockFile, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon: open lock file: %w", err)
	}
	if err := osproc.TryLock(f); err != nil {
		defer f.Close()
		if errors.Is(err, osproc.ErrLocked) {
			b, _ := os.ReadFile(path)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, &AlreadyRunningError{PID: pid, StateDir: stateDir}
		}
		return nil, fmt.Errorf("daemon: lock %s: %w", path, err)
	}
	// The PID is advisory (for the error above and for `torii status`).
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &lockFile{f: f}, nil
}

func (l *lockFile) release() {
	_ = l.f.Truncate(0)
	_ = osproc.Unlock(l.f)
	_ = l.f.Close()
}
