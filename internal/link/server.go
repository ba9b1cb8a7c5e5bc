package link

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/pairing"
)

// Server is the /acp endpoint. It implements http.Handler.
type Server struct {
	opts Options
	log  *slog.Logger
	hub  *Hub
	ext  map[string]bool // allowed extension origins
	tok  map[string]bool // allowed token-only origins
}

// NewServer builds the endpoint. Identity, Devices and Pairer are required
// for extension clients; Tokens for token clients.
func NewServer(opts Options) *Server {
	s := &Server{opts: opts, log: opts.Logger, hub: newHub(), ext: map[string]bool{}, tok: map[string]bool{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.ext["chrome-extension://"+ExtensionID] = true
	for _, id := range opts.ExtensionIDs {
		s.ext["chrome-extension://"+id] = true
	}
	for _, o := range opts.TokenOrigins {
		s.tok[strings.TrimSuffix(o, "/")] = true
	}
	s.hub.tickets = loadTickets(opts.TicketFile, func(device string) bool {
		if opts.Devices == nil {
			return false
		}
		_, ok := opts.Devices.Get(device)
		return ok
	}, s.log)
	return s
}

// Hub returns the live-connection hub.
func (s *Server) Hub() *Hub { return s.hub }

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}

func (s *Server) authTimeout() time.Duration {
	if s.opts.authTimeout > 0 {
		return s.opts.authTimeout
	}
	return AuthTimeout
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

func (s *Server) isExtensionOrigin(o string) bool { return s.ext[o] }

// promote marks a connection authenticated under the hub lock; set reports
// whether it may be (and performs the state change). The connection gives
// up its unauthenticated slot only if it holds one, so the count stays
// exact whatever order messages come in (SECURITY I-4).
func (s *Server) promote(c *Conn, set func() bool) bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	c.mu.Lock()
	ok := !c.closing && set()
	if ok && c.authTimer != nil {
		c.authTimer.Stop()
	}
	c.mu.Unlock()
	if ok {
		s.hub.releaseLocked(c)
	}
	return ok
}

// ServeHTTP runs the pre-upgrade checks in the documented order, then
// upgrades and serves the connection until it closes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// SECURITY I-2: on a loopback bind a non-loopback Host means DNS
	// rebinding (a web page resolving its own name to 127.0.0.1).
	local := ""
	if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
		local = a.String()
	}
	if !config.HostAllowed(s.opts.LoopbackBind, local, r.Host) {
		s.refuse(w, r, http.StatusForbidden, "host not allowed")
		return
	}
	// SECURITY I-3: the Origin is checked before any upgrade.
	origin := r.Header.Get("Origin")
	tokenOnly := false
	switch {
	case origin == "" || s.ext[origin]:
	case s.tok[origin]:
		tokenOnly = true
	default:
		s.refuse(w, r, http.StatusForbidden, "origin not allowed")
		return
	}
	tokenID, offered, ok := s.checkTokens(r)
	if !ok || (tokenOnly && !offered) {
		s.refuse(w, r, http.StatusUnauthorized, "bad or missing token")
		return
	}
	if !isUpgrade(r) {
		// Lets a browser client tell "auth failed" (401) from "not a
		// WebSocket" (426) from "unreachable".
		w.Header().Set("Upgrade", "websocket")
		w.Header().Set("Connection", "Upgrade")
		http.Error(w, "this endpoint speaks WebSocket only", http.StatusUpgradeRequired)
		return
	}
	if offered && !s.hub.roomFor() {
		// SECURITY I-51: token connections are capped.
		s.refuse(w, r, http.StatusServiceUnavailable, "too many connections")
		return
	}
	var evicted *Conn
	reserved := ""
	if !offered {
		reserved = s.reservedSlot(r, origin)
	}
	if !offered && reserved == "" {
		// SECURITY I-4: unauthenticated connections are capped; at the cap
		// the oldest anonymous one makes room, so a flood cannot keep the
		// extension out.
		ok, victim := s.hub.reserve()
		if !ok {
			s.refuse(w, r, http.StatusServiceUnavailable, "too many unauthenticated connections")
			return
		}
		evicted = victim
	}
	if evicted != nil {
		s.log.Info("link: unauthenticated connection evicted for a newcomer", "conn", evicted.id)
		evicted.Close(websocket.StatusTryAgainLater, "too many unauthenticated connections")
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		Subprotocols: []string{Subprotocol},
		// SECURITY I-3: Origin was checked above against our own list;
		// the library's same-host rule would refuse the extension.
		InsecureSkipVerify: true,
	})
	if err != nil {
		switch {
		case reserved != "":
			s.hub.unreserve(reserved)
		case !offered:
			s.hub.release()
		}
		s.log.Debug("link: upgrade failed", "err", err)
		return
	}
	ws.SetReadLimit(MaxFrame) // SECURITY I-11: larger frames close with 1009
	// The connection outlives the request; its context ends on close only.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	c := &Conn{id: uuid.NewString(), srv: s, ws: ws, origin: origin, since: s.now(), ctx: ctx, cancel: cancel,
		kind: KindPending, counted: !offered && reserved == ""}
	c.peer = c.newPeer()
	if offered {
		c.state, c.kind, c.tokenID = stateAuthed, KindToken, tokenID
	}
	c.lastRead.Store(time.Now().UnixNano())
	s.hub.add(c)
	if reserved != "" {
		s.hub.bindReserved(c, reserved)
	}
	// reserved says the connection came in on its ticket (SECURITY I-57).
	s.log.Debug("link: connected", "conn", c.id, "kind", c.kind, "origin", origin, "reserved", reserved != "")
	if !offered {
		c.armAuthTimer()
	}
	go c.keepalive()
	c.readLoop()
	c.mu.Lock()
	wasPending := c.kind == KindPending
	if c.authTimer != nil {
		c.authTimer.Stop()
	}
	c.closing = true
	c.mu.Unlock()
	s.hub.releaseConn(c)
	if !wasPending && s.opts.Handler != nil {
		s.opts.Handler.Closed(c)
	}
	_ = ws.CloseNow()
	s.hub.remove(c)
	s.log.Debug("link: disconnected", "conn", c.id)
}

