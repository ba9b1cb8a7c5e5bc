//go:build windows

package osproc

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// Detach starts cmd in a process group of its own with no console: it
// outlives the caller, and a Ctrl-C in the caller's console does not reach it.
func Detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS
}

// Stop ends pid. Windows has no SIGTERM for a process without a console, so
// asking and killing are the same: the process is terminated. A browser's
// helper processes exit on their own when their browser process ends, which
// is what group means on unix. Daemons are asked to stop over their control
// socket before this is used.
func Stop(pid int, group, kill bool) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	defer p.Release()
	return p.Kill()
}

// stillActive is GetExitCodeProcess's code for a process that has not exited.
const stillActive = 259

// Alive reports whether pid exists and has not exited.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		// Access denied means it exists (another user's process).
		return errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	var code uint32
	if err := windows.GetExitCodeProcess(h, &code); err != nil {
		return true
	}
	return code == stillActive
}

// lockOffset is where the lock's one byte lies: far past any data, because
// Windows locks are mandatory and the lock file's content (the holder's pid)
// must stay readable to others.
const lockOffsetHigh = 0x40000000

// TryLock takes an exclusive LockFileEx lock on f without waiting: ErrLocked
// when another process holds it. Windows releases it when its holder dies.
func TryLock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, &ol)
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) || errors.Is(err, windows.ERROR_IO_PENDING) {
		return ErrLocked
	}
	return err
}

// Unlock releases TryLock's lock.
func Unlock(f *os.File) error {
	ol := windows.Overlapped{OffsetHigh: lockOffsetHigh}
	return windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, &ol)
}

// FDLimit is 0: Windows has no small per-process limit on handles or sockets.
func FDLimit() int { return 0 }

// Owner is not known on Windows: files carry security descriptors, not uids.
func Owner(fs.FileInfo) (uid int, ok bool) { return 0, false }

// NoListener reports whether a dial error means nothing listens at the
// address: no socket file, or a socket nobody accepts on.
func NoListener(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, windows.WSAECONNREFUSED) ||
		errors.Is(err, syscall.ECONNREFUSED)
}

// AddrInUse reports whether a listen error means another program holds the address.
func AddrInUse(err error) bool {
	return errors.Is(err, windows.WSAEADDRINUSE) || errors.Is(err, syscall.EADDRINUSE)
}
