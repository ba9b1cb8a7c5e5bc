package cli

import (
	"os"
	"syscall"
)

// redirectStderr points standard error at f (a freshly rotated log file).
func redirectStderr(f *os.File) { _ = syscall.Dup3(int(f.Fd()), 2, 0) }
