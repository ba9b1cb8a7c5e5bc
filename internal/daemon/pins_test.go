package daemon

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link/linktest"
)

// Pins that can never match are said in the log as the daemon starts,
// with the fix.
func TestStartWarnsAboutPinsThatMatchNothing(t *testing.T) {
	t.Parallel()
	var buf linktest.LogBuffer
	startDaemon(t, func(o *Options) {
		o.Logger = slog.New(slog.NewTextHandler(&buf, nil))
		o.Config.MCPServers = config.MCPServerPolicy{Allow: []string{"katashiro"}, Pins: map[string][]string{"ghost": {"snapshot"}}}
	})
	log := buf.String()
	for _, want := range []string{`level=WARN`, `pins for \"ghost\"`, `add \"ghost\" to mcpServers.allow`, `\"katashiro\" is allowed but has no pins`} {
		if !strings.Contains(log, want) {
			t.Errorf("start log lacks %s:\n%s", want, log)
		}
	}
}
