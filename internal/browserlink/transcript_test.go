package browserlink_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/wire"
)

// transcript is one file of testdata/link (its README describes the format).
type transcript struct {
	Description string `json:"description"`
	Call        struct {
		Tool       string          `json:"tool"`
		Arguments  json.RawMessage `json:"arguments"`
		Meta       map[string]any  `json:"meta"`
		DeadlineMs int64           `json:"deadlineMs"`
		ReadOnly   bool            `json:"readOnly"`
		Browser    string          `json:"browser"`
	} `json:"call"`
	Steps []struct {
		Daemon    json.RawMessage `json:"daemon"`
		Extension json.RawMessage `json:"extension"`
		Do        string          `json:"do"`
	} `json:"steps"`
	Result struct {
		Text string `json:"text"`
		Code string `json:"code"`
		Says string `json:"says"`
	} `json:"result"`
}

var transcripts = filepath.Join("..", "..", "testdata", "link")

// pipe is one link connection: the daemon's JSON-RPC peer on one end,
// the test (playing the extension) on the other.
type pipe struct {
	peer   *wire.Peer
	ctx    context.Context
	in     chan []byte // frames to the daemon
	out    chan []byte // frames from the daemon
	closed chan struct{}
}

func (p *pipe) ReadFrame() ([]byte, error) {
	select {
	case b := <-p.in:
		return b, nil
	case <-p.closed:
		return nil, io.EOF
	}
}

func (p *pipe) WriteFrame(_ context.Context, b []byte) error {
	select {
	case p.out <- append([]byte(nil), b...):
		return nil
	case <-p.closed:
		return io.ErrClosedPipe
	}
}

func (p *pipe) ID() string               { return "transcript" }
func (p *pipe) Context() context.Context { return p.ctx }
func (p *pipe) Call(ctx context.Context, method string, params, result any) error {
	return p.peer.Call(ctx, method, params, result)
}
func (p *pipe) Start(ctx context.Context, id json.RawMessage, method string, params any) (*wire.Pending, error) {
	return p.peer.Start(ctx, id, method, params)
}
func (p *pipe) Notify(ctx context.Context, method string, params any) error {
	return p.peer.Notify(ctx, method, params)
}

func newPipe(t *testing.T) *pipe {
	p := &pipe{in: make(chan []byte, 16), out: make(chan []byte, 16), closed: make(chan struct{})}
	p.peer = wire.NewPeer(p, wire.Options{IDPrefix: "d"})
	ctx, cancel := context.WithCancel(context.Background())
	p.ctx = ctx
	go func() {
		_ = p.peer.Run(context.Background())
		cancel()
	}()
	t.Cleanup(func() { p.close() })
	return p
}

func (p *pipe) close() {
	select {
	case <-p.closed:
	default:
		close(p.closed)
	}
	<-p.ctx.Done()
}

// sameFrame compares two frames as JSON values, "$deadline" standing for deadline.
func sameFrame(t *testing.T, got, want []byte, deadline int64) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("daemon frame %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("transcript frame %s: %v", want, err)
	}
	w = substitute(w, float64(deadline))
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("the daemon sent\n  %s\nthe transcript has\n  %s", got, want)
	}
}

func substitute(v any, deadline float64) any {
	switch x := v.(type) {
	case string:
		if x == "$deadline" {
			return deadline
		}
	case map[string]any:
		for k, e := range x {
			x[k] = substitute(e, deadline)
		}
	case []any:
		for i, e := range x {
			x[i] = substitute(e, deadline)
		}
	}
	return v
}

// TestTranscripts replays every golden transcript against the daemon's
// side: the test plays the extension, frame by frame, and the daemon must
// send exactly the transcript's frames and give the broker its result.
func TestTranscripts(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join(transcripts, "*.json"))
	if err != nil || len(files) < 6 {
		t.Fatalf("transcripts: %v %v", files, err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var tr transcript
			if err := json.Unmarshal(raw, &tr); err != nil {
				t.Fatal(err)
			}
			replay(t, tr)
		})
	}
}

func replay(t *testing.T, tr transcript) {
	const wait = 10 * time.Second
	link := newPipe(t)
	opened := make(chan *browserlink.Server, 1)
	open := func(p *pipe) {
		go func() {
			s, err := browserlink.Open(context.Background(), p, time.Minute, nil)
			if err != nil {
				t.Errorf("Open: %v", err)
			}
			opened <- s
		}()
	}
	open(link)
	var srv *browserlink.Server
	server := func() *browserlink.Server {
		if srv == nil {
			select {
			case srv = <-opened:
			case <-time.After(wait):
				t.Fatal("the daemon's side never opened")
			}
		}
		return srv
	}
	deadline := time.Now().Add(time.Duration(tr.Call.DeadlineMs) * time.Millisecond)
	deadline = time.UnixMilli(deadline.UnixMilli())
	callCtx, cancel := context.WithCancel(context.Background())
	defer cancel()
	results := make(chan *mcp.CallToolResult, 1)
	for i, st := range tr.Steps {
		switch {
		case st.Daemon != nil:
			select {
			case got := <-link.out:
				sameFrame(t, got, st.Daemon, deadline.UnixMilli())
			case <-time.After(wait):
				t.Fatalf("step %d: the daemon never sent %s", i, st.Daemon)
			}
		case st.Extension != nil:
			select {
			case link.in <- st.Extension:
			case <-link.closed:
			}
		case st.Do == "call":
			s := server()
			go func() {
				results <- s.Call(callCtx, browserlink.Request{Tool: tr.Call.Tool, Args: tr.Call.Arguments, Meta: tr.Call.Meta,
					Deadline: deadline, ReadOnly: tr.Call.ReadOnly, Browser: tr.Call.Browser})
			}()
		case st.Do == "cancel":
			cancel()
		case st.Do == "close":
			server()
			link.close()
		case st.Do == "connect":
			srv = nil
			link = newPipe(t)
			open(link)
		case st.Do == "finish":
			// The tool ends in the extension: its answer is the next step.
		default:
			t.Fatalf("step %d: unknown %+v", i, st)
		}
	}
	var res *mcp.CallToolResult
	select {
	case res = <-results:
	case <-time.After(wait):
		t.Fatal("the call never returned")
	}
	if tr.Result.Code == "" {
		if res.IsError || len(res.Content) != 1 || res.Content[0].(*mcp.TextContent).Text != tr.Result.Text {
			t.Fatalf("result %+v, want the text %q", res, tr.Result.Text)
		}
		return
	}
	e := toolerr.FromResult(res)
	if e == nil || string(e.Code) != tr.Result.Code || !strings.Contains(e.Message, tr.Result.Says) {
		t.Fatalf("result %+v, want %s saying %q", e, tr.Result.Code, tr.Result.Says)
	}
}
