package broker

import "github.com/modelcontextprotocol/go-sdk/mcp"

// SeedCatalogue sets the catalogue served before any extension attaches:
// the one built into the binary with the extension, so an agent started
// before the browser lists every tool at once (its calls fail with
// extension_not_connected until the browser connects). An attached
// extension's own catalogue replaces it; a seed after an attach is ignored.
// SECURITY I-55: the gate answers a seeded tool without a server attached.
func (b *Broker) SeedCatalogue(tools []*mcp.Tool) {
	b.lmu.Lock()
	defer b.lmu.Unlock()
	b.mu.Lock()
	if len(b.browsers) > 0 || len(b.tools) > 0 || len(tools) == 0 {
		b.mu.Unlock()
		return
	}
	b.tools = tools
	b.byName = make(map[string]*mcp.Tool, len(tools))
	for _, t := range tools {
		b.byName[t.Name] = t
	}
	served := b.servedLocked()
	b.mu.Unlock()
	for _, f := range b.listeners {
		f(served)
	}
}
