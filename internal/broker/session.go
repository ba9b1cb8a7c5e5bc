package broker

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Kind says where a session comes from.
type Kind string

const (
	KindStdio Kind = "stdio" // one `torii mcp` process (one MCP-socket connection)
	KindHTTP  Kind = "http"  // one MCP session at /mcp
	KindAgent Kind = "agent" // a side-panel agent (the gateway)
	KindCLI   Kind = "cli"   // `torii exec` calls, one shared session per label
)

// recentCalls is how many finished calls a session remembers for status.
const recentCalls = 20

// Session is one agent session. Its identity (ID) is minted here, by the
// daemon; a label is only a name for the person and never selects a
// session (SECURITY I-23). The extension owns tabs by this ID.
type Session struct {
	b       *Broker
	id      string
	label   string
	kind    Kind
	started time.Time
	gateway string          // the gateway (chat) session an agent session serves; see SetGatewaySession
	key     string          // a named session's key (named.go); "" for the others
	ctx     context.Context // ends with Close; every call of the session derives from it
	cancel  context.CancelFunc

	// guarded by b.smu
	queue   []*pending // waiting, in arrival order
	running *pending
	tabs    []int  // the session's tabs as the extension last reported them
	tabsIn  string // the browser (device ID) those tabs are in

	// The browser the session is bound to (browsers.go), guarded by b.smu.
	binding     Binding
	want        string // the name or ID a named session asked for
	browser     string // device ID; "" until the first call (default, named)
	browserName string
	revoked     bool     // its browser was unpaired
	seen        []string // browsers its calls reached, told when it ends
	recent      []CallRecord
	ended       time.Time
	used        time.Time // last call queued or finished; cli sessions expire after labelIdle of it
	saved       time.Time // used as last saved (named sessions)
	tabsChanged bool      // tabs changed since last saved (named sessions)
	calls       int
	onClose     []func()
	once        sync.Once
}

// CallRecord is one finished call, for status: never arguments or results.
type CallRecord struct {
	Tool       string    `json:"tool"`
	Outcome    string    `json:"outcome"` // "ok" or the error code
	At         time.Time `json:"at"`
	DurationMs int64     `json:"durationMs"` // whole call, queue wait included
	WaitMs     int64     `json:"waitMs"`     // time queued before it was sent
	TabID      *int      `json:"tabId,omitempty"`
}

// SessionInfo is a session as `torii status` and the status tool show it.
type SessionInfo struct {
	ID       string       `json:"id"`
	Label    string       `json:"label"`
	Kind     Kind         `json:"kind"`
	Started  time.Time    `json:"started"`
	Ended    *time.Time   `json:"ended,omitempty"`
	Tabs     []int        `json:"tabs"`
	Queued   int          `json:"queued"`
	InFlight int          `json:"inFlight"`
	Calls    int          `json:"calls"`
	Recent   []CallRecord `json:"recent"`
	// Browser is the name of the browser the session acts in (BrowserID its
	// device), empty before its first call; Binding how it was chosen.
	Browser   string  `json:"browser,omitempty"`
	BrowserID string  `json:"browserId,omitempty"`
	Binding   Binding `json:"binding"`
	// WantBrowser is the browser a named session asked for.
	WantBrowser string `json:"wantBrowser,omitempty"`
}

// NewSession mints a session. Close it when its client goes: its queued
// calls fail with cancelled, its in-flight calls are aborted in the
// extension (torii/tools/cancel), and the extension is told the session ended.
func (b *Broker) NewSession(label string, kind Kind) *Session { return b.newSession(label, kind, "") }

