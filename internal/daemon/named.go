package daemon

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/torii-browser/torii/internal/atomicfile"
	"github.com/torii-browser/torii/internal/broker"
)

// The named sessions' store, <state>/sessions.json: name → the session's
// daemon-minted ID and its tabs, so a named session keeps its tabs across
// daemon restarts (broker/named.go). SECURITY I-82: 0600 in the 0700 state
// dir; a file that is not what the daemon writes is moved aside and the
// daemon starts with no named sessions, and an entry that is not valid is
// dropped, never trusted: an ID the daemon did not mint shape, a tab ID
// that is not a positive integer.

// namedFile is the store's name in the state dir.
const namedFile = "sessions.json"

// maxNamedTabs bounds the tabs kept per session (the extension's own cap
// is far lower).
const maxNamedTabs = 256

var sessionIDShape = regexp.MustCompile(`^s-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

type namedStore struct {
	Version  int                     `json:"version"`
	Sessions map[string]broker.Saved `json:"sessions"`
}

// loadNamed reads the store. A missing file is no sessions; an unreadable
// or corrupt one is renamed to sessions.json.corrupt (kept for the person
// to look at) and is no sessions too.
func loadNamed(path string, log *slog.Logger) map[string]broker.Saved {
	raw, exists, err := atomicfile.ReadPrivate(path)
	if !exists {
		return nil
	}
	var st namedStore
	if err == nil {
		err = json.Unmarshal(raw, &st)
	}
	if err == nil && st.Version != 1 {
		err = fmt.Errorf("version %d, want 1", st.Version)
	}
	if err != nil {
		aside := path + ".corrupt"
		_ = os.Rename(path, aside)
		log.Warn("named sessions not restored: the store is unreadable; moved aside, starting with none", "file", path, "movedTo", aside, "err", err)
		return nil
	}
	return cleanNamed(st.Sessions, log)
}

// cleanNamed keeps the valid entries, each with its valid tabs.
func cleanNamed(in map[string]broker.Saved, log *slog.Logger) map[string]broker.Saved {
	out := make(map[string]broker.Saved, len(in))
	for k, v := range in {
		if len(out) >= broker.MaxLabelSessions {
			log.Warn("named sessions: more than the cap in the store; the rest are dropped", "cap", broker.MaxLabelSessions)
			break
		}
		if k == "" || !utf8.ValidString(k) || utf8.RuneCountInString(k) > 4*broker.MaxLabel || !sessionIDShape.MatchString(v.ID) {
			log.Warn("named sessions: an invalid entry dropped", "key", k)
			continue
		}
		tabs := make([]int, 0, len(v.Tabs))
		for _, t := range v.Tabs {
			if t > 0 && len(tabs) < maxNamedTabs {
				tabs = append(tabs, t)
			}
		}
		v.Tabs = tabs
		if v.Label == "" || utf8.RuneCountInString(v.Label) > broker.MaxLabel {
			v.Label = "named"
		}
		out[k] = v
	}
	return out
}

// saveNamed writes the store; a failure is logged (the sessions live on,
// only a restart would forget them).
func saveNamed(path string, log *slog.Logger, sessions map[string]broker.Saved) {
	raw, err := json.Marshal(namedStore{Version: 1, Sessions: sessions})
	if err == nil {
		err = atomicfile.Write(path, append(raw, '\n'), 0o600)
	}
	if err != nil {
		log.Warn("named sessions not saved", "file", path, "err", err)
	}
}

// initNamed restores the named sessions and saves every change.
func (d *daemon) initNamed() {
	path := filepath.Join(d.opts.Paths.StateDir, namedFile)
	saved := loadNamed(path, d.log)
	d.broker.SetNamedStore(saved, func(m map[string]broker.Saved) { saveNamed(path, d.log, m) })
	if n := len(saved); n > 0 {
		d.log.Info("named sessions restored", "count", n, "at", time.Now().UTC())
	}
}
