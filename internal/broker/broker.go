// Package broker routes tool calls from agent sessions (the daemon's MCP
// server over the `torii mcp` relay socket and Streamable HTTP at /mcp,
// side-panel agents, `torii exec` over the control socket) to
// the connected extension's tool server, through one gate every call
// passes, and schedules them (sched.go).
//
// Every call belongs to a Session the daemon minted (session.go): the
// session's identity travels to the extension in the call's meta, and
// the extension enforces tab ownership itself, as the last line of defence:
// the daemon's checks add to the extension's and never replace them. The
// daemon adds its own: a tab the extension reported as another session's is refused
// here with tab_not_owned without a round trip.
package broker

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/toolerr"
)

// A browser tool call's deadline, from its arrival, its time in the queue
// included (SECURITY I-80). The default sits above the extension's own cap on
// every tool's run (50 s), so the extension's typed error comes first, and
// under the 60 s request timeout of the common MCP clients, so the daemon's
// comes when the extension cannot answer. A caller may set its own, up to
// MaxCallTimeout: more time in the queue; the extension still caps each run.
// The deadline travels to the extension as one absolute time; nothing else
// times the call.
const (
	DefaultCallTimeout = 57 * time.Second
	MaxCallTimeout     = 180 * time.Second
)

// Call is one tool call from an agent session.
type Call struct {
	Name      string
	Arguments json.RawMessage // passed through untouched; the extension validates
	// Session is the calling session's label, for the person. It never
	// selects a session: with Owner nil the call runs in the shared cli
	// session of that label (SECURITY I-23).
	Session string
	// Owner is the daemon-minted session the call belongs to.
	Owner *Session
	// Timeout is the call's deadline from its arrival, its time in the
	// queue included; <= 0 means DefaultCallTimeout, and more than
	// MaxCallTimeout is MaxCallTimeout.
	Timeout time.Duration
	// Arrival, if set, is the call's place in its connection's arrival
	// order (Arrive): it is queued after the calls read before it.
	Arrival *Arrival
	// Access is the browser access given to the calling session (a gateway
	// session's browserAccess), enforced in the gate; the zero value limits
	// nothing past the extension's own checks (which, for a panel agent's
	// window grant, check the same scopes again: SECURITY I-29).
	Access Access
	// Tag is handed, untouched, to the audit Observer with the call's
	// record, so a caller can tell its own call's record from another's.
	Tag string
}

// Access limits which browser tools a call may use.
type Access int

const (
	// AccessFull: any tool (the extension still checks ownership and policy).
	AccessFull Access = iota
	// AccessRead: only tools annotated readOnlyHint.
	AccessRead
	// AccessNone: no browser tool at all.
	AccessNone
)

// accessRefusal is the refusal of a tool outside the session's access.
// It is a refusal in the gate, so it is audited like any other; the code is
// the one the extension gives for a window grant's missing scope
// (extension/src/tools/ownership/check.ts), with the step that widens it.
func accessRefusal(format string, args ...any) *toolerr.Error {
	return &toolerr.Error{Code: toolerr.TabNotOwned, Message: fmt.Sprintf(format, args...),
		Hint: "Ask the person to widen this agent's browser access in the Torii side panel; nothing was sent."}
}

// ToolServer is the extension's tool server; *browserlink.Server is one.
type ToolServer interface {
	LinkID() string
	Context() context.Context
	Tools() []*mcp.Tool
	// Call runs one call by its deadline and maps every link failure onto
	// a typed result that says whether the call may have run.
	Call(ctx context.Context, r browserlink.Request) *mcp.CallToolResult
	// SessionEnded tells the extension a session ended (endedParams).
	SessionEnded(ctx context.Context, params any) error
	Close()
}

var _ ToolServer = (*browserlink.Server)(nil)

