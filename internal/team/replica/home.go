package replica

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

// toolServerName is the tool server the extension declares in session/new.
const toolServerName = "torii"

// linkHandler serves an authenticated browser's link: ACP's initialize
// and session/new (which opens its tools), and torii/tools/changed.
type linkHandler struct{ r *replica }

func (h linkHandler) Handle(ctx context.Context, c *link.Conn, method string, params json.RawMessage) (any, error) {
	if method == browserlink.MethodChanged {
		h.r.toolsChanged(c)
		return nil, nil
	}
	return h.r.agent.Handle(ctx, c, method, params)
}

func (h linkHandler) Closed(c *link.Conn) { h.r.agent.Closed(c) }

// onSession opens the browser's tools when its extension declares them.
func (r *replica) onSession(s acp.Session) {
	conn := r.link.Hub().Get(s.ConnID)
	if conn == nil || conn.Info().Kind != link.KindDevice {
		return
	}
	for _, srv := range s.MCPServers {
		if srv.Name == toolServerName {
			go r.connectToolServer(conn)
			return
		}
	}
}

// connectToolServer attaches the browser's tools to this replica's broker
// and makes this replica the browser's home on the bus.
func (r *replica) connectToolServer(conn *link.Conn) {
	br, err := browserlink.Open(conn.Context(), conn, 0, r.log)
	if err != nil {
		r.log.Warn("browser tool server not connected", "conn", conn.ID(), "err", err)
		return
	}
	info := conn.Info()
	ctx, cancel := context.WithTimeout(conn.Context(), storeTimeout)
	dev, err := r.st.Device(ctx, info.DeviceID)
	cancel()
	if err != nil {
		// Revoked while its catalogue was listed: it never serves. The
		// store down: the browser tries again, here or elsewhere.
		br.Close()
		if isNotFound(err) {
			conn.Close(websocket.StatusPolicyViolation, "device revoked")
		} else {
			conn.Close(closeRestart, r.restartReason())
		}
		return
	}
	r.toolSrv.Store(conn.ID(), br)
	context.AfterFunc(br.Context(), func() { r.toolSrv.CompareAndDelete(conn.ID(), br) })
	r.broker.Attach(dev.ID, dev.Name, br)
	if err := r.homes.add(r, dev.ID, dev.UserID, conn.ID()); err != nil {
		r.log.Warn("replica: cannot serve the browser on the bus; it reconnects elsewhere", "device", dev.ID, "err", err)
		br.Close()
		conn.Close(closeRestart, r.restartReason())
		return
	}
	context.AfterFunc(br.Context(), func() { r.homes.remove(dev.ID, conn.ID()) })
}

// toolsChanged lists a browser's catalogue again.
func (r *replica) toolsChanged(conn *link.Conn) {
	v, ok := r.toolSrv.Load(conn.ID())
	if !ok {
		return
	}
	br := v.(*browserlink.Server)
	go func() {
		ctx, cancel := context.WithTimeout(br.Context(), browserlink.ListTimeout)
		defer cancel()
		if err := br.Refresh(ctx); err != nil {
			r.log.Warn("browser tool catalogue not refreshed", "conn", conn.ID(), "err", err)
			return
		}
		info := conn.Info()
		r.broker.Attach(info.DeviceID, info.DeviceName, br)
	}()
}

// homes are the browsers this replica serves on the bus: one
// subscription per device, however many of its links (a reconnect
// overlapping the old link) are here.
type homes struct {
	mu    sync.Mutex
	by    map[string]*home
	wg    sync.WaitGroup
	after func() // tests: a home was added or removed
}

type home struct {
	userID string
	links  map[string]bool
	stop   func()
}

func (h *homes) init() { h.by = map[string]*home{} }

func (h *homes) add(r *replica, deviceID, userID, connID string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.by[deviceID]; cur != nil {
		cur.links[connID] = true
		return nil
	}
	stop, err := r.bus.ServeDevice(deviceID, r.serveCall, bus.OnEvicted(func(id string) {
		// The browser came back on another replica: this link is stale.
		r.closeLinks(id, websocket.StatusGoingAway, "the browser is served by another replica")
	}))
	if err != nil {
		return err
	}
	h.by[deviceID] = &home{userID: userID, links: map[string]bool{connID: true}, stop: stop}
	r.log.Info("replica: serving browser", "device", deviceID, "user", userID)
	if r.opts.onHome != nil {
		r.opts.onHome(deviceID, true)
	}
	return nil
}

