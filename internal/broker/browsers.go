package broker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/toolerr"
)

// Several paired browsers may be connected at once, each serving its own
// tool server. Every session is bound to one of them (SECURITY I-58):
//
//   - by default to the live browser used most recently (a call routed to
//     it, or its connect), chosen at the session's first call;
//   - to the one it names (`torii mcp --browser`, /mcp ?browser=): never
//     another;
//   - a side-panel agent to the browser whose panel spawned it: never
//     another (SECURITY I-59).
//
// Only a default-bound session whose browser is gone moves to another live
// browser, and its next result says so (a failover notice).

// browser is one connected browser's tool server.
type browser struct {
	id    string // the paired device's ID
	name  string
	srv   ToolServer
	since time.Time
	used  time.Time // its connect or the last call routed to it
}

// BrowserInfo is a connected browser as status shows it.
type BrowserInfo struct {
	DeviceID string    `json:"deviceId"`
	Name     string    `json:"name"`
	Since    time.Time `json:"since"`
	LastUsed time.Time `json:"lastUsed"`
	// Sessions are the live sessions bound to it (not shown to agents).
	Sessions []string `json:"sessions,omitempty"`
}

// Binding says how a session chose its browser.
type Binding string

const (
	BindDefault Binding = "default" // most recently used live one; moves when it goes
	BindNamed   Binding = "named"   // named by the client; never moves
	BindOwn     Binding = "own"     // a side-panel agent's own browser; never moves
)

// Resolver maps a browser name or device ID to the paired device it
// names (the daemon's device store): ok is false when none is paired.
type Resolver func(nameOrID string) (id, name string, ok bool)

// Managed says whether deviceID is a browser `torii launch` started and
// still lists (deviceID "": whether it lists any).
type Managed func(deviceID string) bool

// SetManaged sets how a managed browser is told from the person's own, so a
// managed one that is gone gets "run torii launch" rather than "open Chrome".
func (b *Broker) SetManaged(m Managed) {
	b.managed.Store(&m)
}

// launchHint is the next step for a managed browser that is gone, or ""
// (the code's own hint) for the person's own browser.
func (b *Broker) launchHint(deviceID string) string {
	if m := b.managed.Load(); m == nil || *m == nil || !(*m)(deviceID) {
		return ""
	}
	return "The browser `torii launch` started is not running (closed or crashed); run `torii launch` to start it again, then call again."
}

// SetResolver sets how --browser names are resolved (nil: only a live
// browser's exact name or ID).
func (b *Broker) SetResolver(r Resolver) {
	b.mu.Lock()
	b.resolve = r
	b.mu.Unlock()
}

// AttachBrowser makes srv the tool server of the paired device id. Another
// device's server is left alone; the same device's previous one (a
// reconnect) is replaced and closed. srv detaches itself when its link ends.
func (b *Broker) AttachBrowser(id, name string, srv ToolServer) {
	b.lmu.Lock()
	defer b.lmu.Unlock()
	tools := srv.Tools()
	now := time.Now()
	b.mu.Lock()
	old := b.browsers[id]
	b.browsers[id] = &browser{id: id, name: name, srv: srv, since: now, used: now}
	changed := !sameTools(b.tools, tools)
	if changed {
		b.tools = tools
		b.byName = make(map[string]*mcp.Tool, len(tools))
		for _, t := range tools {
			b.byName[t.Name] = t
		}
	}
	served := b.servedLocked()
	b.mu.Unlock()
	if old != nil && old.srv != srv {
		b.failWaitingFor(old, toolerr.New(toolerr.ExtensionNotConnected, "browser %q reconnected while the call was queued; nothing was sent", name))
		go old.srv.Close()
	}
	bw := b.browserOf(id)
	context.AfterFunc(srv.Context(), func() { b.detach(bw) })
	b.log.Info("broker: browser tool server attached", "device", id, "name", name, "link", srv.LinkID(), "tools", len(tools), "catalogueChanged", changed)
	b.endWhileDown(srv)
	if changed {
		for _, f := range b.listeners {
			f(served)
		}
	}
}

func (b *Broker) browserOf(id string) *browser {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.browsers[id]
}