// reservedSlot is the device whose reserved slot this upgrade takes
// (SECURITY I-57): it offers a live ticket of a paired device, comes from
// that device's origin, and the device has a reserved slot free. "" sends
// the connection the anonymous way.
func (s *Server) reservedSlot(r *http.Request, origin string) string {
	device, ok := s.hub.tickets.device(offeredTicket(r.Header.Values("Sec-WebSocket-Protocol")))
	if !ok || s.opts.Devices == nil {
		return ""
	}
	if dev, ok := s.opts.Devices.Get(device); !ok || dev.Origin != origin || !s.hub.reserveFor(device) {
		return ""
	}
	return device
}

// checkTokens verifies every offered token. SECURITY I-8: Tokens.Check is
// constant time over stored hashes. offered is false when none was sent.
func (s *Server) checkTokens(r *http.Request) (id string, offered, ok bool) {
	var cands []string
	if a := r.Header.Get("Authorization"); a != "" {
		t, found := strings.CutPrefix(a, "Bearer ")
		if !found || t == "" {
			return "", true, false
		}
		cands = append(cands, strings.TrimSpace(t))
	}
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		for _, p := range strings.Split(h, ",") {
			if t, found := strings.CutPrefix(strings.TrimSpace(p), BearerSubprotocolPrefix); found {
				cands = append(cands, t)
			}
		}
	}
	if len(cands) == 0 {
		return "", false, true
	}
	if s.opts.Tokens == nil {
		return "", true, false
	}
	for _, t := range cands {
		tid, good := s.opts.Tokens.Check(t)
		if !good || (id != "" && tid != id) {
			return "", true, false
		}
		id = tid
	}
	return id, true, true
}

func (s *Server) refuse(w http.ResponseWriter, r *http.Request, code int, why string) {
	// SECURITY I-10: never log headers; they may carry a token.
	s.log.Info("link: refused", "status", code, "why", why, "remote", r.RemoteAddr)
	http.Error(w, why, code)
}

func isUpgrade(r *http.Request) bool {
	return headerHasToken(r.Header, "Connection", "upgrade") && headerHasToken(r.Header, "Upgrade", "websocket")
}

func headerHasToken(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// validDeviceName mirrors the device store's rule, so a bad name is an
// invalid_params reply before a human is ever asked.
func validDeviceName(n string) bool {
	if n == "" || !utf8.ValidString(n) || utf8.RuneCountInString(n) > pairing.MaxDeviceName || strings.TrimSpace(n) == "" {
		return false
	}
	for _, r := range n {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}