// newSession mints a session; a named session resumed from the store keeps
// the id it had.
func (b *Broker) newSession(label string, kind Kind, id string) *Session {
	if label == "" {
		label = string(kind)
	}
	label = clipLabel(label)
	if id == "" {
		id = "s-" + uuid.NewString()
	}
	s := &Session{b: b, id: id, label: label, kind: kind, started: time.Now()}
	s.used = s.started
	s.ctx, s.cancel = context.WithCancel(b.ctx)
	b.smu.Lock()
	b.sessions[s.id] = s
	b.order = append(b.order, s)
	b.smu.Unlock()
	b.log.Info("broker: session started", "session", s.id, "label", label, "kind", kind)
	return s
}

// ID is the daemon-minted identity.
func (s *Session) ID() string { return s.id }

// Label is the name shown to the person.
func (s *Session) Label() string { return s.label }

// Kind says where the session comes from.
func (s *Session) Kind() Kind { return s.kind }

// SetGatewaySession names the gateway (side-panel chat) session this agent
// session serves. The extension receives it in every call's
// meta.torii.gatewaySessionId and looks up the person's window grant by it
// (SECURITY I-29); the daemon only says which session calls, the grant
// itself lives in the extension. Set it before the session's first call.
func (s *Session) SetGatewaySession(id string) {
	s.b.smu.Lock()
	defer s.b.smu.Unlock()
	if s.kind == KindAgent {
		s.gateway = id
	}
}

// Done is closed when the session ends.
func (s *Session) Done() <-chan struct{} { return s.ctx.Done() }

// OnClose registers f to run once when the session ends.
func (s *Session) OnClose(f func()) {
	s.b.smu.Lock()
	defer s.b.smu.Unlock()
	s.onClose = append(s.onClose, f)
}

// CallTool runs one tool call as this session.
func (s *Session) CallTool(ctx context.Context, name string, args json.RawMessage, timeout time.Duration) *mcp.CallToolResult {
	return s.b.CallTool(ctx, Call{Name: name, Arguments: args, Session: s.label, Owner: s, Timeout: timeout})
}

// Close ends the session (idempotent): queued calls fail with cancelled,
// in-flight ones are cancelled in the extension, and the extension hears
// torii/tools/session_ended (it then treats the session's tabs as
// an ended session's: first to go under the tab cap, closed at once when
// the broker's closeTabsOnEnd is set).
func (s *Session) Close() {
	s.once.Do(func() {
		s.cancel()
		b := s.b
		b.smu.Lock()
		s.ended = time.Now()
		fns := s.onClose
		s.onClose = nil
		b.smu.Unlock()
		for _, f := range fns {
			f()
		}
		b.log.Info("broker: session ended", "session", s.id, "label", s.label)
		b.notifyEnded(s)
		b.pruneEnded()
		if s.key != "" {
			b.persistNamed()
		}
	})
}

func (s *Session) info() SessionInfo {
	in := SessionInfo{ID: s.id, Label: s.label, Kind: s.kind, Started: s.started, Tabs: orEmptyInts(slices.Clone(s.tabs)),
		Queued: len(s.queue), Calls: s.calls, Recent: slices.Clone(s.recent),
		Browser: s.browserName, BrowserID: s.browser, Binding: s.binding, WantBrowser: s.want}
	if in.Binding == "" {
		in.Binding = BindDefault
	}
	if s.recent == nil {
		in.Recent = []CallRecord{}
	}
	if s.running != nil {
		in.InFlight = 1
	}
	if !s.ended.IsZero() {
		e := s.ended
		in.Ended = &e
	}
	return in
}

// Info is the session's status.
func (s *Session) Info() SessionInfo {
	s.b.smu.Lock()
	defer s.b.smu.Unlock()
	return s.info()
}

// Sessions lists live sessions and recently ended ones, oldest first.
func (b *Broker) Sessions() []SessionInfo {
	b.sweepLabels(0)
	b.smu.Lock()
	defer b.smu.Unlock()
	out := make([]SessionInfo, 0, len(b.order))
	for _, s := range b.order {
		out = append(out, s.info())
	}
	return out
}

