// Package abusebench is `make bench-abuse`: it starts bin/torii serve in a
// private state directory, pairs a fake extension (linktest, serving its
// tools from browserlinktest), and runs one flood after another against
// the daemon while a legitimate client keeps calling a tool through the
// extension. Each flood runs in a child process of its own, so the
// legitimate client's latency is not the flood's goroutines queueing in
// front of it, and the CPU of each side is measured apart. For each flood
// it prints that client's p50/p99, how long a paired extension's reconnect
// takes during the flood, the CPU the daemon and the flooder spent, and the
// daemon's open fds and RSS before and after. It is not part of `make test`.
package abusebench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink/browserlinktest"
	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/mcpserver"
)

const serverID = "7d1c1f0e-5a55-4f0b-9c8e-3b7f1a2e4d10"

// settle is how long after a flood the daemon's fds and RSS are read again.
const settle = 10 * time.Second

type bench struct {
	bin, dir, addr, sock string
	cmd                  *exec.Cmd
	ctl                  *control.Client
	token                string
	ext                  atomic.Pointer[linktest.Client]
	probe                *linktest.Device // a second paired device whose reconnects are timed
	ticket               string           // its reconnect ticket, as the extension keeps it
	provider             *browserlinktest.Provider
	dur                  time.Duration
	idleRSS              float64 // after the baseline: what each flood's residue is measured against
	profileDir, pprof    string
}

// mcpSock is the daemon's MCP socket, beside its control socket.
func (b *bench) mcpSock() string { return config.Paths{StateDir: filepath.Dir(b.sock)}.MCPSocket() }

// Main runs the benchmark (or, in a child, one flood) and returns the
// process exit code.
func Main() int {
	secs, _ := strconv.Atoi(os.Getenv("ABUSE_SECONDS"))
	if secs <= 0 {
		secs = 10
	}
	dur := time.Duration(secs) * time.Second
	if i := os.Getenv("ABUSE_FLOOD"); i != "" {
		return runChild(i, dur)
	}
	bin := os.Getenv("TORII_BIN")
	if bin == "" {
		bin = "bin/torii"
	}
	b := &bench{bin: bin, dur: dur, profileDir: os.Getenv("ABUSE_PROFILE")}
	if err := b.run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-abuse:", err)
		return 1
	}
	return 0
}

// runChild is one flood, in its own process; it prints its op count.
func runChild(i string, dur time.Duration) int {
	n, err := strconv.Atoi(i)
	if err != nil || n < 0 || n >= len(floods) {
		fmt.Fprintln(os.Stderr, "bench-abuse: bad flood", i)
		return 2
	}
	f := &flooder{addr: os.Getenv("ABUSE_ADDR"), token: os.Getenv("ABUSE_TOKEN"), sock: os.Getenv("ABUSE_SOCK")}
	ctx, cancel := context.WithTimeout(context.Background(), dur)
	defer cancel()
	fmt.Println(floods[n].run(f, ctx))
	return 0
}