// RenameBrowser changes the name notices and errors use for device id.
func (b *Broker) RenameBrowser(id, name string) {
	b.smu.Lock()
	defer b.smu.Unlock()
	b.mu.Lock()
	if bw := b.browsers[id]; bw != nil {
		bw.name = name
	}
	b.mu.Unlock()
	for _, s := range b.sessions {
		if s.browser == id {
			s.browserName = name
		}
	}
}

// RevokeBrowser is called when device id is unpaired: its server goes at
// once, and the sessions bound to it hear it was revoked (not merely
// disconnected) on their next call.
func (b *Broker) RevokeBrowser(id string) {
	b.smu.Lock()
	for _, s := range b.sessions {
		if s.browser == id {
			s.revoked = true
		}
	}
	b.smu.Unlock()
	if bw := b.browserOf(id); bw != nil {
		b.detach(bw)
	}
}

func (b *Broker) detach(bw *browser) {
	if bw == nil {
		return
	}
	b.mu.Lock()
	gone := b.browsers[bw.id] == bw
	if gone {
		delete(b.browsers, bw.id)
	}
	b.mu.Unlock()
	// In-flight calls fail on the link (browserlink); queued ones routed to it fail
	// here, at once: nothing was sent and nobody waits out a budget.
	n := b.failWaitingFor(bw, toolerr.New(toolerr.ExtensionNotConnected, "browser %q disconnected; nothing was sent", bw.name))
	if gone {
		b.log.Info("broker: browser tool server detached", "device", bw.id, "name", bw.name, "link", bw.srv.LinkID(), "queuedFailed", n)
	}
}

// Browsers lists the connected browsers, most recently used first.
func (b *Broker) Browsers() []BrowserInfo {
	b.smu.Lock()
	defer b.smu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BrowserInfo, 0, len(b.browsers))
	for _, bw := range b.liveLocked() {
		in := BrowserInfo{DeviceID: bw.id, Name: bw.name, Since: bw.since, LastUsed: bw.used, Sessions: []string{}}
		for _, s := range b.order {
			if s.browser == bw.id && s.ended.IsZero() {
				in.Sessions = append(in.Sessions, s.id)
			}
		}
		out = append(out, in)
	}
	return out
}

// liveLocked: connected browsers, most recently used first. Under b.mu.
func (b *Broker) liveLocked() []*browser {
	out := make([]*browser, 0, len(b.browsers))
	for _, bw := range b.browsers {
		if bw.srv.Context().Err() == nil {
			out = append(out, bw)
		}
	}
	slices.SortFunc(out, func(x, y *browser) int {
		if c := y.used.Compare(x.used); c != 0 {
			return c
		}
		return strings.Compare(x.name, y.name)
	})
	return out
}

// connectedNames lists the connected browsers for an error. Under b.mu.
func (b *Broker) connectedNamesLocked() string {
	var names []string
	for _, bw := range b.liveLocked() {
		names = append(names, fmt.Sprintf("%q", bw.name))
	}
	if len(names) == 0 {
		return "no browser is connected"
	}
	return "connected: " + strings.Join(names, ", ")
}

// BindBrowser fixes how s chooses its browser: BindNamed with the name or
// device ID the client gave, BindOwn with the device ID of the browser
// whose side panel spawned it. Call it before the session's first call.
func (s *Session) BindBrowser(how Binding, nameOrID string) {
	b := s.b
	b.smu.Lock()
	defer b.smu.Unlock()
	s.binding = how
	switch how {
	case BindOwn:
		s.browser = nameOrID
		b.mu.Lock()
		if bw := b.browsers[nameOrID]; bw != nil {
			s.browserName = bw.name
		}
		b.mu.Unlock()
		if s.browserName == "" {
			s.browserName = nameOrID
		}
	case BindNamed:
		s.want = nameOrID
	}
}

// Notice is a failover notice: the session's browser changed.
type Notice struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Reason string `json:"reason"` // "disconnected" or "revoked"
}

func (n *Notice) text() string {
	return fmt.Sprintf("[torii] Now acting in browser %q: %q %s. Your tabs there are not here; call tabs to see this browser's.", n.To, n.From, n.Reason)
}

