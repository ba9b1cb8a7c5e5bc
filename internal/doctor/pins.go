package doctor

import (
	"context"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/control"
)

// declaredServer is the part of a `gateway.servers` entry doctor reads.
type declaredServer struct {
	Name          string   `json:"name"`
	UnmatchedPins []string `json:"unmatchedPins"`
	Warnings      []string `json:"warnings"`
}

// checkPins: a pin is an allowlist entry, so one that matches nothing
// silently hides a tool the operator meant to give; say so with the real
// names. Without a running daemon only config mistakes can be seen.
func checkPins(ctx context.Context, e *Env) Result {
	const name = "MCP server pins"
	if e.ConfigErr != nil {
		return Result{Name: name, Status: Warn, Detail: "skipped: config.json does not load"}
	}
	p := e.Config.MCPServers
	warnings := p.Warnings()
	seen := map[string]bool{}
	for _, w := range warnings {
		seen[w] = true
	}
	live := ""
	if e.daemonUp() {
		servers, err := declaredServers(ctx, e)
		if err != nil {
			live = "; the daemon's declared servers could not be read: " + err.Error()
		}
		for _, s := range servers {
			for _, w := range s.Warnings {
				if !seen[w] {
					seen[w] = true
					warnings = append(warnings, w)
				}
			}
		}
	}
	if len(warnings) > 0 {
		return Result{Name: name, Status: Warn, Detail: strings.Join(warnings, "; ") + live,
			Fix: "edit mcpServers in config.json as said, restart `torii serve`, and check with `torii servers`"}
	}
	if len(p.Allow) == 0 && len(p.Pins) == 0 {
		return Result{Name: name, Status: OK, Detail: "no declared MCP servers are allowed (config.json mcpServers)" + live}
	}
	return Result{Name: name, Status: OK, Detail: "every pin names a tool its server lists, as far as the daemon has seen (`torii servers`)" + live}
}

func declaredServers(ctx context.Context, e *Env) ([]declaredServer, error) {
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := control.Dial(dctx, e.Paths.Socket())
	if err != nil {
		return nil, err
	}
	defer c.Close()
	var r struct {
		Servers []declaredServer `json:"servers"`
	}
	if err := c.Call(dctx, "gateway.servers", nil, &r); err != nil {
		return nil, err
	}
	return r.Servers, nil
}
