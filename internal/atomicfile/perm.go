package atomicfile

import (
	"errors"
	"fmt"
	"os"
)

// ErrPermTooOpen matches any *PermError with errors.Is.
var ErrPermTooOpen = errors.New("file mode too open")

// PermError says a private file is readable or writable by others and how
// to fix it.
type PermError struct {
	Path string
	Mode os.FileMode
}

func (e *PermError) Error() string {
	return fmt.Sprintf("%s has mode %04o but must be private (0600); fix: chmod 600 %s", e.Path, e.Mode.Perm(), e.Path)
}

func (e *PermError) Is(target error) bool { return target == ErrPermTooOpen }

// CheckPrivate returns a *PermError if the existing file at path grants any
// permission to group or others. SECURITY I-9: keys and stores are refused
// rather than silently used when someone else could have read or changed them.
func CheckPrivate(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return &PermError{Path: path, Mode: fi.Mode()}
	}
	return nil
}
