package replica

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/toolerr"
)

// Request headers of /mcp, as on one machine.
const (
	browserHeader = "Torii-Browser"
	sessionHeader = "Torii-Session"
)

// callMargin is how long past a call's budget its caller waits for the
// home's answer (the typed timeout the home sends).
const callMargin = 5 * time.Second

// agents is /mcp: stateless Streamable HTTP, so any replica answers any
// request of an agent's MCP session (no sticky sessions), with a user
// token; every tools/call goes over the bus to its browser's home.
type agents struct {
	r   *replica
	srv *mcp.Server
}

func newAgents(r *replica, tools []*mcp.Tool) *agents {
	a := &agents{r: r}
	a.srv = mcp.NewServer(&mcp.Implementation{Name: "torii", Title: "Torii browser (team gateway)", Version: r.opts.Version},
		&mcp.ServerOptions{Logger: r.log, Capabilities: &mcp.ServerCapabilities{Tools: &mcp.ToolCapabilities{}},
			Instructions: broker.ServerInstructions})
	m := broker.NewMirror(a.srv, a.callTool)
	a.srv.AddReceivingMiddleware(m.UnknownTools(a.callTool))
	m.Set(tools)
	return a
}

// principal is the token an /mcp request came with.
type principal struct{ tokenID, userID string }

// authResult: the handler checks the token once, before the SDK's bearer
// check, and hands the answer to it through the request's context.
type authResult struct {
	tok store.Token
	err error
}

type authKey struct{}

// authenticate admits a user token through the admin API's one check
// (the bootstrap admin secret belongs to no user and reaches no browser).
func (a *agents) authenticate(_ context.Context, _ string, req *http.Request) (*auth.TokenInfo, error) {
	res, _ := req.Context().Value(authKey{}).(*authResult)
	if res == nil || res.err != nil {
		return nil, auth.ErrInvalidToken
	}
	tok := res.tok
	// The SDK wants an expiry; a token lives until revoked, which every
	// request re-checks (against the checks remembered, SECURITY I-93).
	return &auth.TokenInfo{UserID: tok.UserID, Extra: map[string]any{"tokenId": tok.ID},
		Expiration: time.Now().Add(time.Hour)}, nil
}

func (a *agents) handler() http.Handler {
	stream := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return a.srv },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: a.r.log, DisableLocalhostProtection: true})
	protected := auth.RequireBearerToken(a.authenticate, nil)(stream)
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if a.r.draining.Load() {
			// SECURITY I-96: a draining replica takes no new work.
			w.Header().Set("Retry-After", "1")
			http.Error(w, "this gateway replica is shutting down; retry (another replica answers)", http.StatusServiceUnavailable)
			return
		}
		if o := req.Header.Get("Origin"); o != "" {
			http.Error(w, "origin not allowed", http.StatusForbidden)
			return
		}
		tok, err := a.r.api.Authenticate(req)
		if errors.Is(err, store.ErrUnavailable) {
			// The store cannot check the token now: a retryable 503, never a
			// 401 that would tell the agent its token is wrong.
			unavailable(w, "the gateway's database is unavailable; nothing ran; retry shortly")
			return
		}
		req = req.WithContext(context.WithValue(req.Context(), authKey{}, &authResult{tok, err}))
		if b := req.URL.Query().Get("browser"); b != "" && req.Header.Get(browserHeader) == "" {
			req.Header.Set(browserHeader, b)
		}
		protected.ServeHTTP(w, req)
	})
}

func principalOf(req *mcp.CallToolRequest) (principal, bool) {
	if req.Extra == nil || req.Extra.TokenInfo == nil {
		return principal{}, false
	}
	tid, _ := req.Extra.TokenInfo.Extra["tokenId"].(string)
	if tid == "" || req.Extra.TokenInfo.UserID == "" {
		return principal{}, false
	}
	return principal{tokenID: tid, userID: req.Extra.TokenInfo.UserID}, true
}

