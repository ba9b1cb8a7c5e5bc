package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/torii-browser/torii/internal/osproc"
)

// MarkerFile is written into a profile directory when Torii creates it for a managed browser.
// Only such a profile takes a launch policy (SECURITY I-47): a directory Torii did not create,
// such as the person's own Chrome profile, never does.
const MarkerFile = "torii-managed-profile"

const markerText = "This browser profile was created by `torii launch` for a managed browser.\n"

// Profile is a managed browser's profile directory as PrepareProfile found it.
type Profile struct {
	Dir string
	// Created: Torii created it just now.
	Created bool
	// Managed: Torii created it (now or on an earlier launch): it holds the marker file.
	Managed bool
	// RunningPID is the pid of a browser that holds the profile now, or 0.
	RunningPID int
}

// PrepareProfile creates dir (mode 0700) with the marker when it does not exist, and otherwise
// reports whether it carries the marker and whether a browser holds it.
func PrepareProfile(dir string) (Profile, error) {
	p := Profile{Dir: dir}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return p, fmt.Errorf("create profile %s: %w", dir, err)
		}
		if err := MarkProfile(dir); err != nil {
			return p, err
		}
		p.Created, p.Managed = true, true
		return p, nil
	} else if err != nil {
		return p, err
	}
	fi, err := os.Lstat(filepath.Join(dir, MarkerFile))
	p.Managed = err == nil && fi.Mode().IsRegular()
	p.RunningPID = lockHolder(dir)
	return p, nil
}

// MarkProfile writes the marker into a profile directory Torii made.
func MarkProfile(dir string) error {
	if err := os.WriteFile(filepath.Join(dir, MarkerFile), []byte(markerText), 0o600); err != nil {
		return fmt.Errorf("mark profile %s: %w", dir, err)
	}
	return nil
}

// lockHolder reads Chromium's SingletonLock (a symlink to "HOST-PID") and returns the pid when
// that process is alive on this host, else 0.
func lockHolder(dir string) int {
	target, err := os.Readlink(filepath.Join(dir, "SingletonLock"))
	if err != nil {
		return 0
	}
	i := strings.LastIndex(target, "-")
	if i < 0 {
		return 0
	}
	if host, _ := os.Hostname(); host != "" && target[:i] != host {
		return 0
	}
	pid, err := strconv.Atoi(target[i+1:])
	if err != nil || pid <= 0 {
		return 0
	}
	if !osproc.Alive(pid) {
		return 0
	}
	return pid
}

// NotManagedError: a launch policy (or --permissive) was asked for a profile Torii did not create.
type NotManagedError struct {
	Dir  string
	Flag string
}

func (e *NotManagedError) Error() string {
	return fmt.Sprintf("%s applies only to a profile that torii launch created, and %s was not (it has no %s file); the person's own Chrome profile never takes a launch policy\n  fix: omit --profile (the default is a dedicated profile), or pass --profile with a directory that does not exist yet; change the policy of an existing browser in the extension's options", e.Flag, e.Dir, MarkerFile)
}

// RunningError: a launch policy was asked for a managed profile whose browser is running.
type RunningError struct {
	Dir  string
	PID  int
	Flag string
}

func (e *RunningError) Error() string {
	return fmt.Sprintf("%s not applied: the browser on profile %s is already running (pid %d), and a launch policy applies only when torii launch starts it; its policy stays as it is\n  fix: to use it as it is, add --reuse; for the new policy, run torii stop and then this torii launch again; or change the policy in the extension's options", e.Flag, e.Dir, e.PID)
}
