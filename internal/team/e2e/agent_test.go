package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/toolerr"
)

// bearer adds a user token to every request of the agent's MCP client.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// agent is an MCP client holding one user token, connected to one replica
// directly (not through the forwarder), as an agent in a pod would be
// pointed at one address.
type agent struct {
	t       *testing.T
	name    string
	user    teamUser
	replica int
	session *mcp.ClientSession
	log     *callLog
}

// callLog keeps every call an agent got a reply for, to check the audit.
type callLog struct {
	mu    sync.Mutex
	calls []loggedCall
}

type loggedCall struct {
	userID, device, tool string
	isError              bool
	code                 string
	mayHaveRun           bool // failed in a way that says the call may have run
}

func (l *callLog) add(c loggedCall) {
	l.mu.Lock()
	l.calls = append(l.calls, c)
	l.mu.Unlock()
}

func (l *callLog) all() []loggedCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]loggedCall(nil), l.calls...)
}

// connectAgent connects an MCP client with u's token to replica i's /mcp;
// browser, when not "", is the ?browser= it names.
func connectAgent(t *testing.T, c *cluster, i int, u teamUser, browserID string, log *callLog) *agent {
	t.Helper()
	endpoint := c.url(i, "/mcp")
	if browserID != "" {
		endpoint += "?browser=" + url.QueryEscape(browserID)
	}
	hc := &http.Client{Transport: bearer{token: u.Token, base: http.DefaultTransport}}
	cl := mcp.NewClient(&mcp.Implementation{Name: "torii-e2e-" + u.Name, Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	ss, err := cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatalf("agent of %s: connect to %s: %v", u.Name, endpoint, err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	return &agent{t: t, name: u.Name, user: u, replica: i, session: ss, log: log}
}

// reply is a call's outcome as the agent sees it.
type reply struct {
	res  *mcp.CallToolResult
	err  error // transport or protocol failure
	took time.Duration
}

func (r reply) code() string {
	if e := toolerr.FromResult(r.res); e != nil {
		return string(e.Code)
	}
	return ""
}

func (r reply) text() string {
	if r.err != nil {
		return r.err.Error()
	}
	return resultText(r.res)
}

func (r reply) ok() bool { return r.err == nil && r.res != nil && !r.res.IsError }

func resultText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
			b.WriteString("\n")
		}
	}
	if res.StructuredContent != nil {
		j, _ := json.Marshal(res.StructuredContent)
		b.Write(j)
	}
	return b.String()
}

// call runs one tool with a deadline and records the reply for the audit
// check (device is the browser the call is meant for).
func (a *agent) call(device, tool string, args map[string]any, d time.Duration) reply {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	start := time.Now()
	res, err := a.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	r := reply{res: res, err: err, took: time.Since(start)}
	if err == nil && res != nil && a.log != nil {
		a.log.add(loggedCall{userID: a.user.ID, device: device, tool: tool, isError: res.IsError, code: r.code(),
			mayHaveRun: res.IsError && mayHaveRun.MatchString(resultText(res))})
	}
	return r
}

func (a *agent) String() string { return fmt.Sprintf("agent %s on r%d", a.name, a.replica) }