// callTool picks the user's browser and sends the call to its home.
// SECURITY I-93: only the token's user's devices are candidates; a name or
// ID of another user's device is refused as a missing one is. A refusal
// here, before any broker, is audited for the token's user (refusals.go).
func (a *agents) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	r := a.r
	// Counted first, so a drain waits for a refusal's audit record too.
	r.inflight.Add(1)
	defer r.inflight.Done()
	start := time.Now()
	p, ok := principalOf(req)
	if !ok || req.Params == nil {
		return toolerr.New(toolerr.InvalidArgument, "a tools/call needs a user token and a tool name").Result(), nil
	}
	want, session := "", ""
	if req.Extra.Header != nil {
		want, session = req.Extra.Header.Get(browserHeader), req.Extra.Header.Get(sessionHeader)
	}
	refused := refusal{start: start, userID: p.userID, tool: req.Params.Name, session: session}
	if r.draining.Load() {
		return r.auditRefusal(refused, draining()), nil
	}
	dev, res, storeOK := a.pick(ctx, p.userID, want)
	if res != nil {
		if !storeOK {
			return res, nil // the store that would keep the record is what failed
		}
		return r.auditRefusal(refused, res), nil
	}
	refused.deviceID = dev // the user's own: pick chose it among theirs
	args := req.Params.Arguments
	if len(args) == 0 {
		args = []byte("{}")
	}
	// SECURITY I-94: one deadline, sent as the time left (replica clocks
	// may disagree), which the home's broker makes the call's deadline.
	budget := broker.DefaultCallTimeout - time.Since(start)
	if dl, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(dl))
	}
	creq := callRequest{CallID: uuid.NewString(), UserID: p.userID, TokenID: p.tokenID, Session: session,
		DeviceID: dev, Tool: req.Params.Name, Arguments: args, BudgetMs: budget.Milliseconds(), From: r.team.Replica}
	// The home answers by the budget; the margin covers the way back.
	cctx, cancel := context.WithTimeout(ctx, budget+callMargin)
	defer cancel()
	res, err := r.route(cctx, creq)
	switch {
	case err == nil:
		return res, nil
	case errorsIs(err, errNoHome):
		return r.auditRefusal(refused, noBrowser(nameOr(want, dev))), nil
	case errorsIs(err, errHomeLost):
		// The home cannot write this call's record now; this replica does,
		// before the agent hears (SECURITY I-95).
		if aerr := r.appendAudit(audit.Record{Time: start, Tool: creq.Tool, Session: sessionLabel(session), Outcome: "error",
			Code: string(toolerr.DaemonRestarted), DurationMs: time.Since(start).Milliseconds()}, p.userID, dev); aerr != nil {
			r.log.Error("replica: audit record of a lost call not written", "call", creq.CallID, "err", aerr)
			return auditDown(creq.Tool), nil
		}
		return homeLost(creq.Tool), nil
	case ctx.Err() != nil:
		return toolerr.New(toolerr.Cancelled, "%s was cancelled; it may have partly run", creq.Tool).Result(), nil
	case cctx.Err() != nil:
		return toolerr.New(toolerr.Timeout, "%s got no answer by its deadline; it may have run", creq.Tool).Result(), nil
	}
	r.log.Warn("replica: bus call failed", "call", creq.CallID, "err", err)
	e := toolerr.New(toolerr.Internal, "the gateway could not route %s (its message bus is unavailable); nothing ran", creq.Tool)
	e.Hint = "Call again shortly; the gateway's /readyz says when its bus is back."
	return r.auditRefusal(refused, e.Result()), nil
}

// route runs the call here when this replica is its device's home, with
// no trip through NATS, else sends it over the bus to the home. Either way
// serveCall runs it at the home (SECURITY I-93, I-94, I-95).
func (r *replica) route(ctx context.Context, req callRequest) (*mcp.CallToolResult, error) {
	if !r.bus.Serving(req.DeviceID) {
		return r.bus.Call(ctx, req)
	}
	if req.BudgetMs <= 0 {
		return nil, context.DeadlineExceeded
	}
	// The budget is the call's one deadline, as the bus gives it at a home.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(req.BudgetMs)*time.Millisecond)
	defer cancel()
	return r.serveCall(ctx, req), nil
}

func nameOr(want, id string) string {
	if want != "" {
		return want
	}
	return id
}

// pick chooses the device: the one named (by ID or name) among the user's
// own, else the user's online device that connected last. Both use the
// user's devices as the checks remember them; a miss asks the store, and so
// does "connected last" when a browser connected since they were read.
// Otherwise it returns the refusal, and storeOK false when the store could
// not be read.
func (a *agents) pick(ctx context.Context, userID, want string) (dev string, refusal *mcp.CallToolResult, storeOK bool) {
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	if want != "" {
		d, err := a.r.checks.userDevice(sctx, userID, func(d store.Device) bool { return d.ID == want || d.Name == want })
		switch {
		case err == nil:
			return d.ID, nil, true
		case isNotFound(err):
			return "", noBrowser(want), true
		}
		return "", storeDown("nothing ran"), false
	}
	devs, at, err := a.r.checks.userDevices(sctx, userID, false)
	if err == nil && a.r.bus.ClaimedSince(at) {
		// A browser connected since the list was read: its last-seen
		// time, or the browser itself, may be missing from it.
		devs, _, err = a.r.checks.userDevices(sctx, userID, true)
	}
	if err != nil {
		return "", storeDown("nothing ran"), false
	}
	// The replicas' presence as this one watches it; when that shows none
	// of the user's devices, the bucket itself is read, so "none of your
	// browsers is connected" is never a view's lag.
	var live []store.Device
	for _, fresh := range []bool{false, true} {
		online, err := a.r.bus.Online(sctx, fresh)
		if err != nil {
			e := toolerr.New(toolerr.Internal, "the gateway cannot see which browsers are connected (its message bus is unavailable); nothing ran")
			e.Hint = "Call again shortly; the gateway's /readyz says when its bus is back."
			return "", e.Result(), true
		}
		for _, d := range devs {
			if _, ok := online[d.ID]; ok && d.UserID == userID {
				live = append(live, d)
			}
		}
		if len(live) > 0 {
			break
		}
	}
	if len(live) == 0 {
		return "", noBrowserAtAll(), true
	}
	slices.SortFunc(live, func(x, y store.Device) int {
		if c := y.LastSeen.Compare(x.LastSeen); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return live[0].ID, nil, true
}
