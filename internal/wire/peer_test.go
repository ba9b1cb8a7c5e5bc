package wire

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// pair runs a peer with opts on one end of a pipe; the test speaks raw
// lines on the other.
func pair(t *testing.T, opts Options) (*Peer, net.Conn, *bufio.Reader) {
	a, b := net.Pipe()
	p := NewPeer(NewLineFramer(a, a, 1<<10), opts)
	go p.Run(context.Background())
	t.Cleanup(func() { a.Close(); b.Close(); <-p.Done() })
	return p, b, bufio.NewReader(b)
}

func readMsg(t *testing.T, r *bufio.Reader) *Message {
	t.Helper()
	line, err := r.ReadBytes('\n')
	if err != nil {
		t.Fatal(err)
	}
	m, e := Decode(line)
	if e != nil {
		t.Fatalf("bad line %s: %v", line, e)
	}
	return m
}

func write(t *testing.T, c net.Conn, s string) {
	t.Helper()
	if _, err := io.WriteString(c, s+"\n"); err != nil {
		t.Fatal(err)
	}
}

func TestPeerCallAndAnswers(t *testing.T) {
	p, c, r := pair(t, Options{IDPrefix: "d"})
	ctx := tctx(t)
	type res struct {
		V int `json:"v"`
	}
	got := make(chan error, 2)
	var one res
	go func() { got <- p.Call(ctx, "one", nil, &one) }()
	req1 := readMsg(t, r)
	go func() { got <- p.Call(ctx, "two", nil, nil) }()
	req2 := readMsg(t, r)
	if string(req1.ID) != `"d1"` || string(req2.ID) != `"d2"` {
		t.Fatalf("ids %s %s", req1.ID, req2.ID)
	}
	// Answers out of order reach the right callers.
	write(t, c, `{"jsonrpc":"2.0","id":"d2","error":{"code":-32602,"message":"no"}}`)
	if err := <-got; !errors.Is(err, &Error{Code: CodeInvalidParams}) {
		t.Fatalf("two: %v", err)
	}
	write(t, c, `{"jsonrpc":"2.0","id":"d1","result":{"v":7}}`)
	if err := <-got; err != nil || one.V != 7 {
		t.Fatalf("one: %v %+v", err, one)
	}
}

func TestPeerPendingBudget(t *testing.T) {
	p, _, r := pair(t, Options{MaxPending: 2})
	ctx := tctx(t)
	for i := 0; i < 2; i++ {
		go p.Call(ctx, "x", nil, nil)
		readMsg(t, r)
	}
	if err := p.Call(ctx, "x", nil, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("past the budget: %v", err)
	}
}

