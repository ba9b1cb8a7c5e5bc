package teambench

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/browserlink"
)

func fakeDevice(t *testing.T, id string) *device {
	t.Helper()
	d, err := newDevice("bench", []string{"ws://127.0.0.1:1/acp"}, 0, json.RawMessage(`{"tools":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	d.key.ID = id
	return d
}

// The fake device answers a call with its own ID, and is ready once the
// gateway listed its tools.
func TestDeviceAnswersWithItsOwnID(t *testing.T) {
	t.Parallel()
	d := fakeDevice(t, "d1")
	if _, err := d.handle(context.Background(), browserlink.MethodList, nil); err != nil {
		t.Fatal(err)
	}
	select {
	case <-d.ready:
	default:
		t.Fatal("not ready after torii/tools/list")
	}
	p, _ := json.Marshal(browserlink.CallParams{CallID: "c1", Tool: benchTool, Deadline: 1})
	res, err := d.handle(context.Background(), browserlink.MethodCall, p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(res)
	var r mcp.CallToolResult
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	var a answer
	if err := json.Unmarshal([]byte(r.Content[0].(*mcp.TextContent).Text), &a); err != nil || a.Device != "d1" {
		t.Fatalf("answer %+v, %v", a, err)
	}
	if d.calls.Load() != 1 {
		t.Fatalf("calls = %d", d.calls.Load())
	}
	if _, err := d.handle(context.Background(), browserlink.MethodCall, []byte(`{}`)); err == nil {
		t.Fatal("a call without callId was answered")
	}
}

// An agent's call is classified by who answered: its device (ok), another
// device (misrouted), or nobody (lost: an error result).
func TestCallClassifiesTheAnswer(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "gateway", Version: "0"}, nil)
	srv.AddTool(&mcp.Tool{Name: benchTool, InputSchema: json.RawMessage(`{"type":"object"}`)},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			dev := req.Extra.Header.Get("X-Answer")
			if dev == "" {
				return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "extension_not_connected"}}}, nil
			}
			b, _ := json.Marshal(answer{Device: dev, Tool: benchTool})
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	var gotAuth string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth = r.Header.Get("Authorization")
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	for _, tc := range []struct {
		answer string
		want   outcome
	}{{"d1", callOK}, {"d2", callMisrouted}, {"", callLost}} {
		rt := headerRT{base: transport(2), name: "X-Answer", value: tc.answer}
		tg, err := connectTarget(context.Background(), hs.URL+"/mcp", "tok", rt, fakeDevice(t, "d1"), 0)
		if err != nil {
			t.Fatal(err)
		}
		_, got, why := tg.call(context.Background())
		tg.sess.Close()
		if got != tc.want {
			t.Errorf("answer %q: outcome %d (%s), want %d", tc.answer, got, why, tc.want)
		}
	}
	if gotAuth != "Bearer tok" {
		t.Errorf("Authorization %q", gotAuth)
	}
}

type headerRT struct {
	base        http.RoundTripper
	name, value string
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.base.RoundTrip(r)
}
