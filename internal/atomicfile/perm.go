package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
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

// ReadPrivate reads a file that only its owner may read or change (SECURITY
// I-9). A missing file is not an error: exists is false. A file open to group
// or others is refused with a *PermError.
func ReadPrivate(path string) (data []byte, exists bool, err error) {
	data, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read %s: %w", path, err)
	}
	if err := CheckPrivate(path); err != nil {
		return nil, true, err
	}
	return data, true, nil
}
