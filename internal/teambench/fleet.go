package teambench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/wire"
)

// serverID is the tool server the fake extension declares in session/new,
// as the real one does.
const serverID = "5e0c7a1d-3b2f-4c8e-9a6d-1f2e3d4c5b6a"

// answer is what a fake device puts in its result's text: its own device
// ID, so the agent can tell a call that reached another device.
type answer struct {
	Device string `json:"device"`
	Tool   string `json:"tool"`
}

// catalogue is the built-in tool list every fake device publishes, encoded
// once and shared.
func catalogue() (json.RawMessage, error) {
	tools, err := extension.Catalogue()
	if err != nil {
		return nil, err
	}
	if len(tools) == 0 {
		return nil, fmt.Errorf("the binary has no embedded catalogue: build the extension first (make torii)")
	}
	return json.Marshal(map[string]any{"tools": tools})
}

// device is one simulated browser: a real P-256 key, paired once, then
// authenticated by a signed challenge on every connection, answering the
// gateway's torii/tools/call as the extension's worker does.
type device struct {
	key   *linktest.Device
	urls  []string // the /acp endpoints it may land on; urls[home] first
	home  atomic.Int32
	tools json.RawMessage

	mu    sync.Mutex
	c     *linktest.Client
	ready chan struct{} // closed when the gateway first listed its tools
	once  sync.Once

	calls      atomic.Int64
	reconnects atomic.Int64
}

func newDevice(name string, urls []string, home int, tools json.RawMessage) (*device, error) {
	k, err := linktest.NewDevice(name)
	if err != nil {
		return nil, err
	}
	d := &device{key: k, urls: urls, tools: tools, ready: make(chan struct{})}
	d.home.Store(int32(home))
	return d, nil
}

// ID is the device ID pairing gave it.
func (d *device) ID() string { return d.key.ID }

// Replica is the index of the endpoint it is connected to now.
func (d *device) Replica() int { return int(d.home.Load()) }

func (d *device) handle(_ context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case browserlink.MethodList:
		d.once.Do(func() { close(d.ready) })
		return d.tools, nil
	case browserlink.MethodCall:
		var p browserlink.CallParams
		if err := json.Unmarshal(params, &p); err != nil || p.CallID == "" {
			return nil, wire.Errorf(wire.CodeInvalidParams, "%s: callId is required", method)
		}
		d.calls.Add(1)
		text, _ := json.Marshal(answer{Device: d.key.ID, Tool: p.Tool})
		return map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}}, nil
	case browserlink.MethodCancel, browserlink.MethodSessionEnded:
		return nil, nil
	}
	// ACP notifications (session updates) need no answer; a request the
	// worker does not know gets the usual refusal.
	return nil, wire.Errorf(wire.CodeMethodNotFound, "no method %s", method)
}

func (d *device) opts() *linktest.Options { return &linktest.Options{Handler: d.handle} }

// pair pairs the device with a one-time secret (a managed launch) on its
// home endpoint and keeps the authenticated connection.
func (d *device) pair(ctx context.Context, otp string) error {
	c, err := linktest.PairAndConnect(ctx, d.urls[d.Replica()], d.key, linktest.PairOptions{OTP: otp}, d.opts())
	if err != nil {
		return err
	}
	return d.open(ctx, c)
}

// open declares the tool server on an authenticated connection, as the
// extension does after torii/auth. A gateway that attaches the tools on
// auth alone may refuse session/new; the tools list is what counts.
func (d *device) open(ctx context.Context, c *linktest.Client) error {
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "torii-team-bench", "version": "0"}}, nil); err == nil {
		_ = c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{
			map[string]any{"type": "acp", "name": "torii", "id": serverID}}}, nil)
	}
	d.mu.Lock()
	d.c = c
	d.mu.Unlock()
	return nil
}

// keep reconnects the device whenever its link ends, until ctx ends: the
// same endpoint first, then the next, with the extension's first backoff
// step and jitter, signing a fresh challenge each time.
func (d *device) keep(ctx context.Context) {
	for {
		d.mu.Lock()
		c := d.c
		d.mu.Unlock()
		select {
		case <-ctx.Done():
			c.Close()
			return
		case <-c.Done():
		}
		for try := 0; ctx.Err() == nil; try++ {
			i := (d.Replica() + try) % len(d.urls)
			cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			nc, err := linktest.Connect(cctx, d.urls[i], d.key, d.opts())
			if err == nil {
				err = d.open(cctx, nc)
			}
			cancel()
			if err == nil {
				d.home.Store(int32(i))
				d.reconnects.Add(1)
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(250*time.Millisecond + rand.N(250*time.Millisecond)):
			}
		}
	}
}

// waitReady waits until the gateway has listed the device's tools.
func (d *device) waitReady(ctx context.Context) error {
	select {
	case <-d.ready:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("device %s: the gateway never listed its tools: %w", d.key.ID, ctx.Err())
	}
}

// each runs f for every device index with n workers, stopping at the
// first error.
func each(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	var next atomic.Int64
	errs := make(chan error, workers)
	for range workers {
		go func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					errs <- ctx.Err()
					return
				}
				if err := f(ctx, i); err != nil {
					errs <- fmt.Errorf("device %d: %w", i, err)
					return
				}
			}
		}()
	}
	var first error
	for range workers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// pairOTP pairs d with the one-time secret otp gives, within 30 s.
func (d *device) pairOTP(ctx context.Context, otp func(ctx context.Context) (string, error)) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := otp(ctx)
	if err != nil {
		return err
	}
	return d.pair(ctx, s)
}
