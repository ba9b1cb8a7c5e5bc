// Package replica is one replica of `torii serve --team`: the composition
// root that puts the one-machine parts (the link, browserlink, the broker)
// on the shared store (internal/team/store) and bus (internal/team/bus).
//
//	/acp      browsers: pairing (a code approved on any replica, or a
//	          managed launch's one-time secret) and the signed challenge;
//	          this replica then becomes the browser's home on the bus and
//	          runs its calls through its broker.
//	/mcp      agents: stateless MCP Streamable HTTP with a user token;
//	          each call goes over the bus to its browser's home.
//	/admin/, /v1/   the admin and user API (internal/team/admin).
//	/healthz  200 while the process serves.
//	/readyz   200 only while the store and the bus answer and not draining;
//	          otherwise 503 naming each problem and its fix. A replica
//	          whose engines are not there at start serves these two and
//	          retries them (startup.go); the other routes answer 503.
package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/logx"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/team/admin"
	"github.com/torii-browser/torii/internal/team/store"
)

// Options configure Run.
type Options struct {
	Config config.Config
	// Team is config.Config.TeamConfig's result (overrides applied, validated).
	Team config.Team
	// Paths locate the default identity file (one replica).
	Paths   config.Paths
	Logger  *slog.Logger
	Version string
	// Ready, if set, receives the bound listen address once serving.
	Ready chan<- string
	// Catalogue is the tool catalogue agents see; nil is the one built into
	// the binary with the extension.
	Catalogue []*mcp.Tool

	pairTimeout time.Duration // tests shorten the 120 s pairing window
	drainGrace  time.Duration // tests shorten the 30 s drain
	openStore   func(ctx context.Context, url string) (store.Store, error)
	openBus     func(ctx context.Context, url, replica string, log *slog.Logger) (router, error)
	onHome      func(deviceID string, serving bool) // tests: a browser's home started or stopped here
	checkMaxAge time.Duration                       // tests lengthen checkMaxAge, to see events alone act
	refusals    *refusalBudget                      // tests lower the budget and fix its clock
}

// drainGrace is how long in-flight calls get after SIGTERM.
const drainGrace = 30 * time.Second

// Close codes a replica's browsers hear.
const (
	// closeRestart (1012) sends a browser to another replica at once.
	closeRestart       = websocket.StatusServiceRestart
	closeRestartReason = "service restart: reconnect"
	// maxCloseReason is what a WebSocket close frame holds (125 bytes less the code).
	maxCloseReason = 123
)

// restartReason is the 1012 close reason. With team.publicURL it names the
// gateway's browser address, which the popup shows the person; the
// extension itself reconnects to the address it paired with and never to
// one a close frame names, so a replica cannot redirect a browser.
func (r *replica) restartReason() string {
	if u, ok := r.team.URLs(); ok {
		if s := closeRestartReason + " to " + u.ACP; len(s) <= maxCloseReason {
			return s
		}
	}
	return closeRestartReason
}

type replica struct {
	opts     Options
	team     config.Team
	log      *slog.Logger
	st       store.Store
	bus      router
	identity *pairing.Identity
	admin    []byte // the bootstrap admin secret
	link     *link.Server
	agent    *acp.Agent
	broker   *broker.Broker
	pairs    *pairer
	homes    homes
	calls    calls
	agents   *agents
	api      *admin.API
	checks   *checks
	refusals *refusalBudget
	toolSrv  sync.Map // link connection ID → *browserlink.Server

	eng        *engines
	tools      []*mcp.Tool
	served     atomic.Pointer[http.ServeMux] // every route, once the engines are open
	stopEvents func()

	draining atomic.Bool
	inflight inflight // /mcp calls and calls served for browsers here
	listen   string
	scheme   string
}

