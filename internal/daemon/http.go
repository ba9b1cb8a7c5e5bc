package daemon

import (
	"encoding/json"
	"net"
	"net/http"

	"github.com/torii-browser/torii/internal/config"
)

// HealthResult is GET /healthz.
type HealthResult struct {
	OK                 bool   `json:"ok"`
	Version            string `json:"version"`
	DaemonID           string `json:"daemonId"`
	ExtensionConnected bool   `json:"extensionConnected"`
}

func (d *daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/acp", d.link)
	mux.Handle("/mcp", d.mcpHTTP)
	mux.HandleFunc("GET /healthz", d.healthz)
	return mux
}

func (d *daemon) healthz(w http.ResponseWriter, r *http.Request) {
	host, _, _ := net.SplitHostPort(d.opts.Config.Listen)
	// SECURITY I-2: same DNS-rebinding rule as /acp.
	if config.IsLoopbackHost(host) && !config.IsLoopbackHost(r.Host) {
		http.Error(w, "host not allowed", http.StatusForbidden)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(HealthResult{OK: true, Version: d.opts.Version, DaemonID: d.identity.ID(),
		ExtensionConnected: d.link.Hub().ExtensionConnected()})
}
