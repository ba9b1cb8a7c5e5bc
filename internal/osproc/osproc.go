// Package osproc holds what differs between operating systems in how Torii
// runs its processes: detaching a child from the caller's session, stopping
// a process (and its group), asking whether one lives, file locks that the
// system releases when their holder dies, the open-file limit, a file's
// owner, and the socket errors that mean "nobody listens". Everything else
// in Torii is portable Go.
package osproc

import "errors"

// ErrLocked: another process holds the lock TryLock asked for.
var ErrLocked = errors.New("locked by another process")