// Run serves until ctx ends, then drains (SECURITY I-96) and returns nil.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = slog.New(logx.Bounded(log.Handler()))
	r := &replica{opts: opts, team: opts.Team, log: log.With("replica", opts.Team.Replica)}
	ln, scheme, err := listen(opts.Config.Listen, opts.Team)
	if err != nil {
		return err
	}
	defer ln.Close()
	r.scheme = scheme
	r.listen = ln.Addr().String()
	idPath := opts.Team.IdentityFile
	if idPath == "" {
		idPath = opts.Paths.DaemonKey()
	}
	if r.identity, err = loadIdentity(idPath); err != nil {
		return err
	}
	if r.admin, err = readAdminSecret(opts.Team.AdminTokenFile); err != nil {
		return err
	}
	if r.tools = opts.Catalogue; r.tools == nil {
		if r.tools, err = extension.Catalogue(); err != nil {
			return err
		}
	}
	r.eng = newEngines(r)
	defer r.eng.close()

	// /healthz answers from the start; the rest waits for the engines.
	httpSrv := &http.Server{Handler: r.handler(), ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second,
		MaxHeaderBytes: 64 << 10, ErrorLog: slog.NewLogLogger(r.log.Handler(), slog.LevelDebug)}
	errc := make(chan error, 2)
	go func() {
		if err := httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("replica: http: %w", err)
		}
	}()
	// One attempt at each engine before Ready: a malformed URL refuses to
	// start, and a replica whose engines answer is ready when it says it serves.
	if err := r.eng.first(ctx); err != nil {
		_ = httpSrv.Close()
		return err
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	composed := make(chan struct{})
	if r.eng.storeOpen() && r.eng.busOpen() {
		if err := r.compose(ctx); err != nil {
			_ = httpSrv.Close()
			return err
		}
		close(composed)
	} else {
		// SECURITY I-101: not ready, not dead: retry until the engines answer.
		r.log.Warn("torii team replica not ready: retrying its store and bus; /readyz names the problem")
		go func() {
			defer close(composed)
			err := r.eng.untilOpen(cctx)
			if err == nil {
				err = r.compose(cctx)
			}
			if err != nil && cctx.Err() == nil {
				errc <- err
			}
		}()
	}
	r.log.Info("torii team replica serving", "listen", r.listen, "scheme", scheme, "gatewayId", r.identity.ID())
	if opts.Ready != nil {
		select {
		case opts.Ready <- r.listen:
		case <-ctx.Done():
		}
	}
	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
	}
	cancel()
	<-composed
	r.drain(httpSrv)
	if r.stopEvents != nil {
		r.stopEvents()
	}
	return runErr
}

// compose builds the replica's parts on its open store and bus, then
// serves every route.
func (r *replica) compose(ctx context.Context) error {
	r.eng.mu.Lock()
	r.st, r.bus = r.eng.st, r.eng.bus
	r.eng.mu.Unlock()
	r.broker = broker.New(r.log)
	// Team mode's broker serves every browser homed here: the in-flight
	// bound is per replica, so it is raised past one person's; per-tab
	// order and each call's one deadline are kept as on one machine.
	lim := r.opts.Config.Broker
	if lim.MaxInFlight == 0 {
		lim.MaxInFlight = teamMaxInFlight
	}
	r.broker.SetLimits(lim)
	r.broker.SetLabelLimits(0, teamMaxSessions)
	r.broker.SetObserver(auditObserver{r})
	r.broker.SeedCatalogue(r.tools)
	r.homes.init()
	r.calls.init()
	r.pairs = newPairer(r, r.opts.pairTimeout)
	r.agent = acp.New(r.opts.Version)
	r.agent.OnSession = r.onSession
	r.link = link.NewServer(link.Options{
		Identity: r.identity, Devices: devices{r.st}, Tokens: noTokens{}, Pairer: r.pairs, Handler: linkHandler{r},
		LoopbackBind: config.IsLoopbackHost(hostOf(r.listen)), ExtensionIDs: r.opts.Config.ExtensionIDs, Logger: r.log,
		Verbose: r.log.Enabled(ctx, slog.LevelDebug),
	})
	r.checks = newChecks(r.st, r.opts.checkMaxAge)
	if r.refusals = r.opts.refusals; r.refusals == nil {
		r.refusals = &refusalBudget{}
	}
	go r.checks.run(ctx)
	stopEvents, err := r.bus.Subscribe(r.onEvent)
	if err != nil {
		return fmt.Errorf("replica: subscribe to the bus's events: %w", err)
	}
	r.stopEvents = stopEvents
	r.api = r.newAdmin()
	r.agents = newAgents(r, r.tools)
	r.served.Store(r.routes())
	r.log.Info("torii team replica ready: store and bus open")
	return nil
}

// Team-mode broker limits (see Run).
const (
	teamMaxInFlight = 4096
	teamMaxSessions = 4096
)

// drain is SIGTERM (SECURITY I-96): not ready at once; new agent calls are
// refused and the bus takes no new calls for browsers homed here; calls in
// flight get up to drainGrace; then every browser is told to reconnect
// elsewhere (1012) and this replica's presence is released.
func (r *replica) drain(httpSrv *http.Server) {
	r.draining.Store(true)
	r.log.Info("replica draining")
	if r.served.Load() == nil {
		// Never ready: no browser, call or presence to hand over.
		_ = httpSrv.Close()
		r.log.Info("replica stopped")
		return
	}
	r.bus.Drain()
	grace := r.opts.drainGrace
	if grace <= 0 {
		grace = drainGrace
	}
	waitTimeout(r.inflight.Wait, grace)
	r.broker.Close()
	r.link.Hub().CloseAll(closeRestart, r.restartReason())
	r.homes.stopAll()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = httpSrv.Shutdown(sctx)
	waitTimeout(r.link.Hub().Wait, 5*time.Second)
	r.log.Info("replica stopped")
}

func waitTimeout(f func(), d time.Duration) {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
	}
}
