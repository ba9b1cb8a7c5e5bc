// Package daemon wires `torii serve`: the state lock, the HTTP server with
// /acp and /healthz, the control socket, pairing, and graceful shutdown.
package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/acp"
	"github.com/torii-browser/torii/internal/atomicfile"
	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/files"
	"github.com/torii-browser/torii/internal/gateway"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/logx"
	"github.com/torii-browser/torii/internal/mcpserver"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/tokens"
)

// Options configure Run.
type Options struct {
	Paths   config.Paths
	Config  config.Config
	Logger  *slog.Logger
	Version string
	// Ready, if set, receives the bound listen address once serving.
	Ready chan<- string
	// DiscoveryFile, if set, is where the daemon records itself for clients
	// with a clean environment (config.DiscoveryFile; discovery.go).
	DiscoveryFile string

	pairTimeout   time.Duration // tests shorten the 120 s pairing decision window
	bridgeTimeout time.Duration // tests shorten the 30 s tool-server connect window
	auditInterval time.Duration // tests shorten the audit retention timer (audit.go)
	httpLimits    httpLimits    // tests shorten the HTTP deadlines (httpguard.go)
	maxConns      int           // tests lower the TCP connection budget (connbudget.go)
	maxCtlConns   int           // tests lower the control-socket connection budget
	sessions      sessionLimits // tests shorten session lifetimes (sessions.go)
	configPoll    time.Duration // tests shorten the config.json poll (reload.go)

	// Catalogue is served before an extension attaches; nil means the one
	// built into the binary with the extension.
	Catalogue []*mcp.Tool
}

// ErrNonLoopbackNeedsToken: SECURITY I-1, a non-loopback bind needs TLS
// (checked by config.Validate) and at least one token.
var ErrNonLoopbackNeedsToken = errors.New("daemon: a non-loopback listen address needs at least one token; create one with `torii token new` first")

// shutdownGrace bounds how long closing connections may take.
const shutdownGrace = 5 * time.Second

type daemon struct {
	toolSrv  sync.Map // link connection ID → *browserlink.Server
	opts     Options
	log      *slog.Logger
	identity *pairing.Identity
	devices  *pairing.DeviceStore
	tokens   *tokens.Store
	otps     *pairing.OTPs
	pairs    *pairings
	agent    *acp.Agent
	gateway  *gateway.Gateway
	link     *link.Server
	broker   *broker.Broker
	audit    *audit.Store     // metadata-only call records (audit.go)
	auditXC  auditCross       // the last cross-check of the audit chain with a browser (auditwitness.go)
	cfg      *configWatch     // config.json as in force, and its last reload (reload.go)
	files    *files.Sandbox   // the download sandbox (files.go)
	xfers    *files.Transfers // chunked transfers into it (filetransfer.go)

	mcp       *mcpserver.Server // the one MCP server: the MCP socket and /mcp
	mcpHTTP   http.Handler      // /mcp
	mcpSess   *mcpSessions      // /mcp sessions by token (sessions.go)
	mcpCtx    context.Context   // ends at shutdown; closes /mcp streams
	listen    string            // actual bound address
	scheme    string            // ws or wss
	startedAt time.Time
	stop      context.CancelFunc
}