// Broker holds the current extension tool server, its catalogue, the
// sessions and the scheduler.
type Broker struct {
	log    *slog.Logger
	ctx    context.Context // ends with Close (daemon shutdown)
	cancel context.CancelFunc

	mu       sync.Mutex          // after smu when both are held
	browsers map[string]*browser // connected browsers by device ID (browsers.go)
	resolve  Resolver
	tools    []*mcp.Tool // last known catalogue; kept after a disconnect
	byName   map[string]*mcp.Tool
	groups   map[string]bool // tool groups the person turned on (groups.go)

	managed atomic.Pointer[Managed] // read with or without mu (browsers.go)

	lmu       sync.Mutex // serialises listener calls, so they see catalogues in order
	listeners []func([]*mcp.Tool)

	smu       sync.Mutex // sessions and scheduler (sched.go)
	limits    config.Broker
	sessions  map[string]*Session
	byLabel   map[string]*Session // named (shared) sessions by key (named.go)
	labelIdle time.Duration       // limits.SessionIdleSec, unless SetLabelLimits
	maxLabels int                 // see MaxLabelSessions
	order     []*Session
	waiting   []*pending
	stamp     atomic.Uint64 // arrival stamps (Arrive, enqueue)
	inflight  int
	tabBusy   map[tabKey]bool
	closed    bool

	restored  map[string]Saved // named sessions a previous daemon saved, not yet resumed
	saveNamed func(map[string]Saved)
	saveMu    sync.Mutex // serialises saveNamed
	sweeping  sync.Once  // starts sweepLoop
	// endedWhileDown: named sessions that went idle past their time while
	// no daemon ran; the next browser to attach hears they ended.
	endedWhileDown []string

	observer atomic.Pointer[Observer] // the audit hook (audit.go)
}

// New returns an empty broker with the default limits; a nil logger discards.
func New(log *slog.Logger) *Broker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Broker{log: log, byName: map[string]*mcp.Tool{}, limits: config.BrokerDefaults,
		sessions: map[string]*Session{}, byLabel: map[string]*Session{}, tabBusy: map[tabKey]bool{}, browsers: map[string]*browser{},
		labelIdle: time.Duration(config.BrokerDefaults.SessionIdleSec) * time.Second, maxLabels: MaxLabelSessions}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b
}

// SetLimits sets the scheduling limits (zero fields: the defaults).
func (b *Broker) SetLimits(l config.Broker) {
	b.smu.Lock()
	b.limits = l.WithDefaults()
	b.labelIdle = time.Duration(b.limits.SessionIdleSec) * time.Second
	b.smu.Unlock()
}

// Limits are the limits in force.
func (b *Broker) Limits() config.Broker {
	b.smu.Lock()
	defer b.smu.Unlock()
	return b.limits
}

// Close is daemon shutdown: every pending call fails with
// extension_not_connected (queued ones at once, in-flight ones are
// cancelled in the extension first) and new calls are refused.
func (b *Broker) Close() {
	b.smu.Lock()
	b.closed = true
	b.smu.Unlock()
	b.failWaiting(toolerr.New(toolerr.DaemonRestarted, "the daemon is shutting down; nothing was sent"))
	b.cancel()
}

func (b *Broker) isClosed() bool {
	b.smu.Lock()
	defer b.smu.Unlock()
	return b.closed
}

// OnToolsChanged registers f, called with the new catalogue whenever it
// changes (not under the broker's lock).
func (b *Broker) OnToolsChanged(f func([]*mcp.Tool)) {
	b.lmu.Lock()
	b.listeners = append(b.listeners, f)
	b.lmu.Unlock()
}

// Attach makes br the tool server of the browser (paired device) it
// serves; see AttachBrowser.
func (b *Broker) Attach(deviceID, name string, br *browserlink.Server) {
	b.AttachBrowser(deviceID, name, br)
}

// AttachServer attaches a server under its link ID (tests attach fakes).
func (b *Broker) AttachServer(br ToolServer) { b.AttachBrowser(br.LinkID(), br.LinkID(), br) }

