package broker

import (
	"context"
	"maps"
	"slices"
	"time"
)

// Named sessions are the shared sessions a client names (`torii mcp
// --session NAME`, `torii exec --session NAME`, an /mcp request's
// Torii-Session header): one per key, whatever process makes the call, so
// a client that runs one process per call keeps its tabs. They outlive the
// daemon: the store (SetNamedStore) keeps each one's daemon-minted ID and
// tabs, and the same name after a restart is the same session, which the
// extension knows by that ID. A named session ends after the idle time
// (config broker.sessionIdleSec), never when a process goes.
//
// SECURITY I-82: the key is the name as its principal may use it: the
// daemon's owner for the sockets, the token for /mcp ("http" key prefix
// plus the token's ID), so a token never reaches another token's named
// session, and a name never reaches a session minted with NewSession
// (SECURITY I-23).

// Saved is a named session as the store keeps it.
type Saved struct {
	ID      string    `json:"id"`
	Label   string    `json:"label"`
	Tabs    []int     `json:"tabs"`
	Browser string    `json:"browser,omitempty"` // device ID the tabs are in
	Used    time.Time `json:"used"`
}

// SetNamedStore gives the broker the named sessions saved by a previous
// daemon and the function that saves them (called, not under a lock, after
// every change). Sessions idle past their time while no daemon ran are
// ended at the next browser's attach (the extension is told, and closes
// their tabs where it should).
func (b *Broker) SetNamedStore(saved map[string]Saved, save func(map[string]Saved)) {
	b.smu.Lock()
	defer b.smu.Unlock()
	b.saveNamed = save
	b.restored = map[string]Saved{}
	for k, v := range saved {
		if time.Since(v.Used) >= b.labelIdle {
			b.endedWhileDown = append(b.endedWhileDown, v.ID)
			continue
		}
		b.restored[k] = v
	}
}

// NamedSession is the named session of key (shown as label), started or
// resumed on first use. It never reaches a session minted with NewSession.
// The caller bounds key (a clipped label and, for /mcp, a token ID).
func (b *Broker) NamedSession(key, label string) *Session {
	return b.keyedSession(key, clipLabel(label))
}

func (b *Broker) keyedSession(key, label string) *Session {
	b.smu.Lock()
	s := b.byLabel[key]
	b.smu.Unlock()
	if s != nil && s.ctx.Err() == nil {
		return s
	}
	b.sweepLabels(1)
	b.smu.Lock()
	if old := b.byLabel[key]; old != nil && old.ctx.Err() == nil {
		b.smu.Unlock()
		return old
	}
	rec, resumed := b.restored[key]
	delete(b.restored, key)
	b.smu.Unlock()
	s = b.newSession(label, KindCLI, rec.ID)
	b.smu.Lock()
	s.key = key
	if resumed {
		s.tabs, s.tabsIn = slices.Clone(rec.Tabs), rec.Browser
		if rec.Browser != "" {
			s.seen = []string{rec.Browser} // told when it ends, even before a call
		}
	}
	b.byLabel[key] = s
	b.sweeping.Do(func() { go b.sweepLoop() })
	b.smu.Unlock()
	if resumed {
		b.log.Info("broker: named session resumed", "session", s.id, "label", s.label, "tabs", len(rec.Tabs))
	}
	b.persistNamed()
	return s
}

// persistNamed hands the live named sessions, and those restored but not
// yet resumed, to the store.
func (b *Broker) persistNamed() {
	b.smu.Lock()
	save := b.saveNamed
	if save == nil {
		b.smu.Unlock()
		return
	}
	out := maps.Clone(b.restored)
	if out == nil {
		out = map[string]Saved{}
	}
	for k, s := range b.byLabel {
		if s.ctx.Err() != nil {
			continue
		}
		out[k] = Saved{ID: s.id, Label: s.label, Tabs: orEmptyInts(slices.Clone(s.tabs)), Browser: s.tabsIn, Used: s.used}
	}
	b.smu.Unlock()
	// Serialised, so an older set never lands after a newer one.
	b.saveMu.Lock()
	defer b.saveMu.Unlock()
	save(out)
}

// sweepLoop ends idle named sessions on time, not only when another is
// made, so their tabs close when they should.
func (b *Broker) sweepLoop() {
	for {
		b.smu.Lock()
		every := min(max(b.labelIdle/4, 200*time.Millisecond), 15*time.Second)
		b.smu.Unlock()
		select {
		case <-b.ctx.Done():
			return
		case <-time.After(every):
		}
		b.sweepLabels(0)
	}
}

// endWhileDown tells a browser that attaches about named sessions that
// went idle past their time while no daemon ran.
func (b *Broker) endWhileDown(srv ToolServer) {
	b.smu.Lock()
	ids := b.endedWhileDown
	b.endedWhileDown = nil
	b.smu.Unlock()
	if len(ids) == 0 {
		return
	}
	l := b.Limits()
	go func() {
		for _, id := range ids {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			_ = srv.SessionEnded(ctx, endedParams(id, l))
			cancel()
		}
	}()
	b.persistNamed()
}

// savedCall saves a named session after a call that changed its tabs, or
// when its last save is a quarter of the idle time old (so a restart
// dates its idleness about right).
func (b *Broker) savedCall(s *Session) {
	if s.key == "" {
		return
	}
	b.smu.Lock()
	due := s.tabsChanged || s.used.Sub(s.saved) >= b.labelIdle/4
	s.tabsChanged = false
	if due {
		s.saved = s.used
	}
	b.smu.Unlock()
	if due {
		b.persistNamed()
	}
}

// EndNamed ends the named session of key now, live or saved; false when
// there is none. Its end is told like an idle one's (its tabs close in a
// browser torii launched unless broker.keepManagedTabs).
func (b *Broker) EndNamed(key string) bool {
	b.smu.Lock()
	live := b.byLabel[key]
	rec, saved := b.restored[key]
	b.smu.Unlock()
	switch {
	case live != nil && live.ctx.Err() == nil:
		live.Close()
	case saved:
		b.keyedSession(key, rec.Label).Close()
	default:
		return false
	}
	b.log.Info("broker: named session ended on request", "key", key)
	return true
}