// Run serves until ctx is done (or a control `shutdown`). It returns
// *AlreadyRunningError if another daemon holds the state directory.
func Run(ctx context.Context, opts Options) error {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// SECURITY I-50: whatever a peer sends, no logged value exceeds logx.MaxField.
	log = slog.New(logx.Bounded(log.Handler()))
	if err := opts.Config.Validate(); err != nil {
		return err
	}
	if err := opts.Paths.Ensure(); err != nil {
		return err
	}
	lock, err := acquireLock(opts.Paths.LockFile(), opts.Paths.StateDir)
	if err != nil {
		return err
	}
	defer lock.release()
	// SECURITY I-53: a write cut short by a crash leaves at most a temporary
	// file; with the lock held, no write of ours is in progress.
	for _, dir := range []string{opts.Paths.StateDir, opts.Paths.ConfigDir} {
		if n, err := atomicfile.RemoveStale(dir); err != nil {
			log.Warn("could not remove stale temporary files", "dir", dir, "err", err)
		} else if n > 0 {
			log.Info("removed stale temporary files", "dir", dir, "count", n)
		}
	}

	d := &daemon{opts: opts, log: log, startedAt: time.Now(), scheme: "ws",
		otps: pairing.NewOTPs(pairing.DefaultOTPTTL, time.Now)}
	if d.identity, err = pairing.LoadOrCreateIdentity(opts.Paths.DaemonKey()); err != nil {
		return err
	}
	if d.devices, err = pairing.OpenDeviceStore(opts.Paths.Devices()); err != nil {
		return err
	}
	if d.tokens, err = tokens.Open(opts.Paths.Tokens()); err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(opts.Config.Listen)
	loopback := config.IsLoopbackHost(host)
	// SECURITY I-1: off loopback only with TLS (Validate) and a token.
	if !loopback && d.tokens.Len() == 0 {
		return ErrNonLoopbackNeedsToken
	}

	d.pairs = newPairings(d.devices, d.otps, time.Now)
	if opts.pairTimeout > 0 {
		d.pairs.timeout = opts.pairTimeout
	}
	d.agent = acp.New(opts.Version)
	d.broker = broker.New(log)
	d.files = files.New(opts.Config.FilesRoot)
	d.xfers = files.NewTransfers(d.files)
	d.broker.SetLimits(opts.Config.Broker)
	d.broker.SetToolGroups(opts.Config.Broker.ToolGroups)
	d.broker.SetLabelLimits(opts.sessions.labelIdle, opts.sessions.maxLabels)
	d.broker.SetResolver(d.resolveBrowser)
	d.broker.SetManaged(func(id string) bool { return managedBrowser(opts.Paths.StateDir, id) })
	d.initNamed()
	if err := d.seedCatalogue(); err != nil {
		return err
	}
	d.mcpSess = newMCPSessions(opts.sessions.withDefaults())
	if err := d.openAudit(); err != nil {
		return err
	}
	defer d.audit.Close()
	d.agent.OnSession = d.onSession
	d.agent.LoadSession = true
	d.gateway = d.newGateway()
	d.initConfigWatch()
	mcpCtx, mcpStop := context.WithCancel(context.Background())
	defer mcpStop()
	d.mcpCtx = mcpCtx
	d.link = link.NewServer(link.Options{
		Identity: d.identity, Devices: d.devices, Tokens: d.tokens, Pairer: d.pairs, Handler: linkHandler{d.agent, d.gateway, d},
		LoopbackBind: loopback, ExtensionIDs: opts.Config.ExtensionIDs, TokenOrigins: opts.Config.TokenOrigins,
		Logger: log, Verbose: log.Enabled(ctx, slog.LevelDebug),
		TicketFile: opts.Paths.Tickets(), // SECURITY I-57: the extension's reserved way in survives a restart
	})

	tcpLn, err := net.Listen("tcp", opts.Config.Listen)
	if err != nil {
		return fmt.Errorf("daemon: listen on %s: %w (is another program using the port? try --listen 127.0.0.1:0)", opts.Config.Listen, err)
	}
	// SECURITY I-49: connections are budgeted below the fd limit.
	tcpMax, ctlMax := connBudgets()
	if opts.maxConns > 0 {
		tcpMax = opts.maxConns
	}
	if opts.maxCtlConns > 0 {
		ctlMax = opts.maxCtlConns
	}
	perSource := tcpMax
	if !loopback {
		perSource = max(1, tcpMax*3/4)
	}
	budget := newBudgetListener(tcpLn, tcpMax, perSource)
	var ln net.Listener = budget
	if opts.Config.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(opts.Config.TLSCert, opts.Config.TLSKey)
		if err != nil {
			ln.Close()
			return fmt.Errorf("daemon: load TLS key pair: %w", err)
		}
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
		d.scheme = "wss"
	}
	d.listen = ln.Addr().String()
	d.mcp = d.newMCPServer(ctlMax)
	d.mcpSess.onEnd = d.mcp.EndSession
	d.mcpHTTP = d.mcp.HTTP()

	ctlLn, err := control.Listen(opts.Paths.Socket())
	if err != nil {
		ln.Close()
		return err
	}
	relayLn, err := control.Listen(opts.Paths.MCPSocket()) // owner-only, as the control socket (SECURITY I-54)
	if err != nil {
		ln.Close()
		ctlLn.Close()
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d.stop = cancel

	lim := opts.httpLimits.withDefaults()
	// SECURITY I-49: every HTTP connection has a header, body, write and idle
	// deadline; WebSockets get theirs from the link once upgraded.
	httpSrv := &http.Server{Handler: guard(loopback, lim, d.routes()), ReadHeaderTimeout: lim.header,
		IdleTimeout: lim.idle, MaxHeaderBytes: maxHeaderBytes,
		ConnState: budget.connState, ConnContext: connContext,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	httpSrv.RegisterOnShutdown(mcpStop)
	ctl := control.NewServer(d.handleControl, log)
	ctl.SetLimits(control.Limits{MaxConns: ctlMax})

	var wg sync.WaitGroup
	errc := make(chan error, 3)
	wg.Add(3)
	go func() {
		defer wg.Done()
		if err := httpSrv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("daemon: http: %w", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := ctl.Serve(ctx, ctlLn); err != nil {
			errc <- fmt.Errorf("daemon: control: %w", err)
		}
	}()
	go func() {
		defer wg.Done()
		if err := d.mcp.ServeRelays(ctx, relayLn); err != nil {
			errc <- fmt.Errorf("daemon: mcp socket: %w", err)
		}
	}()
	go reclaimMemory(ctx, reclaimEvery)
	d.claimDiscovery(false)
	go d.watchConfig(ctx, opts.configPoll)
	log.Info("torii daemon serving", "listen", d.listen, "daemonId", d.identity.ID(), "version", opts.Version)
	if opts.Ready != nil {
		select {
		case opts.Ready <- d.listen:
		case <-ctx.Done():
		}
	}

	var runErr error
	select {
	case <-ctx.Done():
	case runErr = <-errc:
		cancel()
	}

	// Graceful shutdown: pending tool calls fail with
	// extension_not_connected (queued at once, in-flight cancelled in the
	// extension first), tell every peer we are going away (1001), stop
	// accepting, then let the control socket answer in-flight calls.
	d.broker.Close()
	relayLn.Close()
	d.link.Hub().CloseAll(websocket.StatusGoingAway, "daemon shutting down")
	d.gateway.Close() // kills the agents; their prompts end at once
	sctx, scancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer scancel()
	_ = httpSrv.Shutdown(sctx)
	waitTimeout(d.link.Hub().Wait, shutdownGrace)
	ctl.Close()
	// After the broker closed: relays' in-flight calls were answered.
	d.mcp.CloseRelays()
	wg.Wait()
	_ = os.Remove(opts.Paths.Socket())
	_ = os.Remove(opts.Paths.MCPSocket())
	log.Info("torii daemon stopped")
	return runErr
}

func waitTimeout(f func(), d time.Duration) {
	done := make(chan struct{})
	go func() { f(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
	}
}

// wsURL is the link URL peers dial.
func (d *daemon) wsURL() string { return d.scheme + "://" + d.listen + "/acp" }
