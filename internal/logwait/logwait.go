// Package logwait is a log sink for tests that wait for a line to be
// logged instead of sleeping: every write wakes the waiters.
package logwait

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Buffer collects what is logged; any number of goroutines may write to it
// at once.
type Buffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
	return l.b.Write(p)
}

func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// Wait returns once the log holds substr, or fails after timeout with what
// was logged.
func (l *Buffer) Wait(substr string, timeout time.Duration) error {
	expire := time.After(timeout)
	for {
		l.mu.Lock()
		if strings.Contains(l.b.String(), substr) {
			l.mu.Unlock()
			return nil
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		changed := l.changed
		l.mu.Unlock()
		select {
		case <-changed:
		case <-expire:
			return fmt.Errorf("%q not logged within %v; the log:\n%s", substr, timeout, l.String())
		}
	}
}