// route picks the browser s's call goes to (SECURITY I-58, I-59): its
// bound one while connected; a default-bound session whose browser is gone
// moves to the most recently used live one and gets a notice; a named or
// own-browser session never moves and gets a typed error instead.
func (b *Broker) route(s *Session) (*browser, *Notice, *toolerr.Error) {
	b.smu.Lock()
	defer b.smu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if s.browser == "" && s.want != "" {
		// A named browser is resolved at the first call, and then kept by ID.
		id, name, ok := s.want, s.want, false
		if b.resolve != nil {
			id, name, ok = b.resolve(s.want)
		}
		if !ok {
			for _, bw := range b.browsers {
				if bw.id == s.want || bw.name == s.want {
					id, name, ok = bw.id, bw.name, true
				}
			}
		}
		if !ok {
			return nil, nil, browserErr("no paired browser is named %q (%s); nothing was sent", "Restart this agent's torii mcp with --browser set to one of the connected browsers (see `torii status`), or without --browser.", s.want, b.connectedNamesLocked())
		}
		s.browser, s.browserName = id, name
	}
	if s.browser != "" {
		if bw := b.browsers[s.browser]; bw != nil && bw.srv.Context().Err() == nil {
			bw.used = time.Now()
			s.browserName = bw.name
			return bw, nil, nil
		}
		state := "is not connected"
		if s.revoked {
			state = "was revoked (unpaired)"
		}
		switch s.binding {
		case BindOwn:
			return nil, nil, browserErr("this side-panel agent acts only in its own browser %q, which %s; nothing was sent (%s)",
				"Reopen the Torii side panel in that browser to continue; this agent never acts in another browser.", s.browserName, state, b.connectedNamesLocked())
		case BindNamed:
			next := "Reconnect it (open its Torii popup), or restart this agent's torii mcp with another --browser, or without one."
			if s.revoked {
				next = "Pair it again (`torii launch` or its Torii popup), or restart this agent's torii mcp with another --browser, or without one."
			}
			return nil, nil, browserErr("browser %q, which this session is bound to, %s; nothing was sent (%s)", next, s.browserName, state, b.connectedNamesLocked())
		}
	}
	live := b.liveLocked()
	if len(live) == 0 {
		if s.browser != "" {
			return nil, nil, browserErr("browser %q %s and no other browser is connected; nothing was sent", b.launchHint(s.browser), s.browserName, why(s))
		}
		return nil, nil, browserErr("no browser is connected; nothing was sent", b.launchHint(""))
	}
	to := live[0]
	var n *Notice
	if s.browser != "" && s.browser != to.id {
		reason := "disconnected"
		if s.revoked {
			reason = "was revoked"
		}
		n = &Notice{From: s.browserName, To: to.name, Reason: reason}
		// Its tabs are the old browser's; the new one reports its own.
		s.tabs, s.tabsIn = nil, ""
	}
	s.browser, s.browserName, s.revoked = to.id, to.name, false
	to.used = time.Now()
	return to, n, nil
}

func why(s *Session) string {
	if s.revoked {
		return "was revoked"
	}
	return "disconnected"
}

// browserErr is extension_not_connected with the browser named and the
// next step; hint "" keeps the code's own.
func browserErr(format, hint string, args ...any) *toolerr.Error {
	e := toolerr.New(toolerr.ExtensionNotConnected, format, args...)
	if hint != "" {
		e.Hint = hint
	}
	return e
}

// withNotice puts a failover notice first in the result's text and in
// its _meta.torii.browserChanged, so both a person reading the transcript
// and a client reading structure see it.
func withNotice(res *mcp.CallToolResult, n *Notice) {
	if n == nil || res == nil {
		return
	}
	res.Content = append([]mcp.Content{&mcp.TextContent{Text: n.text()}}, res.Content...)
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	m, _ := res.Meta[MetaKey].(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	m["browserChanged"] = n
	res.Meta[MetaKey] = m
}

// failWaitingFor fails every waiting call routed to bw.
func (b *Broker) failWaitingFor(bw *browser, err *toolerr.Error) int {
	b.smu.Lock()
	defer b.smu.Unlock()
	n := 0
	for _, p := range slices.Clone(b.waiting) {
		if p.bw == bw {
			b.dropLocked(p, err)
			n++
		}
	}
	b.pumpLocked()
	return n
}
