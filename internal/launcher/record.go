package launcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/atomicfile"
	"github.com/torii-browser/torii/internal/osproc"
)

// RecordsFile names the file in the state directory that lists the browsers `torii launch`
// started, so that `torii stop`, `torii restart` and a second `torii launch` find them again.
const RecordsFile = "browsers.json"

// Record is one managed browser `torii launch` started.
type Record struct {
	PID        int       `json:"pid"` // also its process group: it runs in its own session
	Profile    string    `json:"profile"`
	Browser    string    `json:"browser"`
	Headless   bool      `json:"headless"`
	DefaultDir bool      `json:"defaultProfile"`     // the profile is the state directory's own
	DeviceID   string    `json:"deviceId,omitempty"` // what it paired as, once known
	DeviceName string    `json:"deviceName,omitempty"`
	StartedAt  time.Time `json:"startedAt"`
	// Unanswerable says, for a headless browser, which approvals its launch policy left at ask:
	// those calls fail at once with approval_unanswerable (SECURITY I-80). `torii status` shows it.
	Unanswerable string `json:"unanswerable,omitempty"`
}

// LoadRecords reads the records; a missing file is none.
func LoadRecords(stateDir string) ([]Record, error) {
	b, err := os.ReadFile(filepath.Join(stateDir, RecordsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rs []Record
	if err := json.Unmarshal(b, &rs); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it; it only lists the browsers torii launch started)", filepath.Join(stateDir, RecordsFile), err)
	}
	return rs, nil
}

// SaveRecord adds r, replacing any record of the same profile.
func SaveRecord(stateDir string, r Record) error {
	rs, _ := LoadRecords(stateDir)
	rs = slices.DeleteFunc(rs, func(x Record) bool { return x.Profile == r.Profile })
	return writeRecords(stateDir, append(rs, r))
}

// RemoveRecord drops the record of profile.
func RemoveRecord(stateDir, profile string) error {
	rs, err := LoadRecords(stateDir)
	if err != nil {
		return err
	}
	n := len(rs)
	rs = slices.DeleteFunc(rs, func(x Record) bool { return x.Profile == profile })
	if len(rs) == n {
		return nil
	}
	return writeRecords(stateDir, rs)
}

func writeRecords(stateDir string, rs []Record) error {
	if rs == nil {
		rs = []Record{}
	}
	b, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(stateDir, RecordsFile), append(b, '\n'), 0o600)
}

// Running reports whether the recorded browser still runs: its pid holds the profile's
// SingletonLock, or its command line names the profile. A pid reused by another program
// matches neither, so it is never signalled.
func (r Record) Running() bool {
	if r.PID <= 0 {
		return false
	}
	if lockHolder(r.Profile) == r.PID {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", r.PID))
	if err != nil {
		return false
	}
	return slices.Contains(strings.Split(string(b), "\x00"), "--user-data-dir="+r.Profile)
}

// RunningPID is the pid of the browser that holds the profile dir now, or 0.
func RunningPID(dir string) int { return lockHolder(dir) }

// Terminate ends the browser's process group: SIGTERM (Chromium shuts down cleanly, saving
// the profile), then SIGKILL if it still runs after grace. It reports whether it had to kill.
func Terminate(pid int, grace time.Duration, alive func() bool) (killed bool) {
	_ = osproc.Stop(pid, true, false)
	deadline := time.Now().Add(grace)
	for time.Now().Before(deadline) {
		if !alive() {
			return false
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = osproc.Stop(pid, true, true)
	for i := 0; i < 40 && alive(); i++ {
		time.Sleep(50 * time.Millisecond)
	}
	return true
}
