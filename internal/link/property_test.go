package link_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/wire"
)

// The model of one connection's handshake state (docs/protocol.md).
type mstate int

const (
	mNew mstate = iota
	mHello
	mAuthed
)

type mconn struct {
	c      *linktest.Client
	kind   string // "ext" (extension origin, no token), "tok" (token, no origin), "tokext" (token and extension origin)
	state  mstate
	named  bool             // hello named the paired device
	paired *linktest.Device // approved by torii/pair on this connection
	log    []string
}

func (m *mconn) pending() bool { return m.kind == "ext" && m.state != mAuthed }

// Every message the protocol forbids in a state gets its documented error,
// and the unauthenticated count stays exact, whatever order messages come
// in, on extension and token connections alike.
func TestHandshakeStateMachineProperty(t *testing.T) {
	t.Parallel()
	srv, url, dev := abuseServer(t, func(o *link.Options) {
		o.Tokens = oneToken{ids: map[string]string{"good-token": "tok_1"}}
		link.SetAuthTimeout(o, time.Minute)
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const seqs, steps = 30, 25
	for seed := uint64(1); seed <= seqs; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		var conns []*mconn
		fail := func(m *mconn, format string, a ...any) {
			t.Helper()
			hist := ""
			if m != nil {
				hist = fmt.Sprintf(" (connection %s history %v)", m.kind, m.log)
			}
			t.Fatalf("seed %d: "+format+hist, append([]any{seed}, a...)...)
		}
		for step := 0; step < steps; step++ {
			if len(conns) == 0 || (len(conns) < 5 && rng.IntN(5) == 0) {
				kind := []string{"ext", "ext", "tok", "tokext"}[rng.IntN(4)]
				opts := &linktest.Options{}
				switch kind {
				case "tok":
					opts.NoOrigin, opts.Subprotocols = true, []string{link.BearerSubprotocolPrefix + "good-token", link.Subprotocol}
				case "tokext":
					opts.Subprotocols = []string{link.BearerSubprotocolPrefix + "good-token", link.Subprotocol}
				}
				c, err := linktest.Dial(ctx, url, opts)
				if err != nil {
					fail(nil, "dial %s: %v", kind, err)
				}
				m := &mconn{c: c, kind: kind}
				if kind != "ext" {
					m.state = mAuthed
				}
				conns = append(conns, m)
			}
			i := rng.IntN(len(conns))
			m := conns[i]
			action := []string{"hello", "hello-unknown", "pair", "auth", "auth-bad", "ping", "other", "close"}[rng.IntN(8)]
			m.log = append(m.log, action)
			closed, err := apply(ctx, m, action, dev)
			if err != nil {
				fail(m, "%s: %v", action, err)
			}
			if closed {
				conns = append(conns[:i], conns[i+1:]...)
			}
			want := 0
			for _, o := range conns {
				if o.pending() {
					want++
				}
			}
			if got := waitCount(srv, want); got != want {
				fail(m, "after %s: %d unauthenticated, the model says %d", action, got, want)
			}
		}
		for _, m := range conns {
			m.c.Close()
		}
		if got := waitCount(srv, 0); got != 0 {
			t.Fatalf("seed %d: %d unauthenticated after every connection closed", seed, got)
		}
	}
}

// waitCount waits (bounded) for the hub to reach want, as closes and
// promotions land asynchronously, and returns the last count seen.
func waitCount(srv *link.Server, want int) int {
	timeout := time.After(3 * time.Second)
	for {
		changed := srv.Hub().Changed()
		got := srv.Hub().Unauthenticated()
		if got == want {
			return got
		}
		select {
		case <-changed:
		case <-timeout:
			return got
		}
	}
}

func code(err error) int {
	var e *wire.Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

func expectCode(err error, want int) error {
	if got := code(err); got != want {
		return fmt.Errorf("got %v, want code %d", err, want)
	}
	return nil
}

// apply sends one action and checks the reply against the model; closed
// reports that the connection ended (as the model expects).
func apply(ctx context.Context, m *mconn, action string, dev *linktest.Device) (closed bool, err error) {
	c := m.c
	switch action {
	case "hello", "hello-unknown":
		id := dev.ID
		if action == "hello-unknown" {
			id = "dev_" + uuid.NewString()
		}
		if m.state != mNew {
			// Sent by hand: SayHello would replace the client's nonce.
			err := c.Call(ctx, "torii/hello", link.HelloParams{Protocol: link.ProtocolVersion, DeviceID: id,
				ClientNonce: pairing.EncodeB64(pairing.NewNonce())}, nil)
			return false, expectCode(err, wire.CodeInvalidRequest)
		}
		if _, err := c.SayHello(ctx, id); err != nil {
			return false, err
		}
		m.state, m.named = mHello, action == "hello"
	case "pair":
		d, _ := linktest.NewDevice("prop")
		if m.state != mHello {
			// Well-formed params: the state alone decides.
			err := c.Call(ctx, "torii/pair", link.PairParams{RequestID: uuid.NewString(),
				DeviceKey: pairing.EncodeB64(d.PublicKey()), DeviceName: d.Name}, nil)
			return false, expectCode(err, wire.CodeInvalidRequest)
		}
		err := c.Pair(ctx, d, linktest.PairOptions{})
		switch {
		case m.kind != "ext":
			return false, fmt.Errorf("model error: %s connection in hello", m.kind)
		case err != nil:
			return false, err
		}
		m.paired = d
	case "auth", "auth-bad":
		d := dev
		if m.paired != nil && (!m.named || action == "auth-bad") {
			d = m.paired
		}
		if m.state == mNew || m.state == mAuthed {
			// No hello nonces yet (or a token connection): any params.
			err := c.Call(ctx, "torii/auth", link.AuthParams{DeviceID: d.ID, Sig: "AAAA"}, nil)
			return false, expectCode(err, wire.CodeInvalidRequest)
		}
		p, perr := c.AuthParams(d)
		if perr != nil {
			return false, perr
		}
		allowed := (d == dev && m.named) || d == m.paired
		if action == "auth-bad" {
			p.Sig = pairing.EncodeB64(make([]byte, 64))
		}
		err := c.Call(ctx, "torii/auth", p, nil)
		if action == "auth" && allowed {
			if err != nil {
				return false, err
			}
			m.state = mAuthed
			return false, nil
		}
		// Not allowed or a bad signature: closed with 1008, no reply.
		if err == nil {
			return false, errors.New("a refused auth was answered")
		}
		st, werr := c.WaitClosed(ctx)
		if werr != nil || st != websocket.StatusPolicyViolation {
			return false, fmt.Errorf("refused auth closed with %v (%v), want 1008", st, werr)
		}
		return true, nil
	case "ping":
		return false, c.Call(ctx, "torii/ping", struct{}{}, nil)
	case "other":
		err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}, nil)
		if m.state == mAuthed {
			// No Handler in this server: unknown after authentication.
			return false, expectCode(err, wire.CodeMethodNotFound)
		}
		return false, expectCode(err, wire.CodeNotAuthenticated)
	case "close":
		c.Close()
		return true, nil
	}
	return false, nil
}
