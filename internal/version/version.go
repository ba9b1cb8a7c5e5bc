// Package version holds the build's version, set at link time:
//
//	go build -ldflags "-X github.com/torii-browser/torii/internal/version.Version=v0.1.0 -X github.com/torii-browser/torii/internal/version.Commit=abc123" ./cmd/torii
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is the release version; "dev" for a plain `go build`.
var Version = "dev"

// Commit is the source commit; when not set by -ldflags it falls back to the
// VCS stamp Go embeds (absent with -buildvcs=false).
var Commit = ""

// GoVersion is the toolchain that built the binary.
func GoVersion() string { return runtime.Version() }

// CommitID returns Commit, or the embedded vcs.revision, or "".
func CommitID() string {
	if Commit != "" {
		return Commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return ""
}