func (h *homes) remove(deviceID, connID string) {
	h.mu.Lock()
	cur := h.by[deviceID]
	if cur == nil {
		h.mu.Unlock()
		return
	}
	delete(cur.links, connID)
	if len(cur.links) > 0 {
		h.mu.Unlock()
		return
	}
	delete(h.by, deviceID)
	h.mu.Unlock()
	cur.stop()
}

// stopAll releases every device's presence (drain).
func (h *homes) stopAll() {
	h.mu.Lock()
	all := h.by
	h.by = map[string]*home{}
	h.mu.Unlock()
	for _, cur := range all {
		cur.stop()
	}
}

// devicesOf lists the devices of user served here.
func (h *homes) devicesOf(userID string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, cur := range h.by {
		if cur.userID == userID {
			out = append(out, id)
		}
	}
	return out
}

// serveCall runs one call for a browser homed here, brought by the bus or
// made on this replica (route). SECURITY I-93: the calling user must own
// the device, checked here against the store (or its answer remembered,
// see checks) whatever the sending replica checked; a refusal reads as the
// one for a missing browser. SECURITY I-94: the broker here is the
// device's one scheduler, so per-tab order holds whichever replica the
// agent called, and the call's one deadline is its remaining budget.
// SECURITY I-95: the audit record is durable before the result returns.
func (r *replica) serveCall(ctx context.Context, req callRequest) *mcp.CallToolResult {
	r.inflight.Add(1)
	defer r.inflight.Done()
	if req.UserID == "" || req.TokenID == "" {
		return noBrowser(req.DeviceID)
	}
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	_, err := r.checks.userDevice(sctx, req.UserID, func(d store.Device) bool { return d.ID == req.DeviceID })
	cancel()
	if err != nil {
		if !isNotFound(err) {
			return storeDown("nothing ran")
		}
		// Recorded for the calling user without the device: it is not
		// (or no longer) theirs.
		return r.auditRefusal(refusal{start: time.Now(), userID: req.UserID, tool: req.Tool, session: req.Session}, noBrowser(req.DeviceID))
	}
	ctx, cancel = context.WithCancel(ctx)
	defer cancel()
	c := r.calls.add(req, cancel)
	defer r.calls.done(req.CallID)
	key := sessionKey(req.TokenID, req.DeviceID, req.Session)
	s := r.broker.NamedSession(key, sessionLabel(req.Session))
	s.BindBrowser(broker.BindNamed, req.DeviceID)
	r.calls.session(req.TokenID, req.UserID, key)
	budget := time.Duration(req.BudgetMs) * time.Millisecond
	res := r.broker.CallTool(ctx, broker.Call{Name: req.Tool, Arguments: req.Arguments, Session: sessionLabel(req.Session),
		Owner: s, Timeout: budget, Tag: req.CallID})
	if err := c.auditErr(); err != nil {
		r.log.Error("replica: audit record not written; the result is withheld", "call", req.CallID, "err", err)
		return auditDown(req.Tool)
	}
	return res
}

// sessionKey is the broker's named session of (token, device, name): a
// token never reaches another token's session, and a session never moves
// off the device it was made for (SECURITY I-93).
func sessionKey(tokenID, deviceID, name string) string {
	return "team\x00" + tokenID + "\x00" + deviceID + "\x00" + broker.ClipLabel(name)
}

func sessionLabel(name string) string {
	if name == "" {
		return "agent"
	}
	return name
}

// closeLinks closes the device's links here with code.
func (r *replica) closeLinks(deviceID string, code websocket.StatusCode, reason string) {
	for _, ci := range r.link.Hub().Connections() {
		if ci.Kind == link.KindDevice && ci.DeviceID == deviceID {
			if c := r.link.Hub().Get(ci.ID); c != nil {
				c.Close(code, reason)
			}
		}
	}
}
