// Package broker routes tool calls from agent sessions (MCP over stdio via
// the control socket, MCP Streamable HTTP at /mcp) to the connected
// extension's tool server, through one gate every call passes.
//
// Today the gate checks that the tool is in the catalogue and that the
// extension is connected. Pins, scopes and tab ownership (issues 4 and 5)
// belong in Gate too; per-tab serialisation arrives with issue 5. The
// extension enforces the person's policy again on every call (brief
// decision 2): the daemon's checks are never instead of the extension's.
package broker

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/mcpbridge"
	"github.com/torii-browser/torii/internal/toolerr"
)

// Call is one tool call from an agent session.
type Call struct {
	Name      string
	Arguments json.RawMessage // passed through untouched; the extension validates
	// Session names the calling agent session (stdio --session-label, the
	// /mcp token's label), for the person and, later, tab ownership.
	Session string
	// Timeout is the call's deadline; <= 0 means mcpbridge.DefaultCallTimeout.
	Timeout time.Duration
}

// Broker holds the current extension tool server and its catalogue.
type Broker struct {
	log *slog.Logger

	mu     sync.Mutex
	cur    *mcpbridge.Bridge
	tools  []*mcp.Tool // last known catalogue; kept after a disconnect
	byName map[string]*mcp.Tool

	lmu       sync.Mutex // serialises listener calls, so they see catalogues in order
	listeners []func([]*mcp.Tool)
}

// New returns an empty broker; a nil logger discards.
func New(log *slog.Logger) *Broker {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Broker{log: log, byName: map[string]*mcp.Tool{}}
}

// OnToolsChanged registers f, called with the new catalogue whenever it
// changes (not under the broker's lock).
func (b *Broker) OnToolsChanged(f func([]*mcp.Tool)) {
	b.lmu.Lock()
	b.listeners = append(b.listeners, f)
	b.lmu.Unlock()
}

// Attach makes br the extension's tool server. The last attach wins (as
// OpenAB's registry): a replaced bridge gets mcp/disconnect in the
// background. br detaches itself when its link ends.
func (b *Broker) Attach(br *mcpbridge.Bridge) {
	b.lmu.Lock()
	defer b.lmu.Unlock()
	tools := br.Tools()
	b.mu.Lock()
	old := b.cur
	b.cur = br
	changed := !sameTools(b.tools, tools)
	if changed {
		b.tools = tools
		b.byName = make(map[string]*mcp.Tool, len(tools))
		for _, t := range tools {
			b.byName[t.Name] = t
		}
	}
	b.mu.Unlock()
	if old != nil && old != br {
		go old.Close()
	}
	context.AfterFunc(br.Context(), func() { b.detach(br) })
	b.log.Info("broker: extension tool server attached", "link", br.LinkID(), "tools", len(tools), "catalogueChanged", changed)
	if changed {
		for _, f := range b.listeners {
			f(append([]*mcp.Tool(nil), tools...))
		}
	}
}

func (b *Broker) detach(br *mcpbridge.Bridge) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.cur == br {
		b.cur = nil
		b.log.Info("broker: extension tool server detached", "link", br.LinkID())
	}
}

// Connected reports whether an extension tool server is attached.
func (b *Broker) Connected() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur != nil
}

// Tools is the catalogue: the attached server's, or the last one seen
// (calls then fail with extension_not_connected rather than vanish).
func (b *Broker) Tools() []*mcp.Tool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*mcp.Tool(nil), b.tools...)
}

// Gate is the daemon-side check every tool call passes before it reaches
// the extension. It returns the bridge to use, or the typed refusal.
// Issues 4/5 add pins, scopes and tab ownership here.
func (b *Broker) Gate(call *Call) (*mcpbridge.Bridge, *toolerr.Error) {
	b.mu.Lock()
	cur, known, anyTools := b.cur, b.byName[call.Name] != nil, len(b.tools) > 0
	b.mu.Unlock()
	switch {
	case call.Name == "":
		return nil, toolerr.New(toolerr.InvalidArgument, "a tool name is required")
	case cur == nil && !anyTools:
		return nil, toolerr.New(toolerr.ExtensionNotConnected, "no browser is connected, so no tools are available yet")
	case !known:
		return nil, toolerr.New(toolerr.UnknownTool, "no tool named %q", call.Name)
	case cur == nil:
		return nil, toolerr.New(toolerr.ExtensionNotConnected, "the Torii extension is not connected; nothing was sent")
	}
	if len(call.Arguments) > 0 && !json.Valid(call.Arguments) {
		return nil, toolerr.New(toolerr.InvalidArgument, "arguments are not valid JSON")
	}
	return cur, nil
}

// CallTool gates the call and runs it on the extension. It always returns
// an MCP result; failures are isError results with a code (toolerr).
func (b *Broker) CallTool(ctx context.Context, call Call) *mcp.CallToolResult {
	br, refused := b.Gate(&call)
	if refused != nil {
		return refused.Result()
	}
	return br.CallTool(ctx, call.Name, call.Arguments, call.Timeout)
}

func sameTools(a, b []*mcp.Tool) bool {
	if len(a) != len(b) {
		return false
	}
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && reflect.DeepEqual(ja, jb)
}
