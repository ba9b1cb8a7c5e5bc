package link_test

import (
	"bytes"
	"context"
	"errors"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/fuzzseed"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
)

var (
	fuzzOnce sync.Once
	fuzzSrv  *link.Server
	fuzzURL  string
)

// fuzzServer is one link server per fuzzing process (a real WebSocket
// endpoint with a paired device and a token), shared by every input.
func fuzzServer(f *testing.F) {
	fuzzOnce.Do(func() {
		dir, err := filepathTemp()
		if err != nil {
			f.Fatal(err)
		}
		id, devs := linktest.Stores(f, dir)
		opts := link.Options{Identity: id, Devices: devs, Pairer: slowApprover{devs, 0}, LoopbackBind: true,
			Tokens: oneToken{ids: map[string]string{"fuzz-token": "tok_f"}}}
		fuzzSrv = link.NewServer(opts)
		hs := httptest.NewServer(fuzzSrv)
		fuzzURL = "ws" + strings.TrimPrefix(hs.URL, "http") + "/acp"
	})
}

// FuzzHandshakeFrames sends a sequence of frames (newline-separated in the
// input; the first byte picks an extension or a token connection) to a
// real link connection, then a ping. The daemon must answer the ping or
// close with a documented code, never hang or panic, and its count of
// unauthenticated connections must never go below zero or over the cap.
func FuzzHandshakeFrames(f *testing.F) {
	frames := fuzzseed.Frames(f)
	f.Add(append([]byte{0}, bytes.Join(frames, []byte("\n"))...))
	f.Add(append([]byte{1}, bytes.Join(frames, []byte("\n"))...))
	for _, fr := range frames {
		f.Add(append([]byte{0}, fr...))
	}
	fuzzseed.Corpus(f, "FuzzHandshakeFrames")
	fuzzServer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		opts := &linktest.Options{}
		if data[0]&1 == 1 {
			opts.Subprotocols = []string{link.BearerSubprotocolPrefix + "fuzz-token", link.Subprotocol}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, err := linktest.Dial(ctx, fuzzURL, opts)
		if err != nil {
			t.Skipf("dial: %v", err) // the cap is shared by parallel inputs
		}
		defer c.WS.CloseNow() // no close handshake: inputs follow each other fast
		parts := bytes.Split(data[1:], []byte("\n"))
		if len(parts) > 16 {
			parts = parts[:16]
		}
		for _, p := range parts {
			if err := c.SendRaw(ctx, p); err != nil {
				break
			}
		}
		// The answer to a ping with an id no seed uses shows every frame was handled.
		_ = c.SendRaw(ctx, []byte(`{"jsonrpc":"2.0","id":"fuzz-sentinel","method":"torii/ping"}`))
		for {
			m, err := c.Next(ctx)
			if errors.Is(err, context.DeadlineExceeded) {
				t.Fatal("no answer to a ping after the frames")
			}
			if err != nil {
				code, _ := c.WaitClosed(ctx)
				switch code {
				case websocket.StatusPolicyViolation, websocket.StatusMessageTooBig, websocket.StatusGoingAway,
					websocket.StatusTryAgainLater:
				default:
					t.Fatalf("closed with %v: %v", code, err)
				}
				break
			}
			if string(m.ID) == `"fuzz-sentinel"` {
				if m.Error != nil {
					t.Fatalf("ping refused: %v", m.Error)
				}
				break
			}
		}
		if n := fuzzSrv.Hub().Unauthenticated(); n < 0 || n > link.MaxUnauthenticated {
			t.Fatalf("unauthenticated count %d", n)
		}
	})
}

func filepathTemp() (string, error) { return os.MkdirTemp("", "torii-fuzz") }
