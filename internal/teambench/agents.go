package teambench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchTool is a read-only tool of the built-in catalogue that needs no
// tab: the gateway's gates pass it without a page.
const benchTool = "tabs"

// callTimeout bounds one call; a call without an answer by then is lost.
const callTimeout = 30 * time.Second

// bearer adds the agent's token to every request of its MCP transport.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// transport is shared by every agent: enough idle connections per host that
// a call never waits for a new TCP connection.
func transport(perHost int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 0
	t.MaxIdleConnsPerHost = perHost
	return t
}

// target is one MCP session of an agent, bound to one browser.
type target struct {
	sess    *mcp.ClientSession
	device  *device
	replica int // the endpoint the agent's requests go to
}

// connectTarget opens an MCP session on endpoint (…/mcp) for the device,
// named by ?browser= as the one-machine daemon and the replicas both take.
func connectTarget(ctx context.Context, endpoint, token string, rt http.RoundTripper, d *device, replica int) (*target, error) {
	u := endpoint + "?browser=" + url.QueryEscape(d.ID())
	c := mcp.NewClient(&mcp.Implementation{Name: "torii-team-bench", Version: "0"}, nil)
	sess, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u, DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: bearer{token: token, base: rt}}}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp connect %s: %w", endpoint, err)
	}
	return &target{sess: sess, device: d, replica: replica}, nil
}

// outcome is one call's fate.
type outcome int

const (
	callOK outcome = iota
	callLost
	callMisrouted
)

// call runs the bench tool on t and says whether the answer came from
// t's device.
func (t *target) call(ctx context.Context) (time.Duration, outcome, string) {
	cctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	t0 := time.Now()
	res, err := t.sess.CallTool(cctx, &mcp.CallToolParams{Name: benchTool, Arguments: map[string]any{}})
	lat := time.Since(t0)
	if err != nil {
		return lat, callLost, err.Error()
	}
	text := ""
	if len(res.Content) > 0 {
		if tc, isText := res.Content[0].(*mcp.TextContent); isText {
			text = tc.Text
		}
	}
	if res.IsError {
		return lat, callLost, text
	}
	var a answer
	if json.Unmarshal([]byte(text), &a) != nil {
		return lat, callLost, "unexpected result: " + text
	}
	if a.Device != t.device.ID() {
		return lat, callMisrouted, fmt.Sprintf("asked %s, answered by %s", t.device.ID(), a.Device)
	}
	return lat, callOK, ""
}

// agent calls, in turn, one of its team targets and its one-machine target,
// pausing interval (with jitter) between calls, so both paths see the same
// machine at the same time.
type agent struct {
	team  []*target
	local *target
}

func (a *agent) run(ctx context.Context, interval time.Duration, teamRec, localRec *recorder) {
	pause := func() {
		if interval <= 0 {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(interval/2 + rand.N(interval)):
		}
	}
	pause()
	for k := 0; ctx.Err() == nil; k++ {
		if len(a.team) > 0 {
			t := a.team[k%len(a.team)]
			lat, o, why := t.call(ctx)
			if ctx.Err() == nil {
				teamRec.add(lat, o, why, t.replica != t.device.Replica())
			}
			pause()
		}
		if a.local != nil && ctx.Err() == nil {
			lat, o, why := a.local.call(ctx)
			if ctx.Err() == nil {
				localRec.add(lat, o, why, false)
			}
			pause()
		}
	}
}

func (a *agent) close() {
	for _, t := range a.team {
		t.sess.Close()
	}
	if a.local != nil {
		a.local.sess.Close()
	}
}

// recorder keeps one path's latencies and failures.
type recorder struct {
	mu        sync.Mutex
	lat       []time.Duration
	remote    []time.Duration // calls whose agent and device were on different replicas
	lost      int
	misrouted int
	why       map[string]int // a sample of failure messages, counted
}

func newRecorder() *recorder { return &recorder{why: map[string]int{}} }

func (r *recorder) add(lat time.Duration, o outcome, why string, remote bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch o {
	case callOK:
		r.lat = append(r.lat, lat)
		if remote {
			r.remote = append(r.remote, lat)
		}
		return
	case callLost:
		r.lost++
	case callMisrouted:
		r.misrouted++
	}
	if len(why) > 200 {
		why = why[:200]
	}
	if _, seen := r.why[why]; seen || len(r.why) < 20 {
		r.why[why]++
	}
}