// Connected reports whether any browser's tool server is attached.
func (b *Broker) Connected() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.liveLocked()) > 0
}

// Tools is the catalogue: the attached server's, or the last one seen
// (calls then fail with extension_not_connected rather than vanish).
func (b *Broker) Tools() []*mcp.Tool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.servedLocked()
}

// Gate is the daemon-side check every tool call passes before it reaches
// the extension. It returns the tool server to use, or the typed refusal.
// Tab ownership is checked here too (ownership.go).
func (b *Broker) Gate(call *Call) (ToolServer, *toolerr.Error) {
	tab, valid := tabOf(call.Arguments)
	bw, _, e := b.gate(call, tab, valid)
	if e != nil {
		return nil, e
	}
	return bw.srv, nil
}

// gate is Gate with the browser the call is routed to (browsers.go) and
// the failover notice, if routing moved the session. tab and valid are
// tabOf's reading of the arguments, read once per call.
func (b *Broker) gate(call *Call, tab int, valid bool) (*browser, *Notice, *toolerr.Error) {
	b.mu.Lock()
	tool, anyTools := b.byName[call.Name], len(b.tools) > 0
	cur := len(b.liveLocked()) > 0
	off := tool != nil && b.groupOffLocked(tool)
	b.mu.Unlock()
	switch {
	case call.Name == "":
		return nil, nil, toolerr.New(toolerr.InvalidArgument, "a tool name is required")
	case call.Access == AccessNone:
		return nil, nil, accessRefusal("this agent has no browser access (the person set it to none); nothing was sent")
	case !cur && !anyTools:
		return nil, nil, toolerr.New(toolerr.ExtensionNotConnected, "no browser is connected, so no tools are available yet")
	case tool == nil:
		return nil, nil, toolerr.New(toolerr.ToolNotFound, "no tool named %q", call.Name)
	case off:
		return nil, nil, groupRefusal(tool)
	}
	if call.Access == AccessRead && (tool.Annotations == nil || !tool.Annotations.ReadOnlyHint) {
		return nil, nil, accessRefusal("this agent has read-only browser access and %s may change the page; nothing was sent", call.Name)
	}
	if !valid {
		return nil, nil, toolerr.New(toolerr.InvalidArgument, "arguments are not valid JSON")
	}
	s := call.Owner
	if s == nil {
		s = b.labelSession(call.Session)
	}
	bw, n, e := b.route(s)
	if e != nil {
		return nil, nil, e
	}
	if tab >= 0 && b.ownedByOther(s, bw.id, tab) {
		return nil, n, notOwned(tab)
	}
	return bw, n, nil
}

// readOnly says whether the catalogue marks the tool readOnlyHint.
func (b *Broker) readOnly(name string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.byName[name]
	return t != nil && t.Annotations != nil && t.Annotations.ReadOnlyHint
}

// CallTool gates the call, queues it (sched.go) and runs it on the
// extension. It always returns an MCP result; failures are isError results
// with a code (toolerr).
func (b *Broker) CallTool(ctx context.Context, call Call) *mcp.CallToolResult {
	res, n := b.callTool(ctx, call)
	withNotice(res, n)
	return res
}

