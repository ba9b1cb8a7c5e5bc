package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/toolerr"
)

// MetaKey is the meta key of Torii's bookkeeping on the wire between the
// broker and the extension (docs/protocol.md, "Sessions"):
//
//	request  meta.torii  = {session: label, sessionId, kind, tabCap, gatewaySessionId?}
//	result   _meta.torii = {tabs: [the calling session's tabs after the call]}
//
// The broker keeps the result's tabs for status and strips them.
const MetaKey = "torii"

// meta is the meta every torii/tools/call carries: the daemon-minted session
// (SECURITY I-24). The extension keys tab ownership on its id.
func (b *Broker) meta(s *Session) map[string]any {
	b.smu.Lock()
	tabCap := b.limits.TabCap
	gw := s.gateway
	b.smu.Unlock()
	m := map[string]any{"session": s.label, "sessionId": s.id, "kind": s.kind, "tabCap": tabCap, "filesFolder": s.FilesFolder()}
	if gw != "" {
		// An agent session's chat session, for the extension's window grant
		// lookup (SECURITY I-29). Never set from anything a client sends.
		m["gatewaySessionId"] = gw
	}
	return map[string]any{MetaKey: m}
}

// takeTabs reads the session's tabs from a result's _meta and strips them:
// the agent gets the result as the extension made it, minus bookkeeping.
func (b *Broker) takeTabs(s *Session, browserID string, res *mcp.CallToolResult) {
	raw, ok := takeMeta(res, MetaKey)
	if !ok {
		return
	}
	var m struct {
		Tabs *[]int `json:"tabs"`
	}
	if b, err := json.Marshal(raw); err != nil || json.Unmarshal(b, &m) != nil || m.Tabs == nil {
		return
	}
	tabs := *m.Tabs
	slices.Sort(tabs)
	b.smu.Lock()
	if s.browser == browserID {
		s.tabsChanged = s.tabsChanged || s.tabsIn != browserID || !slices.Equal(s.tabs, tabs)
		s.tabs, s.tabsIn = tabs, browserID
	}
	b.smu.Unlock()
}

// ownedByOther reports whether another session (live or ended) holds tab,
// as the extension last reported: SECURITY I-24, checked in the daemon
// before anything is sent. The extension checks again, and alone decides
// for tabs the daemon has not heard of (the person's, grants).
// Tab IDs are each browser's own: only sessions' tabs in the same browser count.
func (b *Broker) ownedByOther(s *Session, browserID string, tab int) bool {
	b.smu.Lock()
	defer b.smu.Unlock()
	if s.tabsIn == browserID && slices.Contains(s.tabs, tab) {
		return false
	}
	for _, o := range b.order {
		if o != s && o.tabsIn == browserID && slices.Contains(o.tabs, tab) {
			return true
		}
	}
	return false
}

// notOwned is the refusal for a tab the session may not use. It reads the
// same whether the tab is another session's, the person's or does not
// exist, so a session learns nothing about tabs that are not its own.
func notOwned(tab int) *toolerr.Error {
	return toolerr.New(toolerr.TabNotOwned, "tab %d is not one of this session's tabs", tab)
}

// notifyEnded tells every browser the session's calls reached that it
// ended (best effort: the extension also ends every session it knows when
// the daemon reconnects).
func (b *Broker) notifyEnded(s *Session) {
	b.smu.Lock()
	seen := slices.Clone(s.seen)
	b.smu.Unlock()
	l := b.Limits()
	for _, id := range seen {
		if bw := b.browserOf(id); bw != nil {
			b.notifyEndedIn(bw.srv, s, l)
		}
	}
}

// endedParams are session_ended's: closeTabs closes the session's tabs in
// any browser (broker.closeTabsOnEnd); closeManagedTabs in a browser torii
// launched, which only the extension knows it is (broker.keepManagedTabs
// turns it off). The person's own browser keeps an ended session's tabs.
func endedParams(id string, l config.Broker) map[string]any {
	return map[string]any{"sessionId": id, "closeTabs": l.CloseTabsOnEnd, "closeManagedTabs": !l.KeepManagedTabs}
}