// Stats are broker-wide numbers for status.
type Stats struct {
	InFlight    int `json:"inFlight"`
	Queued      int `json:"queued"`
	MaxInFlight int `json:"maxInFlight"`
}

// Stats is the scheduler's state now.
func (b *Broker) Stats() Stats {
	b.smu.Lock()
	defer b.smu.Unlock()
	return Stats{InFlight: b.inflight, Queued: len(b.waiting), MaxInFlight: b.limits.MaxInFlight}
}

// keepEnded bounds how many ended sessions status still shows.
const keepEnded = 16

func (b *Broker) pruneEnded() {
	b.smu.Lock()
	defer b.smu.Unlock()
	n := 0
	for _, s := range b.order {
		if !s.ended.IsZero() {
			n++
		}
	}
	if n <= keepEnded {
		return
	}
	kept := b.order[:0]
	for _, s := range b.order {
		if !s.ended.IsZero() && n > keepEnded {
			n--
			delete(b.sessions, s.id)
			if b.byLabel[s.key] == s {
				delete(b.byLabel, s.key)
			}
			continue
		}
		kept = append(kept, s)
	}
	clear(b.order[len(kept):])
	b.order = kept
}

// Shared cli sessions are keyed by a label the caller chooses, so their
// table is bounded (SECURITY I-52): one idle for broker.sessionIdleSec ends, and at
// MaxLabelSessions the least recently used idle one ends to make room.
// Ending one drops its tab ownership like any session's end.
const (
	MaxLabelSessions = 64
	// MaxLabel bounds a session label in characters; longer ones are cut.
	MaxLabel = 64
)

func clipLabel(l string) string { return clipRunes(l, MaxLabel) }

// ClipLabel is a label cut to MaxLabel characters.
func ClipLabel(l string) string { return clipLabel(l) }

// clipRunes is s cut to at most n characters.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

// SetLabelLimits changes the cli-session lifetime and cap (tests).
func (b *Broker) SetLabelLimits(idle time.Duration, maxSessions int) {
	b.smu.Lock()
	defer b.smu.Unlock()
	if idle > 0 {
		b.labelIdle = idle
	}
	if maxSessions > 0 {
		b.maxLabels = maxSessions
	}
}

// labelSession is the shared session of a caller that has no session of
// its own (`torii exec`, an in-daemon caller): one per label, kind cli.
// It never reaches a session minted with NewSession (SECURITY I-23).
func (b *Broker) labelSession(label string) *Session {
	if label == "" {
		label = "cli"
	}
	label = clipLabel(label)
	return b.keyedSession(label, label)
}

// sweepLabels ends cli sessions idle for labelIdle and, to leave room for
// `room` new ones under maxLabels, the least recently used idle ones.
func (b *Broker) sweepLabels(room int) {
	now := time.Now()
	b.smu.Lock()
	var end []*Session
	live := 0
	for _, s := range b.byLabel {
		if s.ctx.Err() != nil {
			continue
		}
		if s.idleLocked() && now.Sub(s.used) >= b.labelIdle {
			end = append(end, s)
			continue
		}
		live++
	}
	for live+room > b.maxLabels {
		var lru *Session
		for _, s := range b.byLabel {
			if s.ctx.Err() == nil && s.idleLocked() && !slices.Contains(end, s) && (lru == nil || s.used.Before(lru.used)) {
				lru = s
			}
		}
		if lru == nil {
			break // every one is busy: their calls bound the table
		}
		end = append(end, lru)
		live--
	}
	b.smu.Unlock()
	for _, s := range end {
		b.log.Info("broker: cli session ended", "session", s.id, "label", s.label, "why", "idle or over the cap")
		s.Close()
	}
}

// idleLocked: nothing queued or running. Under b.smu.
func (s *Session) idleLocked() bool { return len(s.queue) == 0 && s.running == nil }

func orEmptyInts(s []int) []int {
	if s == nil {
		return []int{}
	}
	return s
}
