//go:build !linux

package cli

import "os"

// redirectStderr leaves standard error alone off Linux: the log itself
// still rotates, only a crash report may land in an older file.
func redirectStderr(*os.File) {}
