package broker

import (
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/toolerr"
)

// Tool groups. The catalogue is paid for on every agent turn, so the tools
// most tasks need are always offered and the rest come in groups the person
// turns on (config broker.toolGroups), as the peers do with their capability
// flags. A tool's group is the extension registry's word, carried in its
// catalogue entry's _meta; a tool without one is always offered. A tool of a
// group that is off is neither listed nor callable (tool_disabled, naming
// the key to set); the extension's own switches still apply to it when on.

// GroupMetaKey is the _meta key of a catalogue entry naming its group.
const GroupMetaKey = "torii/group"

func groupOf(t *mcp.Tool) string {
	if t == nil {
		return ""
	}
	g, _ := t.Meta[GroupMetaKey].(string)
	return g
}

// SetToolGroups sets the groups the person turned on; a change is announced
// to the catalogue's listeners (tools/list_changed for connected agents).
func (b *Broker) SetToolGroups(groups []string) {
	next := map[string]bool{}
	for _, g := range groups {
		next[g] = true
	}
	b.lmu.Lock()
	defer b.lmu.Unlock()
	b.mu.Lock()
	same := maps.Equal(b.groups, next)
	b.groups = next
	tools := b.servedLocked()
	b.mu.Unlock()
	if same || len(tools) == 0 {
		return
	}
	for _, f := range b.listeners {
		f(tools)
	}
}

// servedLocked is the catalogue agents are offered: the browser's tools of
// no group or of a group that is on, then the daemon's own. b.mu is held.
func (b *Broker) servedLocked() []*mcp.Tool {
	on := slices.DeleteFunc(slices.Clone(b.tools), b.groupOffLocked)
	if len(b.tools) == 0 {
		return on
	}
	return withDaemonTools(on)
}

// groupRefusal is the answer to a call of a tool whose group is off.
func groupRefusal(tool *mcp.Tool) *toolerr.Error {
	g := groupOf(tool)
	return toolerr.New(toolerr.ToolDisabled, "%s is in the tool group %q, which is off; nothing was sent. "+
		"The person turns it on by adding %q to broker.toolGroups in the daemon's config.json (applied when saved)", tool.Name, g, g)
}

// groupOffLocked reports whether the tool's group is off. b.mu is held.
func (b *Broker) groupOffLocked(t *mcp.Tool) bool {
	g := groupOf(t)
	return g != "" && !b.groups[g]
}
