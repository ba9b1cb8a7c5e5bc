package logx

import (
	"fmt"
	"os"
	"sync"
)

// Rotation defaults: the log never holds more than (Keep+1) × MaxSize.
const (
	MaxSize = 10 << 20
	Keep    = 3
)

// File is a log file that rotates by size: past MaxSize, path becomes
// path.1 (path.1 becomes path.2, …, the oldest beyond Keep is removed) and
// a new path is started. Files are mode 0600 (SECURITY I-9, I-50).
type File struct {
	path    string
	maxSize int64
	keep    int
	// afterOpen, if set, runs with each newly opened file (the daemon points
	// its standard error at it, so a crash report lands in the current file).
	afterOpen func(*os.File)

	mu   sync.Mutex
	f    *os.File
	size int64
}

// OpenFile opens path for appending, rotating it first if it is already
// over maxSize (<= 0: MaxSize); keep (<= 0: Keep) old files are kept.
func OpenFile(path string, maxSize int64, keep int, afterOpen func(*os.File)) (*File, error) {
	if maxSize <= 0 {
		maxSize = MaxSize
	}
	if keep <= 0 {
		keep = Keep
	}
	l := &File{path: path, maxSize: maxSize, keep: keep, afterOpen: afterOpen}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.open(); err != nil {
		return nil, err
	}
	if l.size >= l.maxSize {
		if err := l.rotate(); err != nil {
			return nil, err
		}
	}
	return l, nil
}

func (l *File) open() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("log: open %s: %w", l.path, err)
	}
	_ = f.Chmod(0o600)
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log: stat %s: %w", l.path, err)
	}
	l.f, l.size = f, fi.Size()
	if l.afterOpen != nil {
		l.afterOpen(f)
	}
	return nil
}

func (l *File) rotate() error {
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
	_ = os.Remove(fmt.Sprintf("%s.%d", l.path, l.keep))
	for i := l.keep - 1; i >= 1; i-- {
		_ = os.Rename(fmt.Sprintf("%s.%d", l.path, i), fmt.Sprintf("%s.%d", l.path, i+1))
	}
	if err := os.Rename(l.path, l.path+".1"); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("log: rotate %s: %w", l.path, err)
	}
	return l.open()
}

// Write appends p, rotating first when p would take the file past its size.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		if err := l.open(); err != nil {
			return 0, err
		}
	}
	if l.size > 0 && l.size+int64(len(p)) > l.maxSize {
		if err := l.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// Close closes the current file.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}
