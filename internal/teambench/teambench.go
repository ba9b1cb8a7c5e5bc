// Package teambench is `make bench-team`: team mode under load, measured
// from outside. It starts PostgreSQL, nats-server and three `torii serve
// --team` replicas on loopback, pairs simulated browsers with them (a Go
// fake extension speaking the real link protocol: a P-256 key, pairing by a
// one-time secret from the user API, a signed challenge on every
// connection), and runs agents (go-sdk MCP clients on /mcp with user
// tokens, spread over the replicas) calling tools on their user's browsers.
// In the same run, interleaved call by call, the same fake browsers and
// agents drive a one-machine `torii serve`, so the latency routing adds is
// measured on the same machine at the same moment. Every answer names the
// device that produced it, so a misrouted call is seen. It prints a
// markdown table (and writes it to --out) and is not part of `make test`.
package teambench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/torii-browser/torii/internal/wire"
)

type config struct {
	bin                        string
	browsers, agents, replicas int
	localBrowsers              int
	duration, interval         time.Duration
	out                        string
	noTeam, noLocal, sqlite    bool
}

// Main runs the bench with the command line's flags and returns the exit code.
func Main() int {
	var c config
	fs := flag.NewFlagSet("torii-team-bench", flag.ContinueOnError)
	fs.StringVar(&c.bin, "bin", "bin/torii", "the torii binary to run")
	fs.IntVar(&c.browsers, "browsers", 1000, "simulated browsers paired with the replicas")
	fs.IntVar(&c.agents, "agents", 200, "agents (one user each; the browsers are shared out among them)")
	fs.IntVar(&c.replicas, "replicas", 3, "torii serve --team replicas")
	fs.IntVar(&c.localBrowsers, "local-browsers", 5, "simulated browsers paired with the one-machine daemon (it pairs at most 5 a minute)")
	fs.DurationVar(&c.duration, "duration", 60*time.Second, "how long the agents call")
	fs.DurationVar(&c.interval, "interval", time.Second, "each agent's mean pause between calls (0: back to back)")
	fs.StringVar(&c.out, "out", "", "also write the report (markdown) to this file")
	fs.BoolVar(&c.noTeam, "no-team", false, "measure only the one-machine daemon")
	fs.BoolVar(&c.sqlite, "sqlite", false, "team store on one SQLite file instead of PostgreSQL (the store is meant for one replica then)")
	fs.BoolVar(&c.noLocal, "no-local", false, "measure only team mode")
	quick := fs.Bool("quick", false, "50 browsers, 10 agents, 10 s")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if *quick {
		c.browsers, c.agents, c.duration = 50, 10, 10*time.Second
	}
	if c.browsers < 1 || c.agents < 1 || c.replicas < 1 || c.localBrowsers < 1 || c.noTeam && c.noLocal {
		fmt.Fprintln(os.Stderr, "torii-team-bench: browsers, agents, replicas and local-browsers must be at least 1, and one path measured")
		return 2
	}
	c.localBrowsers = min(c.localBrowsers, c.browsers)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rep, err := run(ctx, c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "torii-team-bench:", err)
		return 1
	}
	fmt.Print(rep)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(rep), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "torii-team-bench:", err)
			return 1
		}
	}
	return 0
}

// side is one path under test: its processes, browsers and numbers.
type side struct {
	pids      []int
	devs      []*device
	rss0      int64 // the processes' RSS before any browser connected, KiB
	rss1      int64 // with every browser connected, before the agents
	rssEnd    int64
	rec       *recorder
	warm      *recorder // each target's first call, not timed
	connected int
	pairing   time.Duration // pairing every browser took
	pairWaits int           // refusals by the pairing budget, waited out
}

func (s *side) rss() int64 {
	var t int64
	for _, p := range s.pids {
		t += rssKB(p)
	}
	return t
}