func (b *Broker) callTool(ctx context.Context, call Call) (*mcp.CallToolResult, *Notice) {
	start := time.Now()
	if call.Owner == nil {
		call.Owner = b.labelSession(call.Session)
	}
	s := call.Owner
	defer call.Arrival.Placed() // the early refusals below
	if call.Name == StatusTool && call.Access != AccessNone {
		return b.statusResult(s), nil
	}
	tab, valid := tabOf(call.Arguments)
	bw, notice, refused := b.gate(&call, tab, valid)
	if refused != nil {
		b.record(s, call.Tag, call.Name, tab, start, 0, refused.Code, nil)
		return refused.Result(), notice
	}
	// The call ends with its caller, its session or the daemon.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(s.ctx, cancel)()
	// SECURITY I-80: one deadline from the call's arrival: its wait behind
	// other calls and its run share it, so a call queued behind a slow one
	// fails only when its own time is up, never because of the other's.
	timeout := min(call.Timeout, MaxCallTimeout)
	if timeout <= 0 {
		timeout = DefaultCallTimeout
	}
	deadline := start.Add(timeout)
	refused = turn(ctx, call.Arrival, call.Name, deadline)
	var p *pending
	if refused == nil {
		p, refused = b.enqueue(s, call.Name, tab, bw, call.Arrival)
	}
	call.Arrival.Placed()
	if refused == nil {
		refused = b.wait(ctx, p, deadline)
	}
	if refused != nil {
		b.record(s, call.Tag, call.Name, tab, start, time.Since(start), refused.Code, nil)
		return refused.Result(), notice
	}
	waited := time.Since(start)
	defer b.release(p)
	srv := bw.srv
	if b.browserOf(bw.id) != bw || srv.Context().Err() != nil {
		// The link it was queued for went away meanwhile (even if it came back): its
		// caller hears so at once rather than having it run on a browser state it did not see.
		e := toolerr.New(toolerr.ExtensionNotConnected, "browser %q disconnected while %s was queued; nothing was sent", bw.name, call.Name)
		b.record(s, call.Tag, call.Name, tab, start, waited, e.Code, nil)
		return e.Result(), notice
	}
	b.sawBrowser(s, bw.id)
	// The extension gets the same absolute deadline and answers by it, so
	// its own typed error comes first. SECURITY I-58: a lost browser is
	// named, so the agent knows which one went.
	readOnly := b.readOnly(call.Name)
	res := srv.Call(ctx, browserlink.Request{Tool: call.Name, Args: call.Arguments, Meta: b.meta(s), Deadline: deadline,
		ReadOnly: readOnly, Browser: bw.name, Hint: b.launchHint(bw.id)})
	if b.isClosed() {
		res = toolerr.Result(toolerr.DaemonRestarted, "the daemon shut down during %s; it may have partly run", call.Name)
		if readOnly {
			res = toolerr.ForRead(res)
		}
	}
	b.takeTabs(s, bw.id, res)
	addText(res)
	// The agent may see how long its call queued (and the load bench measures it).
	if res.Meta == nil {
		res.Meta = mcp.Meta{}
	}
	res.Meta[MetaKey] = map[string]any{"waitMs": waited.Milliseconds()}
	code := toolerr.Code("")
	if e := toolerr.FromResult(res); e != nil {
		code = e.Code
	} else if res.IsError {
		code = toolerr.Internal
	}
	b.record(s, call.Tag, call.Name, tab, start, waited, code, res)
	b.savedCall(s)
	return res, notice
}

// record keeps a finished call in its session's recent list (metadata
// only: never arguments or results) and hands it to the audit Observer
// (audit.go); res is nil when nothing was sent.
func (b *Broker) record(s *Session, tag, tool string, tab int, start time.Time, waited time.Duration, code toolerr.Code, res *mcp.CallToolResult) {
	b.observe(s, tag, tool, start, code, res)
	r := CallRecord{Tool: tool, Outcome: "ok", At: start, DurationMs: time.Since(start).Milliseconds(), WaitMs: waited.Milliseconds()}
	if code != "" {
		r.Outcome = string(code)
	}
	if tab >= 0 {
		r.TabID = &tab
	}
	b.smu.Lock()
	s.calls++
	s.used = time.Now()
	s.recent = append(s.recent, r)
	if len(s.recent) > recentCalls {
		s.recent = slices.Delete(s.recent, 0, len(s.recent)-recentCalls)
	}
	b.smu.Unlock()
}

func sameTools(a, b []*mcp.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(ja, jb)
}