func (b *bench) run() error {
	dir, err := os.MkdirTemp("", "torii-abuse")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b.dir = dir
	b.cmd = exec.Command(b.bin, "serve", "--listen", "127.0.0.1:0")
	b.cmd.Env = append(os.Environ(), "TORII_STATE_DIR="+filepath.Join(dir, "s"), "TORII_CONFIG_DIR="+filepath.Join(dir, "c"))
	if b.profileDir != "" {
		if err := os.MkdirAll(b.profileDir, 0o755); err != nil {
			return err
		}
		b.pprof = freeLoopbackAddr()
		b.cmd.Env = append(b.cmd.Env, "TORII_PPROF="+b.pprof)
	}
	var stderr syncBuf
	b.cmd.Stderr = &stderr
	if err := b.cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- b.cmd.Wait() }()
	defer func() { _ = b.cmd.Process.Kill(); <-exited }()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.sock = filepath.Join(dir, "s", "torii.sock")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b.ctl, err = control.Dial(ctx, b.sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("daemon did not start: %s", stderr.String())
		}
	}
	var st struct {
		Listen string `json:"listen"`
	}
	if err := b.ctl.Call(ctx, "status", nil, &st); err != nil {
		return err
	}
	b.addr = st.Listen
	var tok struct {
		Token string `json:"token"`
	}
	if err := b.ctl.Call(ctx, "tokens.create", map[string]string{"label": "bench"}, &tok); err != nil {
		return err
	}
	b.token = tok.Token
	b.provider = browserlinktest.New(serverID, []map[string]any{{"name": "echo", "description": "Echo.",
		"inputSchema": browserlinktest.Schema(nil), "annotations": map[string]any{"readOnlyHint": true}}},
		func(ctx context.Context, name string, args json.RawMessage) (any, error) {
			return browserlinktest.TextResult("ok"), nil
		})
	if b.probe, err = b.pairProbe(ctx); err != nil {
		return err
	}
	if _, err := b.connectExtension(ctx); err != nil {
		return err
	}
	if err := b.waitTools(ctx); err != nil {
		return err
	}
	fmt.Printf("torii bench-abuse: daemon pid %d, %s per flood (each in its own process), %d CPUs, machine load %s\n\n",
		b.cmd.Process.Pid, b.dur, numCPU(), loadavg())
	fmt.Println("| flood | flood ops | legit calls | p50 ms | p99 ms | max ms | extension | reconnect max ms | daemon CPU ms | flooder CPU ms | daemon µs/op | fds before → end (+10 s) | RSS MB before → +10 s | its residue, % of idle | of which anon MB |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	startRSS := rssMB(b.cmd.Process.Pid)
	only := map[string]bool{} // ABUSE_FLOODS=0,3: run just these (the baseline always runs)
	for _, i := range strings.Split(os.Getenv("ABUSE_FLOODS"), ",") {
		if i = strings.TrimSpace(i); i != "" {
			only[i] = true
		}
	}
	// A second round of the same floods shows whether what they leave
	// behind accumulates or is bounded by the daemon's caps.
	rounds, _ := strconv.Atoi(os.Getenv("ABUSE_ROUNDS"))
	rounds = max(rounds, 1)
	finals := make([]float64, 0, rounds)
	for r := 0; r < rounds; r++ {
		for i, f := range floods {
			if i <= 1 && r > 0 || i > 0 && len(only) > 0 && !only[strconv.Itoa(i)] {
				continue
			}
			name := f.name
			if r > 0 {
				name = fmt.Sprintf("%s, round %d", name, r+1)
			}
			if err := b.one(ctx, i, name); err != nil {
				return err
			}
			select {
			case err := <-exited:
				return fmt.Errorf("the daemon exited during %q: %v\n%s", f.name, err, stderr.String())
			default:
			}
		}
		finals = append(finals, rssMB(b.cmd.Process.Pid))
	}
	fmt.Printf("\nRSS at start %.1f MB; idle after the baseline %.1f MB", startRSS, b.idleRSS)
	for r, f := range finals {
		fmt.Printf("; after round %d %.1f MB (%+.0f%% of idle)", r+1, f, 100*(f-b.idleRSS)/b.idleRSS)
	}
	fmt.Printf("; anon now %.1f MB; load now %s\n", anonMB(b.cmd.Process.Pid), loadavg())
	return nil
}

