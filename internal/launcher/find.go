// Package launcher finds a Chromium-family browser and starts it with the
// Torii extension loaded in a dedicated profile (`torii launch`).
package launcher

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// EnvBrowser overrides discovery when --browser is not given.
const EnvBrowser = "TORII_BROWSER"

// PathNames are looked up on PATH, in order.
var PathNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// InstallLocations are the standard install paths per OS, tried after PATH.
var InstallLocations = map[string][]string{
	"linux": {
		"/usr/bin/chromium",
		"/usr/bin/chromium-browser",
		"/usr/bin/google-chrome",
		"/usr/bin/google-chrome-stable",
		"/opt/google/chrome/chrome",
		"/snap/bin/chromium",
	},
	"darwin": {
		"/Applications/Chromium.app/Contents/MacOS/Chromium",
		"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
		"/Applications/Google Chrome for Testing.app/Contents/MacOS/Google Chrome for Testing",
	},
}

// NotFoundError lists every place discovery looked, so the person can see
// why nothing matched.
type NotFoundError struct{ Tried []string }

func (e *NotFoundError) Error() string {
	return "no Chromium or Chrome browser found; tried: " + strings.Join(e.Tried, ", ") +
		"\n  fix: install one (Debian/Ubuntu: `sudo apt install chromium`), or pass --browser PATH, or set " + EnvBrowser + "=PATH"
}

// BadBrowserError is an explicit choice (--browser or TORII_BROWSER) that is
// not a runnable file. It is never silently replaced by discovery: the
// person asked for that browser.
type BadBrowserError struct {
	Source string // "--browser" or "TORII_BROWSER"
	Path   string
	Reason string
}

func (e *BadBrowserError) Error() string {
	return fmt.Sprintf("browser from %s (%q) %s\n  fix: point %s at a Chromium or Chrome executable", e.Source, e.Path, e.Reason, e.Source)
}

// Finder holds discovery's inputs so tests can control them.
type Finder struct {
	Getenv    func(string) string
	LookPath  func(string) (string, error)
	Locations []string
}

// DefaultFinder uses the real environment, PATH and this OS's locations.
func DefaultFinder() Finder {
	return Finder{Getenv: os.Getenv, LookPath: exec.LookPath, Locations: InstallLocations[runtime.GOOS]}
}

// Find returns the browser to run: flagPath if set, else $TORII_BROWSER,
// else the first of PathNames on PATH, else the first existing install
// location.
func Find(flagPath string) (string, error) { return DefaultFinder().Find(flagPath) }

// Find implements discovery; see the package-level Find.
func (f Finder) Find(flagPath string) (string, error) {
	if flagPath != "" {
		return f.explicit("--browser", flagPath)
	}
	if v := f.Getenv(EnvBrowser); v != "" {
		return f.explicit(EnvBrowser, v)
	}
	var tried []string
	for _, n := range PathNames {
		tried = append(tried, n+" (PATH)")
		if p, err := f.LookPath(n); err == nil {
			return p, nil
		}
	}
	for _, p := range f.Locations {
		tried = append(tried, p)
		if isExecutable(p) == nil {
			return p, nil
		}
	}
	return "", &NotFoundError{Tried: tried}
}

func (f Finder) explicit(source, p string) (string, error) {
	if !strings.ContainsRune(p, os.PathSeparator) {
		// A bare name means "look it up on PATH", like a shell would.
		lp, err := f.LookPath(p)
		if err != nil {
			return "", &BadBrowserError{Source: source, Path: p, Reason: "is not on PATH"}
		}
		return lp, nil
	}
	if err := isExecutable(p); err != nil {
		return "", &BadBrowserError{Source: source, Path: p, Reason: err.Error()}
	}
	return p, nil
}

func isExecutable(p string) error {
	fi, err := os.Stat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return errors.New("does not exist")
	case err != nil:
		return err
	case fi.IsDir():
		return errors.New("is a directory")
	case fi.Mode().Perm()&0o111 == 0:
		return errors.New("is not executable")
	}
	return nil
}
