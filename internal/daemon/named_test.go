package daemon

import (
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/broker"
)

const goodID = "s-0b5f2d3c-1111-4222-8333-444455556666"

func TestNamedStoreRoundTrip(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), namedFile)
	log := slog.New(slog.DiscardHandler)
	if got := loadNamed(path, log); got != nil {
		t.Fatalf("no file: %v, want none", got)
	}
	in := map[string]broker.Saved{"inspector": {ID: goodID, Label: "inspector", Tabs: []int{12}, Browser: "dev", Used: time.Now().UTC().Truncate(time.Second)}}
	saveNamed(path, log, in)
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("store mode = %v, %v; want 0600", fi, err)
	}
	out := loadNamed(path, log)
	if got := out["inspector"]; got.ID != goodID || !slices.Equal(got.Tabs, []int{12}) || !got.Used.Equal(in["inspector"].Used) {
		t.Fatalf("loaded %+v, want %+v", got, in["inspector"])
	}
}

// A store that is not what the daemon writes is moved aside, not trusted,
// and the daemon starts with no named sessions.
func TestNamedStoreCorrupt(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	for name, c := range map[string]struct {
		body string
		mode os.FileMode
	}{
		"not json":       {`{"version":1,"sessions":`, 0o600},
		"wrong version":  {`{"version":9,"sessions":{}}`, 0o600},
		"wrong shape":    {`{"version":1,"sessions":[1,2]}`, 0o600},
		"open to others": {`{"version":1,"sessions":{"x":{"id":"` + goodID + `","label":"x","tabs":[1]}}}`, 0o644},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), namedFile)
			if err := os.WriteFile(path, []byte(c.body), c.mode); err != nil {
				t.Fatal(err)
			}
			if got := loadNamed(path, log); got != nil {
				t.Fatalf("loaded %v from a bad store", got)
			}
			if _, err := os.Stat(path + ".corrupt"); err != nil {
				t.Fatalf("not moved aside: %v", err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Fatalf("the bad store is still in place: %v", err)
			}
		})
	}
}

// Entries the daemon could not have written are dropped one by one: an ID
// not of the daemon's shape, an empty name; tabs that are not positive
// integers are dropped from the entry they are in.
func TestNamedStoreBadEntries(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	path := filepath.Join(t.TempDir(), namedFile)
	body := `{"version":1,"sessions":{
		"ok":{"id":"` + goodID + `","label":"ok","tabs":[0,-3,5]},
		"forged":{"id":"anonymous","label":"forged","tabs":[1]},
		"":{"id":"` + goodID + `","label":"empty","tabs":[1]}}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	got := loadNamed(path, log)
	if len(got) != 1 || !slices.Equal(got["ok"].Tabs, []int{5}) {
		t.Fatalf("loaded %+v, want only ok with tabs [5]", got)
	}
}
