package replica

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"time"
)

// routes are the replica's endpoints.
func (r *replica) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/acp", http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if r.draining.Load() {
			// SECURITY I-96: a draining replica takes no new browser.
			http.Error(w, "this gateway replica is shutting down; reconnect (another replica answers)", http.StatusServiceUnavailable)
			return
		}
		r.link.ServeHTTP(w, req)
	}))
	mux.Handle("/mcp", r.agents.handler())
	mux.HandleFunc("GET /healthz", r.healthz)
	mux.HandleFunc("GET /readyz", r.readyz)
	r.mountAdmin(mux)
	return mux
}

func hostOf(addr string) string {
	h, _, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	return h
}

// Health is GET /healthz and /readyz.
type Health struct {
	OK       bool   `json:"ok"`
	Replica  string `json:"replica"`
	Version  string `json:"version,omitempty"`
	Store    string `json:"store,omitempty"` // "ok" or why not
	Bus      string `json:"bus,omitempty"`
	Draining bool   `json:"draining,omitempty"`
}

// healthz is 200 while the process serves: a liveness probe restarts
// only a replica that stopped serving, never one whose engines are down.
func (r *replica) healthz(w http.ResponseWriter, _ *http.Request) {
	writeHealth(w, http.StatusOK, Health{OK: true, Replica: r.team.Replica, Version: r.opts.Version})
}

// readyzTimeout bounds each engine's check, so a hung engine reads as down.
const readyzTimeout = 2 * time.Second

// readyz is 200 only while the store and the bus both answer and the
// replica is not draining; the body says which part is down.
func (r *replica) readyz(w http.ResponseWriter, req *http.Request) {
	h := Health{OK: true, Replica: r.team.Replica, Version: r.opts.Version, Store: "ok", Bus: "ok", Draining: r.draining.Load()}
	ctx, cancel := context.WithTimeout(req.Context(), readyzTimeout)
	defer cancel()
	storeErr, busErr := make(chan error, 1), make(chan error, 1)
	go func() { storeErr <- r.st.Ping(ctx) }()
	go func() { busErr <- r.bus.Ready(ctx) }()
	if err := <-storeErr; err != nil {
		h.OK, h.Store = false, "unavailable"
		r.log.Info("readyz: store down", "err", err)
	}
	if err := <-busErr; err != nil {
		h.OK, h.Bus = false, "unavailable"
		r.log.Info("readyz: bus down", "err", err)
	}
	if h.Draining {
		h.OK = false
	}
	code := http.StatusOK
	if !h.OK {
		code = http.StatusServiceUnavailable
	}
	writeHealth(w, code, h)
}

func writeHealth(w http.ResponseWriter, code int, h Health) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(h)
}