// Every frame that cannot be decoded is answered on its own, with its id
// when one could be read, and the connection stays.
func TestPeerPerFrameErrors(t *testing.T) {
	_, c, r := pair(t, Options{MaxRequest: 100, Handle: func(context.Context, *Message) (any, error) { return "ok", nil }})
	for _, tc := range []struct {
		in   string
		id   string
		code int
	}{
		{`not json`, "null", CodeParseError},
		{`{"jsonrpc":"1.0","id":5,"method":"a"}`, "5", CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":6,"method":"a","params":"` + strings.Repeat("x", 100) + `"}`, "6", CodeInvalidRequest},
		{`[1]`, "null", CodeInvalidRequest},
	} {
		write(t, c, tc.in)
		m := readMsg(t, r)
		if m.Error == nil || m.Error.Code != tc.code || string(m.ID) != tc.id {
			t.Fatalf("%s: %+v", tc.in, m)
		}
	}
	write(t, c, `{"jsonrpc":"2.0","id":7,"method":"a"}`)
	if m := readMsg(t, r); string(m.Result) != `"ok"` {
		t.Fatalf("after the bad frames: %+v", m)
	}
}

// Notifications are handled inline: while one is being handled nothing
// more is read (push-back), and they keep their order.
func TestPeerInlineNotifications(t *testing.T) {
	release := make(chan struct{})
	var order []string
	var handled atomic.Int32
	_, c, r := pair(t, Options{
		Notify: func(_ context.Context, m *Message) {
			if m.Method == "block" {
				<-release
			}
			order = append(order, m.Method)
		},
		Handle: func(context.Context, *Message) (any, error) { handled.Add(1); return nil, nil },
	})
	write(t, c, `{"jsonrpc":"2.0","method":"block"}`)
	sent := make(chan struct{})
	go func() {
		write(t, c, `{"jsonrpc":"2.0","method":"after"}`)
		write(t, c, `{"jsonrpc":"2.0","id":1,"method":"req"}`)
		close(sent)
	}()
	select {
	case <-sent:
		t.Fatal("frames were read while a notification was being handled")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	readMsg(t, r)
	if handled.Load() != 1 || len(order) != 2 || order[0] != "block" || order[1] != "after" {
		t.Fatalf("order %v, handled %d", order, handled.Load())
	}
}

// At MaxInFlight requests being handled, the read loop waits.
func TestPeerInFlightPushBack(t *testing.T) {
	release := make(chan struct{})
	var running atomic.Int32
	_, c, r := pair(t, Options{MaxInFlight: 2, Handle: func(ctx context.Context, _ *Message) (any, error) {
		running.Add(1)
		<-release
		return nil, nil
	}})
	done := make(chan struct{})
	go func() {
		for i := 1; i <= 4; i++ {
			write(t, c, `{"jsonrpc":"2.0","id":`+string(rune('0'+i))+`,"method":"x"}`)
		}
		close(done)
	}()
	deadline := time.Now().Add(2 * time.Second)
	for running.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-done:
		t.Fatal("all requests were read past the in-flight bound")
	case <-time.After(50 * time.Millisecond):
	}
	if n := running.Load(); n != 2 {
		t.Fatalf("%d running, want 2", n)
	}
	close(release)
	for i := 0; i < 4; i++ {
		readMsg(t, r)
	}
}

// The connection ending fails every pending call at once; an answer that
// came first still counts.
func TestPeerCloseFailsPending(t *testing.T) {
	p, c, r := pair(t, Options{})
	ctx := tctx(t)
	got := make(chan error, 1)
	go func() { got <- p.Call(ctx, "x", nil, nil) }()
	readMsg(t, r)
	c.Close()
	select {
	case err := <-got:
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("pending after close: %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("a pending call outlived its connection")
	}
	if err := p.Call(ctx, "y", nil, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("call after close: %v", err)
	}
}

// A line over the cap gets one error answer and ends the stream; a frame
// error the framer can pin on a call fails that call with its cause.
func TestPeerFatalFrame(t *testing.T) {
	p, c, r := pair(t, Options{})
	ctx := tctx(t)
	got := make(chan error, 1)
	go func() { got <- p.Call(ctx, "x", nil, nil) }()
	readMsg(t, r)
	go io.WriteString(c, strings.Repeat("y", 2<<10)+"\n")
	if m := readMsg(t, r); m.Error == nil || m.Error.Code != CodeInvalidRequest {
		t.Fatalf("over the cap: %+v", m)
	}
	if err := <-got; !errors.Is(err, ErrClosed) || errors.Is(err, ErrLineTooLong) {
		t.Fatalf("pending call: %v (only a call the frame names gets the cause)", err)
	}
	if !errors.Is(p.Err(), ErrLineTooLong) {
		t.Fatalf("cause: %v", p.Err())
	}
}

func TestPeekID(t *testing.T) {
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":"d5","result":{"content":[{"type":"text","text":"xxxx`: `"d5"`,
		`{"id":12,"jsonrpc":"2.0","result":"xx`:                                       `12`,
		`{"jsonrpc":"2.0","result":{"a":"xxxx`:                                        ``,
		`{"jsonrpc":"2.0","id":null,"error":`:                                         ``,
		`["x"`:                                                                        ``,
	} {
		if got := string(PeekID([]byte(in))); got != want {
			t.Errorf("PeekID(%s) = %s, want %s", in, got, want)
		}
	}
}
