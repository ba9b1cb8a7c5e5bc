package e2e_test

import (
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// site is the web server the browsers are driven on. It records every
// request with the User-Agent of the browser that made it, so the test sees
// from the server's side which browser did what.
type site struct {
	srv     *httptest.Server
	mu      sync.Mutex
	seen    []hit
	waiters []waiter
	holds   map[string]chan struct{} // /slow?hold=NAME answers once NAME is released
}

type hit struct{ path, user, hold, agent string }

type waiter struct {
	match func(hit) bool
	ch    chan hit
}

func newSite(t *testing.T) *site {
	t.Helper()
	s := &site{holds: map[string]chan struct{}{}}
	mux := http.NewServeMux()
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		who := html.EscapeString(r.URL.Query().Get("user"))
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><title>Team page</title>
<h1 id="state">Waiting for %[1]s</h1>
<button id="go" onclick="fetch('/clicked?user=%[1]s').then(r=>r.text()).then(t=>{document.getElementById('state').textContent=t})">Press</button>`, who)
	})
	mux.HandleFunc("/clicked", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "Pressed by %s", html.EscapeString(r.URL.Query().Get("user")))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		// Answers only when the test lets it: a call that navigates here is
		// in flight for as long as the test needs.
		select {
		case <-s.hold(r.URL.Query().Get("hold")):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, `<!doctype html><title>Slow</title><p>Finally</p>`)
	})
	s.srv = httptest.NewServer(s.record(mux))
	t.Cleanup(func() {
		s.mu.Lock()
		for name := range s.holds {
			s.releaseLocked(name)
		}
		s.mu.Unlock()
		s.srv.Close()
	})
	return s
}

func (s *site) hold(name string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.holds[name]
	if ch == nil {
		ch = make(chan struct{})
		s.holds[name] = ch
	}
	return ch
}

// release lets the /slow requests held under name answer.
func (s *site) release(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked(name)
}

func (s *site) releaseLocked(name string) {
	ch := s.holds[name]
	if ch == nil {
		ch = make(chan struct{})
		s.holds[name] = ch
	}
	select {
	case <-ch:
	default:
		close(ch)
	}
}

func (s *site) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		x := hit{path: r.URL.Path, user: r.URL.Query().Get("user"), hold: r.URL.Query().Get("hold"), agent: r.UserAgent()}
		s.mu.Lock()
		s.seen = append(s.seen, x)
		kept := s.waiters[:0]
		for _, wt := range s.waiters {
			if wt.match(x) {
				wt.ch <- x
			} else {
				kept = append(kept, wt)
			}
		}
		s.waiters = kept
		s.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

// await returns a channel that receives the first request (from now or
// already seen) matching m.
func (s *site) await(m func(hit) bool) <-chan hit {
	ch := make(chan hit, 1)
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, x := range s.seen {
		if m(x) {
			ch <- x
			return ch
		}
	}
	s.waiters = append(s.waiters, waiter{match: m, ch: ch})
	return ch
}

func (s *site) hits() []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]hit(nil), s.seen...)
}

func (s *site) url(path string) string { return s.srv.URL + path }

// origin is the site as a launch policy's --allow pattern: host:port.
func (s *site) origin() string { return strings.TrimPrefix(s.srv.URL, "http://") }