func run(ctx context.Context, c config) (string, error) {
	dir, err := os.MkdirTemp("", "torii-team-bench")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	// PostgreSQL, run as nobody when the bench is root, must reach its folder inside.
	if err := os.Chmod(dir, 0o711); err != nil {
		return "", err
	}
	tools, err := catalogue()
	if err != nil {
		return "", err
	}
	rt := transport(c.agents * 2)
	team, local := &side{rec: newRecorder(), warm: newRecorder()}, &side{rec: newRecorder(), warm: newRecorder()}
	agents := make([]*agent, c.agents)
	for i := range agents {
		agents[i] = &agent{}
	}
	dctx, stopDevices := context.WithCancel(context.Background())
	var keepers sync.WaitGroup
	defer func() { stopDevices(); keepers.Wait() }()
	keep := func(devs []*device) {
		for _, d := range devs {
			keepers.Add(1)
			go func() { defer keepers.Done(); d.keep(dctx) }()
		}
	}

	if !c.noLocal {
		l, err := startLocal(ctx, c.bin, dir+"/local")
		if err != nil {
			return "", err
		}
		defer l.stop()
		local.pids = []int{l.pid()}
		local.rss0 = local.rss()
		for i := range c.localBrowsers {
			d, err := newDevice(fmt.Sprintf("bench %d", i), []string{l.acpURL()}, 0, tools)
			if err != nil {
				return "", err
			}
			local.devs = append(local.devs, d)
		}
		t0 := time.Now()
		if err := each(ctx, len(local.devs), 4, func(ctx context.Context, i int) error { return local.devs[i].pairOTP(ctx, l.otp) }); err != nil {
			return "", fmt.Errorf("one machine: %w", err)
		}
		keep(local.devs)
		if err := waitAll(ctx, local.devs); err != nil {
			return "", fmt.Errorf("one machine: %w", err)
		}
		fmt.Fprintf(os.Stderr, "one machine: %d browsers paired and serving in %s\n", len(local.devs), time.Since(t0).Round(time.Millisecond))
		local.rss1 = local.rss()
		local.pairing = time.Since(t0)
		// Its per-token caps allow 64 sessions a token: one token per 50 agents.
		var tok string
		for i, a := range agents {
			if i%50 == 0 {
				if tok, err = l.token(ctx, fmt.Sprintf("bench %d", i/50)); err != nil {
					return "", err
				}
			}
			d := local.devs[i%len(local.devs)]
			if a.local, err = connectTarget(ctx, l.mcpURL(), tok, rt, d, 0); err != nil {
				return "", fmt.Errorf("one machine: %w", err)
			}
		}
	}

	if !c.noTeam {
		t0 := time.Now()
		cl, err := startCluster(ctx, c.bin, dir+"/team", c.replicas, c.sqlite)
		if err != nil {
			return "", fmt.Errorf("team: %w", err)
		}
		defer cl.stop()
		fmt.Fprintf(os.Stderr, "team: store, nats and %d replicas ready in %s\n", c.replicas, time.Since(t0).Round(time.Millisecond))
		for _, r := range cl.replicas {
			team.pids = append(team.pids, r.pid())
		}
		team.rss0 = team.rss()
		users, tokens := make([]string, c.agents), make([]string, c.agents)
		for i := range tokens {
			if users[i], tokens[i], err = cl.user(ctx, fmt.Sprintf("bench-%04d", i)); err != nil {
				return "", fmt.Errorf("team: %w", err)
			}
		}
		urls := make([]string, c.replicas)
		for i, r := range cl.replicas {
			urls[i] = r.acpURL()
		}
		// Browser j belongs to user j mod agents and lands on replica j mod replicas.
		for j := range c.browsers {
			d, err := newDevice(fmt.Sprintf("bench %d", j), urls, j%c.replicas, tools)
			if err != nil {
				return "", err
			}
			team.devs = append(team.devs, d)
		}
		t0 = time.Now()
		// A replica pairs at most 5 browsers a minute (SECURITY I-12's budget,
		// one-time secrets included), and an attempt it refuses keeps its window
		// full: after a refusal nobody tries that replica until the minute is over.
		var waited atomic.Int64
		gate := newPairGate(c.replicas)
		if err := each(ctx, len(team.devs), 3*c.replicas, func(ctx context.Context, j int) error {
			d := team.devs[j]
			for {
				if err := gate.wait(ctx, d.Replica()); err != nil {
					return err
				}
				err := d.pairOTP(ctx, func(ctx context.Context) (string, error) { return cl.otp(ctx, j, tokens[j%c.agents]) })
				if !rateLimited(err) {
					return err
				}
				waited.Add(1)
				gate.refused(d.Replica())
			}
		}); err != nil {
			return "", fmt.Errorf("team: pairing %w", err)
		}
		team.pairing, team.pairWaits = time.Since(t0), int(waited.Load())
		fmt.Fprintf(os.Stderr, "team: %d browsers paired and serving in %s (%d refusals by the pairing budget waited out)\n",
			len(team.devs), team.pairing.Round(time.Millisecond), team.pairWaits)
		team.rss1 = team.rss()
		// Agent i is user i's, on replica i mod replicas, as a load balancer
		// would spread them; it has a session per browser of its user.
		if err := each(ctx, c.agents, 8, func(ctx context.Context, i int) error {
			r := i % c.replicas
			for j := i; j < len(team.devs); j += c.agents {
				t, err := connectTarget(ctx, cl.replicas[r].mcpURL(), tokens[i], rt, team.devs[j], r)
				if err != nil {
					return err
				}
				agents[i].team = append(agents[i].team, t)
			}
			return nil
		}); err != nil {
			return "", fmt.Errorf("team: agent %w", err)
		}
	}
	defer func() {
		for _, a := range agents {
			a.close()
		}
	}()

	// Warm-up: every session calls once, so connection setup is not timed.
	var wg sync.WaitGroup
	for _, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, t := range a.team {
				lat, o, why := t.call(ctx)
				team.warm.add(lat, o, why, false)
			}
			if a.local != nil {
				lat, o, why := a.local.call(ctx)
				local.warm.add(lat, o, why, false)
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return "", ctx.Err()
	}

	fmt.Fprintf(os.Stderr, "calling for %s …\n", c.duration)
	rctx, cancel := context.WithTimeout(ctx, c.duration)
	defer cancel()
	start := time.Now()
	for _, a := range agents {
		wg.Add(1)
		go func() { defer wg.Done(); a.run(rctx, c.interval, team.rec, local.rec) }()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if errors.Is(ctx.Err(), context.Canceled) {
		return "", ctx.Err()
	}
	for _, s := range []*side{team, local} {
		s.rssEnd = s.rss()
		s.connected = connectedCount(s.devs)
	}
	return report(c, team, local, elapsed), nil
}

// waitAll waits until the gateway has listed every device's tools.
func waitAll(ctx context.Context, devs []*device) error {
	wctx, cancel := context.WithTimeout(ctx, 120*time.Second)
	defer cancel()
	for _, d := range devs {
		if err := d.waitReady(wctx); err != nil {
			return err
		}
	}
	return nil
}

func connectedCount(devs []*device) int {
	n := 0
	for _, d := range devs {
		d.mu.Lock()
		c := d.c
		d.mu.Unlock()
		if c == nil {
			continue
		}
		select {
		case <-c.Done():
		default:
			n++
		}
	}
	return n
}

// pairGate holds back pairing on a replica whose budget refused one, until
// its minute has passed.
type pairGate struct {
	mu    sync.Mutex
	until []time.Time
}

func newPairGate(n int) *pairGate { return &pairGate{until: make([]time.Time, n)} }

func (g *pairGate) wait(ctx context.Context, r int) error {
	for {
		g.mu.Lock()
		d := time.Until(g.until[r])
		g.mu.Unlock()
		if d <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
}

func (g *pairGate) refused(r int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t := time.Now().Add(61 * time.Second); t.After(g.until[r]) {
		g.until[r] = t
	}
}

// rateLimited reports the pairing budget's refusal.
func rateLimited(err error) bool {
	var we *wire.Error
	return errors.As(err, &we) && we.Code == wire.CodeRateLimited
}

func numCPU() int { return runtime.NumCPU() }
