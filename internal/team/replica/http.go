package replica

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/torii-browser/torii/internal/team/admin"
)

// handler serves every route once the engines are open (r.served); until
// then /healthz, /readyz naming what is wrong, and a typed 503 with
// Retry-After on the routes that need the engines.
func (r *replica) handler() http.Handler {
	starting := http.NewServeMux()
	starting.HandleFunc("GET /healthz", r.healthz)
	starting.HandleFunc("GET /readyz", r.readyz)
	for _, p := range []string{"/acp", "/mcp", "/admin/", "/v1/"} {
		starting.HandleFunc(p, r.notReady)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if m := r.served.Load(); m != nil {
			m.ServeHTTP(w, req)
			return
		}
		starting.ServeHTTP(w, req)
	})
}

// notReady answers a request before the engines are open as each route
// answers when its engine is down mid-run: nothing was done, retry.
func (r *replica) notReady(w http.ResponseWriter, req *http.Request) {
	stOK, _, _ := r.eng.problems()
	code, what := "bus_unavailable", "its message bus"
	if !stOK {
		code, what = "store_unavailable", "its database"
	}
	msg := "the gateway is not ready: " + what + " is unavailable"
	switch {
	case strings.HasPrefix(req.URL.Path, "/admin/"), strings.HasPrefix(req.URL.Path, "/v1/"):
		admin.WriteUnavailable(w, code, msg+"; nothing was done",
			"retry shortly; an operator should check the gateway's /readyz, which names the problem and its fix")
	case req.URL.Path == "/mcp":
		unavailable(w, msg+"; nothing ran; retry shortly")
	default:
		unavailable(w, msg+"; reconnect shortly")
	}
}

// unavailable is a plain 503 that says when to retry.
func unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", "1")
	http.Error(w, msg, http.StatusServiceUnavailable)
}

// routes are the replica's endpoints once its engines are open.
func (r *replica) routes() *http.ServeMux {
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
	// Problems name what is wrong with each engine and the fix.
	Problems []Problem `json:"problems,omitempty"`
}

// healthz is 200 while the process serves: a liveness probe restarts
// only a replica that stopped serving, never one whose engines are down.
func (r *replica) healthz(w http.ResponseWriter, _ *http.Request) {
	writeHealth(w, http.StatusOK, Health{OK: true, Replica: r.team.Replica, Version: r.opts.Version})
}

// readyzTimeout bounds each engine's check, so a hung engine reads as down.
const readyzTimeout = 2 * time.Second

// readyz is 200 only while the store and the bus both answer and the
// replica is not draining; the body names each problem and its fix.
func (r *replica) readyz(w http.ResponseWriter, req *http.Request) {
	h := Health{OK: true, Replica: r.team.Replica, Version: r.opts.Version, Store: "ok", Bus: "ok", Draining: r.draining.Load()}
	if r.served.Load() == nil {
		// Still opening: the retry loop knows why, so nothing is probed.
		stOK, busOK, ps := r.eng.problems()
		if !stOK {
			h.Store = "unavailable"
		}
		if !busOK {
			h.Bus = "unavailable"
		}
		for _, p := range ps {
			h.Problems = append(h.Problems, p.public())
		}
		h.OK = false
	} else {
		ctx, cancel := context.WithTimeout(req.Context(), readyzTimeout)
		defer cancel()
		storeErr, busErr := make(chan error, 1), make(chan error, 1)
		go func() { storeErr <- r.st.Ping(ctx) }()
		go func() { busErr <- r.bus.Ready(ctx) }()
		for _, c := range []struct {
			err   error
			state *string
			log   *reporter
		}{{<-storeErr, &h.Store, r.eng.storeLog}, {<-busErr, &h.Bus, r.eng.busLog}} {
			if c.err == nil {
				c.log.ok()
				continue
			}
			p := problemOf(c.log.engine, c.err)
			c.log.failed(p)
			h.OK, *c.state, h.Problems = false, "unavailable", append(h.Problems, p.public())
		}
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