// sawBrowser records that s's calls reached browser id.
func (b *Broker) sawBrowser(s *Session, id string) {
	b.smu.Lock()
	defer b.smu.Unlock()
	if !slices.Contains(s.seen, id) {
		s.seen = append(s.seen, id)
	}
}

func (b *Broker) notifyEndedIn(srv ToolServer, s *Session, l config.Broker) {
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.SessionEnded(ctx, endedParams(s.id, l)); err != nil {
			b.log.Debug("broker: session_ended not sent", "session", s.id, "err", err)
		}
	}()
}

// StatusTool is the tool the daemon answers itself, without a browser
// round trip: the calling session's own state.
const StatusTool = "status"

// statusTool is served in the same compact form as the extension's tools
// (tools/list is paid for on every agent turn); docs/tools.md states it
// (extension/scripts/gen-tools-doc.mjs DAEMON_TOOLS) and the served size.
// Its object schema names its (no) properties: some clients' schema
// converters refuse an object without them.
var statusTool = &mcp.Tool{
	Name:        StatusTool,
	Description: "Your session's tabs, queued and running calls, and latest calls.",
	InputSchema: map[string]any{"type": "object", "properties": map[string]any{}},
	Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
}

// DaemonTools are the tools the daemon serves itself (documented in
// docs/tools.md under "Daemon tools").
func DaemonTools() []*mcp.Tool { return []*mcp.Tool{statusTool} }

// withDaemonTools is the catalogue agents see: the extension's tools plus
// the daemon's, the extension's own winning a name clash.
// With no extension catalogue yet there is none: status stays callable by
// name (the daemon answers it), but the catalogue reads empty.
func withDaemonTools(tools []*mcp.Tool) []*mcp.Tool {
	out := append([]*mcp.Tool(nil), tools...)
	if len(out) == 0 {
		return out
	}
	for _, t := range DaemonTools() {
		if !slices.ContainsFunc(out, func(x *mcp.Tool) bool { return x.Name == t.Name }) {
			out = append(out, t)
		}
	}
	return out
}

// StatusOf is what the status tool returns: the session and the broker.
type StatusOf struct {
	Session            SessionInfo   `json:"session"`
	Broker             Stats         `json:"broker"`
	ExtensionConnected bool          `json:"extensionConnected"`
	Browsers           []BrowserInfo `json:"browsers"` // without their sessions
}

func (b *Broker) statusResult(s *Session) *mcp.CallToolResult {
	st := StatusOf{Session: s.Info(), Broker: b.Stats(), ExtensionConnected: b.Connected(), Browsers: b.Browsers()}
	for i := range st.Browsers {
		// An agent learns which browsers are connected, not who else acts in them.
		st.Browsers[i].Sessions = nil
	}
	var w strings.Builder
	fmt.Fprintf(&w, "session %q (%s, %s): browser %s\n", st.Session.Label, st.Session.Kind, st.Session.ID, map[bool]string{true: "connected", false: "not connected"}[st.ExtensionConnected])
	if st.Session.Browser != "" {
		fmt.Fprintf(&w, "acting in browser %q (%s)\n", st.Session.Browser, st.Session.Binding)
	}
	for _, bw := range st.Browsers {
		fmt.Fprintf(&w, "connected browser %q\n", bw.Name)
	}
	fmt.Fprintf(&w, "tabs: %v\nqueued: %d, in flight: %d (all sessions: %d/%d in flight, %d queued)\n",
		st.Session.Tabs, st.Session.Queued, st.Session.InFlight, st.Broker.InFlight, st.Broker.MaxInFlight, st.Broker.Queued)
	for _, r := range st.Session.Recent {
		fmt.Fprintf(&w, "  %s %s %dms (waited %dms)\n", r.Tool, r.Outcome, r.DurationMs, r.WaitMs)
	}
	var sc map[string]any
	raw, _ := json.Marshal(st)
	_ = json.Unmarshal(raw, &sc)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: w.String()}}, StructuredContent: sc}
}
