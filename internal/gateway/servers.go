package gateway

import (
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
)

// maxSeen bounds the declared server names remembered for `torii servers`
// (a token client could declare any number of names over time).
const maxSeen = 64

// exposedTools maps a declared server's fetched tools to the names agents
// see (config.ExposedName), in fetched order. When a server lists both
// `snapshot` and `<server>.snapshot`, the name it already prefixed wins:
// that is what the server itself calls that name; the other is shadowed
// (SECURITY I-64).
func exposedTools(server string, fetched []*mcp.Tool) (names []string, byName map[string]*mcp.Tool, shadowed []string) {
	byName = map[string]*mcp.Tool{}
	for _, t := range fetched {
		n := config.ExposedName(server, t.Name)
		old, dup := byName[n]
		switch {
		case !dup:
			names = append(names, n)
			byName[n] = t
		case t.Name == n:
			shadowed = append(shadowed, old.Name)
			byName[n] = t
		default:
			shadowed = append(shadowed, t.Name)
		}
	}
	return names, byName, shadowed
}

// seenServer is the last catalogue a declared server showed this daemon.
type seenServer struct {
	allowed bool
	tools   []string // fetched names, in order
	fetched bool     // tools is a catalogue (the server was connected)
	at      time.Time
	warned  string // the last unmatched-pin warning logged
}

// noteDeclared remembers a declared server name (and, once connected, its
// catalogue); an unmatched pin is logged once per catalogue, with the real
// names.
// fetched is nil for a server that was not connected.
func (g *Gateway) noteDeclared(server string, allowed bool, fetched []*mcp.Tool) {
	var names []string
	for _, t := range fetched {
		names = append(names, t.Name)
	}
	g.mu.Lock()
	s, ok := g.seen[server]
	if !ok && len(g.seen) >= maxSeen {
		g.mu.Unlock()
		return
	}
	if s == nil {
		s = &seenServer{}
		g.seen[server] = s
	}
	s.allowed, s.at = allowed, time.Now()
	if fetched != nil {
		s.tools, s.fetched = names, true
	}
	warn := ""
	if allowed && fetched != nil {
		if w := unmatchedWarning(g.opts.Policy, server, fetched); w != s.warned {
			s.warned, warn = w, w
		}
	}
	g.mu.Unlock()
	if warn != "" {
		g.log.Warn("gateway: " + warn)
	}
}

func unmatchedWarning(p config.MCPServerPolicy, server string, fetched []*mcp.Tool) string {
	exposed, byName, _ := exposedTools(server, fetched)
	var unmatched []string
	for _, pin := range p.Pins[server] {
		if byName[config.ExposedName(server, pin)] == nil {
			unmatched = append(unmatched, pin)
		}
	}
	if len(unmatched) == 0 {
		return ""
	}
	return config.UnmatchedPinWarning(server, unmatched, exposed)
}

// ServerInfo is one declared MCP server (control method gateway.servers).
type ServerInfo struct {
	Name    string   `json:"name"`
	Allowed bool     `json:"allowed"`
	Pins    []string `json:"pins"`
	// Sessions counts live sessions this server is connected to.
	Sessions int `json:"sessions"`
	// Declared: a client declared it since the daemon started; Tools is
	// its last catalogue then (empty when it was never connected).
	Declared   bool         `json:"declared"`
	DeclaredAt *time.Time   `json:"declaredAt,omitempty"`
	Tools      []ServerTool `json:"tools"`
	// UnmatchedPins match none of Tools (only known once declared).
	UnmatchedPins []string `json:"unmatchedPins"`
	Warnings      []string `json:"warnings"`
}

// ServerTool is one fetched tool: Name as agents see it, Fetched as the
// server lists it, Pin the pin that exposes it ("" = not exposed).
type ServerTool struct {
	Name     string `json:"name"`
	Fetched  string `json:"fetched"`
	Pin      string `json:"pin,omitempty"`
	Shadowed bool   `json:"shadowed,omitempty"`
}

// Servers lists every server the policy names or a client declared.
func (g *Gateway) Servers() []ServerInfo {
	p := g.opts.Policy
	g.mu.Lock()
	seen := make(map[string]seenServer, len(g.seen))
	for k, v := range g.seen {
		seen[k] = *v
	}
	list := make([]*Session, 0, len(g.sessions))
	for _, s := range g.sessions {
		list = append(list, s)
	}
	g.mu.Unlock()
	// Each session's lock is taken alone, never under the gateway's.
	live := map[string]int{}
	for _, s := range list {
		s.mu.Lock()
		for n := range s.bridges {
			live[n]++
		}
		s.mu.Unlock()
	}
	names := slices.Clone(p.Allow)
	for n := range p.Pins {
		names = append(names, n)
	}
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	warnings := p.Warnings()
	out := make([]ServerInfo, 0, len(names))
	for _, n := range names {
		si := ServerInfo{Name: n, Allowed: slices.Contains(p.Allow, n), Pins: slices.Clone(p.Pins[n]), Sessions: live[n],
			Tools: []ServerTool{}, UnmatchedPins: []string{}, Warnings: []string{}}
		if si.Pins == nil {
			si.Pins = []string{}
		}
		for _, w := range warnings {
			if strings.Contains(w, `"`+n+`"`) {
				si.Warnings = append(si.Warnings, w)
			}
		}
		if s, ok := seen[n]; ok {
			at := s.at
			si.Declared, si.DeclaredAt = true, &at
			if !si.Allowed {
				si.Warnings = append(si.Warnings, "a client declared "+n+", but it is not in mcpServers.allow, so it was not connected: add it there to use its tools")
			}
			fetched := make([]*mcp.Tool, len(s.tools))
			for i, t := range s.tools {
				fetched[i] = &mcp.Tool{Name: t}
			}
			exposed, byName, shadowed := exposedTools(n, fetched)
			for _, e := range exposed {
				si.Tools = append(si.Tools, ServerTool{Name: e, Fetched: byName[e].Name, Pin: p.PinFor(n, byName[e].Name)})
			}
			for _, sh := range shadowed {
				si.Tools = append(si.Tools, ServerTool{Name: config.ExposedName(n, sh), Fetched: sh, Shadowed: true})
			}
			if si.Allowed && s.fetched {
				for _, pin := range si.Pins {
					if byName[config.ExposedName(n, pin)] == nil {
						si.UnmatchedPins = append(si.UnmatchedPins, pin)
					}
				}
				if len(si.UnmatchedPins) > 0 {
					si.Warnings = append(si.Warnings, config.UnmatchedPinWarning(n, si.UnmatchedPins, exposed))
				}
			}
		}
		out = append(out, si)
	}
	return out
}
