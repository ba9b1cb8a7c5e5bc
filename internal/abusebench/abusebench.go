// Package abusebench is `make bench-abuse`: it starts bin/torii serve in a
// private state directory, pairs a fake extension (linktest, with an MCP
// tool server from mcpbridgetest), and runs one flood after another against
// the daemon while a legitimate client keeps calling a tool through the
// extension. For each flood it prints that client's p50/p99, whether the
// extension stayed connected (and how long a reconnect took), and the
// daemon's open fds and RSS before and after. It is not part of `make test`.
package abusebench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/mcpbridge/mcpbridgetest"
)

const serverID = "7d1c1f0e-5a55-4f0b-9c8e-3b7f1a2e4d10"

type bench struct {
	bin, dir, addr string
	cmd            *exec.Cmd
	ctl            *control.Client
	token          string
	ext            atomic.Pointer[linktest.Client]
	provider       *mcpbridgetest.Provider
	dur            time.Duration
}

// Main runs the benchmark and returns the process exit code.
func Main() int {
	secs, _ := strconv.Atoi(os.Getenv("ABUSE_SECONDS"))
	if secs <= 0 {
		secs = 10
	}
	bin := os.Getenv("TORII_BIN")
	if bin == "" {
		bin = "bin/torii"
	}
	b := &bench{bin: bin, dur: time.Duration(secs) * time.Second}
	if err := b.run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench-abuse:", err)
		return 1
	}
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
	sock := filepath.Join(dir, "s", "torii.sock")
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b.ctl, err = control.Dial(ctx, sock); err == nil {
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
	b.provider = mcpbridgetest.New(serverID, []map[string]any{{"name": "echo", "description": "Echo.",
		"inputSchema": mcpbridgetest.Schema(nil), "annotations": map[string]any{"readOnlyHint": true}}},
		func(ctx context.Context, name string, args json.RawMessage) (any, error) {
			return mcpbridgetest.TextResult("ok"), nil
		})
	if _, err := b.connectExtension(ctx); err != nil {
		return err
	}
	if err := b.waitTools(ctx); err != nil {
		return err
	}
	fmt.Printf("torii bench-abuse: daemon pid %d, %s per flood, machine load %s\n\n", b.cmd.Process.Pid, b.dur, loadavg())
	fmt.Println("| flood | flood ops | legit calls | p50 ms | p99 ms | max ms | extension | reconnect max ms | fds before → after | RSS MB before → after (+10 s) |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	idleRSS := rssMB(b.cmd.Process.Pid)
	floods := []struct {
		name string
		run  func(ctx context.Context) int64
	}{
		{"none (baseline)", func(ctx context.Context) int64 { <-ctx.Done(); return 0 }},
		{"idle keep-alive TCP (held)", b.floodIdleTCP},
		{"connect churn (open+close)", b.floodChurn},
		{"unauthenticated WS, forged Origin", b.floodUnauthWS},
		{"request bodies that never finish", b.floodSlowBodies},
		{"/mcp sessions never closed", b.floodMCPSessions},
		{"control labels (new session each)", b.floodLabels},
		{"WS frames trickled 1 byte / 50 ms", b.floodTrickle},
	}
	for _, f := range floods {
		if err := b.one(ctx, f.name, f.run); err != nil {
			return err
		}
		select {
		case err := <-exited:
			return fmt.Errorf("the daemon exited during %q: %v\n%s", f.name, err, stderr.String())
		default:
		}
	}
	fmt.Printf("\nidle RSS %.1f MB; final RSS %.1f MB (%+.0f%%)\n", idleRSS, rssMB(b.cmd.Process.Pid),
		100*(rssMB(b.cmd.Process.Pid)-idleRSS)/idleRSS)
	return nil
}

// one runs a flood for b.dur while the legitimate client calls echo
// through the extension and the extension is kept connected.
func (b *bench) one(ctx context.Context, name string, flood func(context.Context) int64) error {
	pid := b.cmd.Process.Pid
	fds0, rss0 := fdCount(pid), rssMB(pid)
	fctx, stop := context.WithTimeout(ctx, b.dur)
	defer stop()
	var ops int64
	var fwg sync.WaitGroup
	fwg.Add(1)
	go func() { defer fwg.Done(); ops = flood(fctx) }()

	var lat []time.Duration
	var drops, reconnectMax atomic.Int64
	var kwg sync.WaitGroup
	kwg.Add(1)
	go func() { // keep the extension connected, as its service worker does
		defer kwg.Done()
		for fctx.Err() == nil {
			c := b.ext.Load()
			select {
			case <-c.Done():
				drops.Add(1)
				start := time.Now()
				for fctx.Err() == nil {
					if _, err := b.connectExtension(ctx); err == nil {
						break
					}
					time.Sleep(100 * time.Millisecond)
				}
				if ms := time.Since(start).Milliseconds(); ms > reconnectMax.Load() {
					reconnectMax.Store(ms)
				}
			case <-fctx.Done():
			}
		}
	}()
	failed := 0
	for fctx.Err() == nil {
		cctx, cc := context.WithTimeout(ctx, 10*time.Second)
		start := time.Now()
		var res struct {
			IsError bool `json:"isError"`
		}
		err := b.ctl.Call(cctx, "tools.call", map[string]any{"name": "echo", "sessionLabel": "legit"}, &res)
		cc()
		if err != nil || res.IsError {
			failed++
		} else {
			lat = append(lat, time.Since(start))
		}
		time.Sleep(10 * time.Millisecond)
	}
	fwg.Wait()
	kwg.Wait()
	fds1 := fdCount(pid)
	time.Sleep(10 * time.Second) // let idle deadlines and the scavenger work
	rss1 := rssMB(pid)
	slices.Sort(lat)
	ext := "stayed up"
	if drops.Load() > 0 {
		ext = fmt.Sprintf("dropped %d×, back", drops.Load())
	}
	if failed > 0 {
		ext += fmt.Sprintf(" (%d calls failed)", failed)
	}
	fmt.Printf("| %s | %d | %d | %.1f | %.1f | %.1f | %s | %d | %d → %d (%d) | %.1f → %.1f |\n", name, ops, len(lat),
		ms(pct(lat, 50)), ms(pct(lat, 99)), ms(pct(lat, 100)), ext, reconnectMax.Load(), fds0, fds1, fdCount(pid), rss0, rss1)
	return nil
}

func (b *bench) connectExtension(ctx context.Context) (*linktest.Client, error) {
	var otp struct {
		OTP string `json:"otp"`
	}
	if err := b.ctl.Call(ctx, "launch.otp", nil, &otp); err != nil {
		return nil, err
	}
	dev, err := linktest.NewDevice("bench")
	if err != nil {
		return nil, err
	}
	c, err := linktest.PairAndConnect(ctx, "ws://"+b.addr+"/acp", dev, linktest.PairOptions{OTP: otp.OTP},
		&linktest.Options{Handler: b.provider.Handle})
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

// The floods. Each runs until ctx ends and returns how many operations it did.

func (b *bench) floodIdleTCP(ctx context.Context) int64 {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var n int64
	for ctx.Err() == nil && len(conns) < 12000 {
		c, err := net.DialTimeout("tcp", b.addr, time.Second)
		if err != nil {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if n%2 == 0 { // half send a request and stay as keep-alive, half send nothing
			fmt.Fprintf(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		}
		conns = append(conns, c)
		n++
	}
	<-ctx.Done()
	return n
}

func (b *bench) parallel(ctx context.Context, workers int, op func() bool) int64 {
	var n atomic.Int64
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if op() {
					n.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return n.Load()
}

func (b *bench) floodChurn(ctx context.Context) int64 {
	return b.parallel(ctx, 8, func() bool {
		c, err := net.Dial("tcp", b.addr)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

func (b *bench) floodUnauthWS(ctx context.Context) int64 {
	var mu sync.Mutex
	var held []*linktest.Client
	defer func() {
		for _, c := range held {
			go c.Close()
		}
	}()
	return b.parallel(ctx, 4, func() bool {
		c, err := linktest.Dial(ctx, "ws://"+b.addr+"/acp", nil)
		if err != nil {
			return false
		}
		mu.Lock()
		held = append(held, c)
		mu.Unlock()
		return true
	})
}

func (b *bench) floodSlowBodies(ctx context.Context) int64 {
	return b.parallel(ctx, 50, func() bool {
		c, err := net.Dial("tcp", b.addr)
		if err != nil {
			return false
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":", b.token)
		c.SetReadDeadline(time.Now().Add(time.Until(deadlineOf(ctx))))
		buf := make([]byte, 1024)
		for {
			if _, err := c.Read(buf); err != nil {
				return true
			}
		}
	})
}

func (b *bench) floodMCPSessions(ctx context.Context) int64 {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"leak","version":"0"}}}`)
	hc := &http.Client{Timeout: 5 * time.Second}
	return b.parallel(ctx, 4, func() bool {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+b.addr+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+b.token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
}

func (b *bench) floodLabels(ctx context.Context) int64 {
	var i atomic.Int64
	return b.parallel(ctx, 4, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		label := fmt.Sprintf("flood-%d", i.Add(1))
		return b.ctl.Call(cctx, "tools.call", map[string]any{"name": "echo", "sessionLabel": label}, nil) == nil
	})
}

func (b *bench) floodTrickle(ctx context.Context) int64 {
	return b.parallel(ctx, 100, func() bool {
		c, err := linktest.Dial(ctx, "ws://"+b.addr+"/acp", &linktest.Options{NoOrigin: true,
			Subprotocols: []string{"openab.bearer." + b.token, "acp.v1"}})
		if err != nil {
			time.Sleep(50 * time.Millisecond)
			return false
		}
		defer c.WS.CloseNow()
		w, err := c.WS.Writer(ctx, 1) // a text frame that never ends
		if err != nil {
			return false
		}
		for ctx.Err() == nil {
			if _, err := w.Write([]byte("{")); err != nil {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		return true
	})
}

func deadlineOf(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Now().Add(time.Minute)
	}
	return d
}

func pct(s []time.Duration, p int) time.Duration {
	if len(s) == 0 {
		return 0
	}
	i := (len(s) - 1) * p / 100
	return s[i]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func fdCount(pid int) int {
	e, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(e)
}

func rssMB(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return -1
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.b.Len() > 1<<20 {
		return len(p), nil
	}
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
