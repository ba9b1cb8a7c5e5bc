package abusebench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/mcpserver"
)

// flooder is what a flood needs of the daemon: it runs in a process of its
// own, so the legitimate client's figures are not its goroutines' queueing.
type flooder struct {
	addr, token, sock string
}

type flood struct {
	name string
	run  func(f *flooder, ctx context.Context) int64
}

var floods = []flood{
	{"none (baseline)", func(_ *flooder, ctx context.Context) int64 { <-ctx.Done(); return 0 }},
	{"reference: 2 busy threads, no traffic", (*flooder).burn},
	{"idle keep-alive TCP (held)", (*flooder).idleTCP},
	{"connect churn (open+close)", (*flooder).churn},
	{"unauthenticated WS, forged Origin", (*flooder).unauthWS},
	{"request bodies that never finish", (*flooder).slowBodies},
	{"/mcp sessions never closed", (*flooder).mcpSessions},
	{"exec labels (new session each)", (*flooder).labels},
	{"WS frames trickled 1 byte / 50 ms", (*flooder).trickle},
}

// The floods. Each runs until ctx ends and returns how many operations it did.

// burn sends the daemon nothing and keeps two threads busy: what the
// legitimate client's latency is when only the CPU is shared.
func (f *flooder) burn(ctx context.Context) int64 {
	return parallel(ctx, 2, func() bool {
		for i := 0; i < 1e6; i++ {
			_ = i * i
		}
		return false
	})
}

func (f *flooder) idleTCP(ctx context.Context) int64 {
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	var n int64
	for ctx.Err() == nil && len(conns) < 12000 {
		c, err := net.DialTimeout("tcp", f.addr, time.Second)
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

func parallel(ctx context.Context, workers int, op func() bool) int64 {
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

func (f *flooder) churn(ctx context.Context) int64 {
	return parallel(ctx, 8, func() bool {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			return false
		}
		c.Close()
		return true
	})
}

func (f *flooder) unauthWS(ctx context.Context) int64 {
	var mu sync.Mutex
	var held []*linktest.Client
	defer func() {
		for _, c := range held {
			go c.Close()
		}
	}()
	return parallel(ctx, 4, func() bool {
		c, err := linktest.Dial(ctx, "ws://"+f.addr+"/acp", nil)
		if err != nil {
			return false
		}
		mu.Lock()
		held = append(held, c)
		mu.Unlock()
		return true
	})
}

func (f *flooder) slowBodies(ctx context.Context) int64 {
	return parallel(ctx, 50, func() bool {
		c, err := net.Dial("tcp", f.addr)
		if err != nil {
			return false
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\":", f.token)
		c.SetReadDeadline(deadlineOf(ctx))
		buf := make([]byte, 1024)
		for {
			if _, err := c.Read(buf); err != nil {
				return true
			}
		}
	})
}

func (f *flooder) mcpSessions(ctx context.Context) int64 {
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"leak","version":"0"}}}`)
	hc := &http.Client{Timeout: 5 * time.Second}
	return parallel(ctx, 4, func() bool {
		req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+f.addr+"/mcp", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+f.token)
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

func (f *flooder) labels(ctx context.Context) int64 {
	var i atomic.Int64
	mcpSock := config.Paths{StateDir: filepath.Dir(f.sock)}.MCPSocket()
	return parallel(ctx, 4, func() bool {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		// As `torii exec` calls: a connection per call, a label's shared session.
		hello := mcpserver.RelayHelloParams{SessionLabel: fmt.Sprintf("flood-%d", i.Add(1)), Shared: true}
		s, err := mcpserver.ConnectMCP(cctx, mcpSock, hello, &mcp.Implementation{Name: "flood"})
		if err != nil {
			return false
		}
		defer s.Close()
		_, err = s.CallTool(cctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{}})
		return err == nil
	})
}

func (f *flooder) trickle(ctx context.Context) int64 {
	return parallel(ctx, 100, func() bool {
		c, err := linktest.Dial(ctx, "ws://"+f.addr+"/acp", &linktest.Options{NoOrigin: true,
			Subprotocols: []string{"openab.bearer." + f.token, "acp.v1"}})
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
