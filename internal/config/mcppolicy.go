package config

import (
	"fmt"
	"slices"
	"strings"
)

// ExposedName is a declared server's tool as agents see it: <server>.<tool>,
// without doubling a prefix the server already puts on its own tools
// (katashiro's `katashiro.snapshot` stays `katashiro.snapshot`).
func ExposedName(server, tool string) string {
	if strings.HasPrefix(tool, server+".") {
		return tool
	}
	return server + "." + tool
}

// PinMatches reports whether a pin of server names tool (as the server lists
// it). SECURITY I-64: a pin may be written bare (`snapshot`) or with the
// server's own prefix (`katashiro.snapshot`); both name the same tool of
// that server only, because pins are looked up under the declaring
// server's name and compared as exposed names.
func PinMatches(server, pin, tool string) bool {
	return pin != "" && ExposedName(server, pin) == ExposedName(server, tool)
}

// PinFor returns the first pin of server that matches tool, or "".
func (p MCPServerPolicy) PinFor(server, tool string) string {
	for _, pin := range p.Pins[server] {
		if PinMatches(server, pin, tool) {
			return pin
		}
	}
	return ""
}

// Warnings are the policy's mistakes visible without a server's
// catalogue: pins that can never apply and allowed servers that expose
// nothing. Each names the fix.
func (p MCPServerPolicy) Warnings() []string {
	var out []string
	names := make([]string, 0, len(p.Pins))
	for n := range p.Pins {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !slices.Contains(p.Allow, n) {
			out = append(out, fmt.Sprintf("mcpServers.pins has pins for %q, which is not in mcpServers.allow, so they match nothing: add %q to mcpServers.allow or remove its pins", n, n))
		}
	}
	for _, n := range p.Allow {
		if len(p.Pins[n]) == 0 {
			out = append(out, fmt.Sprintf("MCP server %q is allowed but has no pins, so none of its tools reach an agent: list them in mcpServers.pins.%s (`torii servers` shows its tool names once a client has declared it)", n, n))
		}
	}
	return out
}

// UnmatchedPinWarning is the warning for pins that match none of a
// server's fetched tools; it lists the real names, the fix.
func UnmatchedPinWarning(server string, pins, exposed []string) string {
	q := make([]string, len(pins))
	for i, p := range pins {
		q[i] = fmt.Sprintf("%q", p)
	}
	real := "it lists no tools"
	if len(exposed) > 0 {
		real = "its tools are " + strings.Join(exposed, ", ")
	}
	return fmt.Sprintf("pin %s of MCP server %q matches none of its tools (%s): use those names in mcpServers.pins.%s", strings.Join(q, ", "), server, real, server)
}
