//go:build unix

package osproc

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Detach starts cmd in a session of its own: it outlives the caller, and a
// Ctrl-C in the caller's terminal does not reach it. Its pid is also its
// process-group id, which Stop's group form relies on.
func Detach(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
}

// Stop asks pid to end (SIGTERM), or ends it at once (SIGKILL) when kill is
// set. With group, the whole process group led by pid gets the signal:
// Chromium's renderers and zygote must go with the browser.
func Stop(pid int, group, kill bool) error {
	if pid <= 0 {
		return errors.New("osproc: no pid")
	}
	sig := unix.SIGTERM
	if kill {
		sig = unix.SIGKILL
	}
	if group {
		pid = -pid
	}
	return unix.Kill(pid, sig)
}

// Alive reports whether pid exists and has not exited. A process that
// exited but was never reaped (a zombie, where nothing reaps orphans, as in
// a container without an init) is not alive.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	if err := unix.Kill(pid, 0); err != nil && !errors.Is(err, unix.EPERM) {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: kill(0) is all there is
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || len(s) < i+3 || s[i+2] != 'Z'
}

// TryLock takes an exclusive flock on f without waiting: ErrLocked when
// another process holds it. The kernel releases it when its holder dies, so
// a crash never leaves a stale lock.
func TryLock(f *os.File) error {
	err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return ErrLocked
	}
	return err
}

// Unlock releases TryLock's lock.
func Unlock(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// FDLimit is the soft limit on open file descriptors, or 0 when unknown.
func FDLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	return int(min(rl.Cur, 1<<30))
}

// Owner is the uid that owns the file fi describes.
func Owner(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}

// NoListener reports whether a dial error means nothing listens at the
// address: no socket file, or a socket nobody accepts on.
func NoListener(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ECONNREFUSED)
}

// AddrInUse reports whether a listen error means another program holds the address.
func AddrInUse(err error) bool { return errors.Is(err, unix.EADDRINUSE) }