// one runs flood i for b.dur in a child process while the legitimate
// client calls echo through the extension, the extension is kept
// connected, and a second paired device reconnects three times.
func (b *bench) one(ctx context.Context, i int, name string) error {
	pid := b.cmd.Process.Pid
	fds0, rss0, anon0, cpu0 := fdCount(pid), rssMB(pid), anonMB(pid), cpuTime(pid)
	child := exec.CommandContext(ctx, os.Args[0])
	child.Env = append(os.Environ(), "ABUSE_FLOOD="+strconv.Itoa(i), "ABUSE_ADDR="+b.addr, "ABUSE_TOKEN="+b.token,
		"ABUSE_SOCK="+b.sock, "ABUSE_SECONDS="+strconv.Itoa(int(b.dur/time.Second)))
	var out, errOut syncBuf
	child.Stdout, child.Stderr = &out, &errOut
	start := time.Now()
	if err := child.Start(); err != nil {
		return err
	}
	childDone := make(chan error, 1)
	go func() { childDone <- child.Wait() }()
	fctx, stop := context.WithTimeout(ctx, b.dur)
	defer stop()

	var prof sync.WaitGroup
	if b.pprof != "" {
		prof.Add(1)
		go func() {
			defer prof.Done()
			secs := max(1, int(b.dur/time.Second)-1)
			b.saveProfile(fmt.Sprintf("%d-cpu.pb.gz", i), fmt.Sprintf("/debug/pprof/profile?seconds=%d", secs))
		}()
	}
	var drops, reconnectMax atomic.Int64
	var kwg sync.WaitGroup
	kwg.Add(2)
	go func() { // keep the extension connected, as its service worker does
		defer kwg.Done()
		for fctx.Err() == nil {
			c := b.ext.Load()
			select {
			case <-c.Done():
				drops.Add(1)
				for fctx.Err() == nil {
					if _, err := b.connectExtension(ctx); err == nil {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
			case <-fctx.Done():
			}
		}
	}()
	go func() { // the paired extension's reconnect, timed from dial to authenticated
		defer kwg.Done()
		for k := 1; k <= 3; k++ {
			select {
			case <-time.After(time.Until(start.Add(b.dur * time.Duration(k) / 4))):
			case <-fctx.Done():
				return
			}
			t0 := time.Now()
			for {
				rctx, rc := context.WithTimeout(ctx, 5*time.Second)
				err := b.reconnectProbe(rctx)
				rc()
				if err == nil {
					break
				}
				if time.Since(t0) > 30*time.Second {
					break
				}
				time.Sleep(250 * time.Millisecond) // the extension's first back-off step
			}
			if ms := time.Since(t0).Milliseconds(); ms > reconnectMax.Load() {
				reconnectMax.Store(ms)
			}
		}
	}()
	var lat []time.Duration
	failed := 0
	// The legitimate client is an agent behind `torii mcp`: one MCP session
	// on the MCP socket, dialled again if a flood breaks it.
	var legit *mcp.ClientSession
	for fctx.Err() == nil {
		cctx, cc := context.WithTimeout(ctx, 10*time.Second)
		t0 := time.Now()
		var res *mcp.CallToolResult
		var err error
		if legit == nil {
			legit, err = mcpserver.ConnectMCP(cctx, b.mcpSock(), mcpserver.RelayHelloParams{SessionLabel: "legit"}, &mcp.Implementation{Name: "legit"})
		}
		if err == nil {
			res, err = legit.CallTool(cctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		}
		cc()
		if err != nil || res.IsError {
			failed++
			if err != nil && legit != nil {
				legit.Close()
				legit = nil
			}
		} else {
			lat = append(lat, time.Since(t0))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if legit != nil {
		legit.Close()
	}
	kwg.Wait()
	if err := <-childDone; err != nil {
		return fmt.Errorf("flood %q: %v\n%s", name, err, errOut.String())
	}
	cpu1 := cpuTime(pid)
	fds1 := fdCount(pid)
	floodCPU := child.ProcessState.UserTime() + child.ProcessState.SystemTime()
	ops, _ := strconv.ParseInt(strings.TrimSpace(out.String()), 10, 64)
	prof.Wait()
	time.Sleep(settle) // let idle deadlines and the memory reclaimer work
	rss1, anon1 := rssMB(pid), anonMB(pid)
	if b.pprof != "" {
		b.saveProfile(fmt.Sprintf("%d-heap.pb.gz", i), "/debug/pprof/heap")
		b.saveProfile(fmt.Sprintf("%d-memstats.txt", i), "/debug/pprof/heap?debug=1")
		b.saveProfile(fmt.Sprintf("%d-goroutines.txt", i), "/debug/pprof/goroutine?debug=1")
		// The mappings show memory the Go runtime does not account for (the SQLite
		// library's own allocator, threads' stacks) beside the heap arenas.
		if m, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid)); err == nil {
			_ = os.WriteFile(filepath.Join(b.profileDir, fmt.Sprintf("%d-smaps.txt", i)), m, 0o600)
		}
	}
	slices.Sort(lat)
	ext := "stayed up"
	if drops.Load() > 0 {
		ext = fmt.Sprintf("dropped %d×, back", drops.Load())
	}
	if failed > 0 {
		ext += fmt.Sprintf(" (%d calls failed)", failed)
	}
	dcpu := cpu1 - cpu0
	perOp := "–"
	if ops > 0 {
		perOp = fmt.Sprintf("%.0f", float64(dcpu.Microseconds())/float64(ops))
	}
	if i == 0 {
		b.idleRSS = rss1
	}
	residue := "–"
	if i > 0 {
		residue = fmt.Sprintf("%+.1f", 100*(rss1-rss0)/b.idleRSS)
	}
	fmt.Printf("| %s | %d | %d | %.1f | %.1f | %.1f | %s | %d | %d | %d | %s | %d → %d (%d) | %.1f → %.1f | %s | %.1f → %.1f |\n", name, ops, len(lat),
		ms(pct(lat, 50)), ms(pct(lat, 99)), ms(pct(lat, 100)), ext, reconnectMax.Load(), dcpu.Milliseconds(),
		floodCPU.Milliseconds(), perOp, fds0, fds1, fdCount(pid), rss0, rss1, residue, anon0, anon1)
	return nil
}

func (b *bench) saveProfile(name, path string) {
	resp, err := http.Get("http://" + b.pprof + path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-abuse: profile:", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(filepath.Join(b.profileDir, name))
	if err != nil {
		return
	}
	defer f.Close()
	_, _ = io.Copy(f, resp.Body)
}

func freeLoopbackAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}

func (b *bench) pair(ctx context.Context, name string, opts *linktest.Options) (*linktest.Client, *linktest.Device, error) {
	var otp struct {
		OTP string `json:"otp"`
	}
	if err := b.ctl.Call(ctx, "launch.otp", nil, &otp); err != nil {
		return nil, nil, err
	}
	dev, err := linktest.NewDevice(name)
	if err != nil {
		return nil, nil, err
	}
	c, err := linktest.PairAndConnect(ctx, "ws://"+b.addr+"/acp", dev, linktest.PairOptions{OTP: otp.OTP}, opts)
	return c, dev, err
}

func (b *bench) pairProbe(ctx context.Context) (*linktest.Device, error) {
	c, dev, err := b.pair(ctx, "probe", nil)
	if err != nil {
		return nil, err
	}
	c.Close()
	b.probe = dev
	return dev, b.reconnectProbe(ctx)
}

// reconnectProbe is the paired extension's reconnect: dial offering the
// ticket of its last authentication, hello, auth; it keeps the new ticket.
func (b *bench) reconnectProbe(ctx context.Context) error {
	opts := &linktest.Options{}
	if b.ticket != "" {
		opts.Subprotocols = []string{link.Subprotocol, link.TicketSubprotocolPrefix + b.ticket}
	}
	c, err := linktest.Dial(ctx, "ws://"+b.addr+"/acp", opts)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.SayHello(ctx, b.probe.ID); err != nil {
		return err
	}
	res, err := c.Auth(ctx, b.probe)
	if err != nil {
		return err
	}
	b.ticket = res.Ticket
	return nil
}

func (b *bench) connectExtension(ctx context.Context) (*linktest.Client, error) {
	c, _, err := b.pair(ctx, "bench", &linktest.Options{Handler: b.provider.Handle})
	if err != nil {
		return nil, err
	}
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "bench", "version": "0"}}, nil); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{
		map[string]any{"type": "acp", "name": "torii", "id": serverID}}}, nil); err != nil {
		c.Close()
		return nil, err
	}
	b.ext.Store(c)
	return c, nil
}

func (b *bench) waitTools(ctx context.Context) error {
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		var r struct {
			ExtensionConnected bool `json:"extensionConnected"`
		}
		if err := b.ctl.Call(ctx, "tools.list", nil, &r); err == nil && r.ExtensionConnected {
			return nil
		}
	}
	return fmt.Errorf("the fake extension's tools never arrived")
}
