package daemon

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/mcpserver"
)

// Session lifetimes and caps (SECURITY I-52). An /mcp session ends after
// mcpIdle without a request, when its token is revoked, or when its token
// opens one past mcpPerToken (the least recently used goes); a token may
// have mcpRequests requests (event streams included) open at once, and the
// daemon mcpTotal sessions in all.
const (
	mcpIdle     = 30 * time.Minute
	mcpPerToken = 64
	mcpTotal    = 512
	mcpRequests = 128
)

type sessionLimits struct {
	mcpIdle     time.Duration
	mcpPerToken int
	mcpTotal    int
	mcpRequests int
	labelIdle   time.Duration // shared cli sessions (default: broker.sessionIdleSec)
	maxLabels   int           // broker.MaxLabelSessions
}

func (l sessionLimits) withDefaults() sessionLimits {
	if l.mcpIdle <= 0 {
		l.mcpIdle = mcpIdle
	}
	if l.mcpPerToken <= 0 {
		l.mcpPerToken = mcpPerToken
	}
	if l.mcpTotal <= 0 {
		l.mcpTotal = mcpTotal
	}
	if l.mcpRequests <= 0 {
		l.mcpRequests = mcpRequests
	}
	return l
}

// mcpSessions tracks the /mcp sessions by the principal (token) that
// opened them, for the caps and for revocation.
type mcpSessions struct {
	lim sessionLimits
	// onEnd runs before a session is closed here, so its calls are
	// cancelled first: the SDK's Close waits for in-flight requests.
	onEnd func(*mcp.ServerSession)

	mu     sync.Mutex
	byID   map[string]*mcpSession
	active map[string]int // open requests per principal
	seq    uint64
}

type mcpSession struct {
	principal string
	ss        *mcp.ServerSession
	used      uint64 // m.seq at its last request
}

func newMCPSessions(lim sessionLimits) *mcpSessions {
	return &mcpSessions{lim: lim, byID: map[string]*mcpSession{}, active: map[string]int{}}
}

type serverHolderKey struct{}

// serverHolder carries, out of the SDK's getServer callback, which server
// a new session was created on, so it can be found by its ID.
type serverHolder struct{ srv *mcp.Server }

// noteServer records the server chosen for a request that may create a session.
func noteServer(ctx context.Context, srv *mcp.Server) {
	if h, _ := ctx.Value(serverHolderKey{}).(*serverHolder); h != nil {
		h.srv = srv
	}
}

const sessionIDHeader = "Mcp-Session-Id"

// wrap enforces the caps around the SDK's handler; it runs after the
// bearer-token check, so every request has a principal.
func (m *mcpSessions) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		principal := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			principal = ti.UserID
		}
		m.mu.Lock()
		if m.active[principal] >= m.lim.mcpRequests {
			m.mu.Unlock()
			w.Header().Set("Retry-After", "1")
			http.Error(w, "too many open requests for this token", http.StatusServiceUnavailable)
			return
		}
		m.active[principal]++
		m.mu.Unlock()
		browserParam(r)
		defer func() {
			m.mu.Lock()
			if m.active[principal]--; m.active[principal] <= 0 {
				delete(m.active, principal)
			}
			m.mu.Unlock()
		}()

		if sid := r.Header.Get(sessionIDHeader); sid != "" || r.Method != http.MethodPost {
			m.touch(sid)
			next.ServeHTTP(w, r)
			return
		}
		// A POST without a session id opens a session.
		victim, ok := m.makeRoom(principal)
		if !ok {
			w.Header().Set("Retry-After", "5")
			http.Error(w, "too many MCP sessions", http.StatusServiceUnavailable)
			return
		}
		if victim != nil {
			m.end(victim)
		}
		h := &serverHolder{}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverHolderKey{}, h)))
		if id := w.Header().Get(sessionIDHeader); id != "" && h.srv != nil {
			m.register(id, principal, h.srv)
		}
	})
}

func (m *mcpSessions) touch(id string) {
	if id == "" {
		return
	}
	m.mu.Lock()
	if s := m.byID[id]; s != nil {
		m.seq++
		s.used = m.seq
	}
	m.mu.Unlock()
}

// makeRoom frees a place for one more session of principal: the least
// recently used of its own when it is at its cap. ok is false when the
// daemon-wide cap is reached.
func (m *mcpSessions) makeRoom(principal string) (victim *mcp.ServerSession, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	var lru *mcpSession
	var lruID string
	for id, s := range m.byID {
		if s.principal != principal {
			continue
		}
		n++
		if lru == nil || s.used < lru.used {
			lru, lruID = s, id
		}
	}
	if n >= m.lim.mcpPerToken && lru != nil {
		delete(m.byID, lruID)
		return lru.ss, true
	}
	return nil, len(m.byID) < m.lim.mcpTotal
}

// browserParam copies ?browser= into mcpserver.BrowserHeader, so the SDK hands it to
// the call handler (RequestExtra.Header); a header already set wins.
func browserParam(r *http.Request) {
	if b := r.URL.Query().Get("browser"); b != "" && r.Header.Get(mcpserver.BrowserHeader) == "" {
		r.Header.Set(mcpserver.BrowserHeader, b)
	}
}

func (m *mcpSessions) register(id, principal string, srv *mcp.Server) {
	var ss *mcp.ServerSession
	for s := range srv.Sessions() {
		if s.ID() == id {
			ss = s
			break
		}
	}
	if ss == nil {
		return // already gone
	}
	m.mu.Lock()
	m.seq++
	m.byID[id] = &mcpSession{principal: principal, ss: ss, used: m.seq}
	m.mu.Unlock()
	go func() {
		_ = ss.Wait()
		m.mu.Lock()
		if s := m.byID[id]; s != nil && s.ss == ss {
			delete(m.byID, id)
		}
		m.mu.Unlock()
	}()
}

// closePrincipal ends every session of principal and returns them.
func (m *mcpSessions) closePrincipal(principal string) []*mcp.ServerSession {
	m.mu.Lock()
	var out []*mcp.ServerSession
	for id, s := range m.byID {
		if s.principal == principal {
			out = append(out, s.ss)
			delete(m.byID, id)
		}
	}
	m.mu.Unlock()
	for _, ss := range out {
		m.end(ss)
	}
	return out
}

// end cancels a session's calls, then closes it (its streams end) in the
// background.
func (m *mcpSessions) end(ss *mcp.ServerSession) {
	if m.onEnd != nil {
		m.onEnd(ss)
	}
	go func() { _ = ss.Close() }()
}

// count is the number of live sessions (status, tests).
func (m *mcpSessions) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// revokeHTTP ends every /mcp session of a revoked token: their calls,
// queued or in flight, are cancelled (in the extension too) rather than
// allowed to finish, and their event streams close. SECURITY I-52.
func (d *daemon) revokeHTTP(tokenID string) int {
	return len(d.mcpSess.closePrincipal(tokenID))
}

func (d *daemon) tokenLabel(id string) string {
	for _, t := range d.tokens.List() {
		if t.ID == id {
			return t.Label
		}
	}
	return id
}
