package daemon

import (
	"encoding/json"
	"net/http"
)

// HealthResult is GET /healthz.
type HealthResult struct {
	OK                 bool   `json:"ok"`
	Version            string `json:"version"`
	DaemonID           string `json:"daemonId"`
	ExtensionConnected bool   `json:"extensionConnected"`
}

// routes are the daemon's endpoints; Run wraps them in guard, so the Host
// rule (SECURITY I-2) and the deadlines apply to every one alike.
func (d *daemon) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/acp", d.link)
	mux.Handle("/mcp", d.mcpHTTP)
	mux.HandleFunc("GET /healthz", d.healthz)
	return mux
}

func (d *daemon) healthz(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(HealthResult{OK: true, Version: d.opts.Version, DaemonID: d.identity.ID(),
		ExtensionConnected: d.link.Hub().ExtensionConnected()})
}
