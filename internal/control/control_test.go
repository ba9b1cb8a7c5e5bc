package control

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/wire"
)

func socketDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "torii")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func startServer(t *testing.T, h Handler) string {
	t.Helper()
	path := filepath.Join(socketDir(t), "run", "torii.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := NewServer(h, nil)
	done := make(chan struct{})
	go func() { s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done; s.Close() })
	return path
}

func echo(ctx context.Context, method string, params json.RawMessage) (any, error) {
	switch method {
	case "echo":
		return params, nil
	case "fail":
		return nil, wire.Errorf(wire.CodeInvalidParams, "nope")
	case "boom":
		return nil, errors.New("kaput")
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, wire.Errorf(wire.CodeMethodNotFound, "unknown method %q", method)
}

func TestSocketModes(t *testing.T) {
	t.Parallel()
	path := startServer(t, echo)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 || fi.Mode()&os.ModeSocket == 0 {
		t.Fatalf("socket mode %v", fi.Mode())
	}
	di, _ := os.Stat(filepath.Dir(path))
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("dir mode %v", di.Mode())
	}
}

func TestCallRoundTripAndErrors(t *testing.T) {
	t.Parallel()
	path := startServer(t, echo)
	ctx := context.Background()
	c, err := Dial(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var out map[string]int
	if err := c.Call(ctx, "echo", map[string]int{"a": 1}, &out); err != nil || out["a"] != 1 {
		t.Fatalf("echo: %v %v", out, err)
	}
	var rpcErr *wire.Error
	if err := c.Call(ctx, "fail", nil, nil); !errors.As(err, &rpcErr) || rpcErr.Code != wire.CodeInvalidParams {
		t.Fatalf("fail: %v", err)
	}
	if err := c.Call(ctx, "boom", nil, nil); !errors.As(err, &rpcErr) || rpcErr.Code != wire.CodeInternalError || !strings.Contains(rpcErr.Message, "kaput") {
		t.Fatalf("boom: %v", err)
	}
	if err := c.Call(ctx, "nosuch", nil, nil); !errors.As(err, &rpcErr) || rpcErr.Code != wire.CodeMethodNotFound {
		t.Fatalf("nosuch: %v", err)
	}
	// A slow call does not block others on the same connection.
	sctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	go c.Call(sctx, "slow", nil, nil)
	if err := c.Call(ctx, "echo", map[string]int{"a": 2}, &out); err != nil || out["a"] != 2 {
		t.Fatalf("echo after slow: %v %v", out, err)
	}
}

func TestDialAbsentIsNotRunning(t *testing.T) {
	t.Parallel()
	_, err := Dial(context.Background(), filepath.Join(socketDir(t), "absent.sock"))
	if !errors.Is(err, ErrDaemonNotRunning) {
		t.Fatalf("got %v", err)
	}
	// A socket file nobody listens on (daemon crashed) is also "not running".
	path := filepath.Join(socketDir(t), "stale.sock")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
	if _, err := Dial(context.Background(), path); !errors.Is(err, ErrDaemonNotRunning) {
		t.Fatalf("stale: %v", err)
	}
}

func rawConn(t *testing.T, path string) (net.Conn, *json.Decoder) {
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(5 * time.Second))
	return c, json.NewDecoder(c)
}

func TestMalformedLines(t *testing.T) {
	t.Parallel()
	path := startServer(t, echo)
	c, dec := rawConn(t, path)
	for _, tc := range []struct {
		line string
		code int
	}{
		{"{nope\n", wire.CodeParseError},
		{`{"id":1,"method":"echo"}` + "\n", wire.CodeInvalidRequest},
	} {
		c.Write([]byte(tc.line))
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *wire.Error     `json:"error"`
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		if m.Error == nil || m.Error.Code != tc.code {
			t.Fatalf("%q: got %+v", tc.line, m)
		}
	}
	// The connection stays usable.
	c.Write([]byte(`{"jsonrpc":"2.0","id":9,"method":"echo","params":{"x":1}}` + "\n"))
	var ok struct {
		ID     int            `json:"id"`
		Result map[string]int `json:"result"`
	}
	if err := dec.Decode(&ok); err != nil || ok.ID != 9 || ok.Result["x"] != 1 {
		t.Fatalf("after errors: %+v %v", ok, err)
	}
}

func TestOverlongLineDropsConnection(t *testing.T) {
	t.Parallel()
	path := startServer(t, echo)
	c, dec := rawConn(t, path)
	go func() {
		chunk := []byte(strings.Repeat("a", 1<<20))
		for i := 0; i < MaxLine/len(chunk)+2; i++ {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}()
	var m struct{ Error *wire.Error }
	if err := dec.Decode(&m); err != nil || m.Error == nil || m.Error.Code != wire.CodeInvalidRequest {
		t.Fatalf("got %+v %v", m, err)
	}
	if err := dec.Decode(&m); err == nil {
		t.Fatal("connection stayed open after an overlong line")
	}
}
