package control

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/fuzzseed"
	"github.com/torii-browser/torii/internal/wire"
)

// FuzzControlStream feeds a byte stream to one control connection, then a
// sentinel request. Every line the daemon writes back must be a JSON-RPC
// response, the sentinel must be answered (or the connection dropped for a
// line over MaxLine), and nothing may hang or panic.
func FuzzControlStream(f *testing.F) {
	for _, fr := range fuzzseed.Frames(f) {
		f.Add(append(fr, '\n'))
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"status"}` + "\n" + `{"jsonrpc":"2.0","method":"tools.call","params":{"name":"x"}}` + "\n"))
	f.Add([]byte("\n\n[1,2]\nnull\n{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"x\"}\n"))
	fuzzseed.Corpus(f, "FuzzControlStream")
	f.Fuzz(func(t *testing.T, data []byte) {
		s := NewServer(func(ctx context.Context, method string, params json.RawMessage) (any, error) {
			if method == "echo" {
				return params, nil
			}
			return nil, wire.Errorf(wire.CodeMethodNotFound, "no %q", method)
		}, nil)
		s.SetLimits(Limits{MaxInFlight: 4, LineTimeout: 2 * time.Second})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cli, srv := net.Pipe()
		s.mu.Lock()
		s.conns[srv] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(ctx, srv)
		defer func() { cli.Close(); s.wg.Wait() }()
		go func() {
			_, _ = cli.Write(data)
			_, _ = cli.Write([]byte("\n" + `{"jsonrpc":"2.0","id":"sentinel","method":"echo","params":{}}` + "\n"))
		}()
		r := bufio.NewReaderSize(cli, 1<<20)
		cli.SetReadDeadline(time.Now().Add(8 * time.Second))
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					t.Fatal("no answer to the sentinel")
				}
				return // dropped: only for a line over MaxLine
			}
			m, e := wire.Decode(line)
			if e != nil || !m.IsResponse() {
				t.Fatalf("not a response: %q", line)
			}
			if string(m.ID) == `"sentinel"` {
				return
			}
		}
	})
}
