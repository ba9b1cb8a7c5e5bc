// Package scripted is the deterministic ACP agent written for tests
// (docs/agents.md): it speaks ACP over stdio with acp-go-sdk's typed agent
// side, and chooses its behaviour by keywords in the prompt text:
//
//	(default)       streams a short markdown reply in chunks, with a plan
//	/slow           streams 40 chunks, 100 ms apart (cancellable)
//	/hang           sends nothing and never answers until cancelled
//	/flood N        sends N one-line chunks as fast as it can, then ends
//	/crash          sends one chunk, then exits with status 3
//	/permission     a tool_call, then session/request_permission; reports the outcome
//	/permission-crash  a tool_call and session/request_permission, then exits with status 4
//	                   a second later, the request still unanswered
//	/tools          lists the tools of the HTTP MCP server it was given
//	/tool NAME JSON calls a tool on that server: tool_call, tool_call_update, result text
//	/resources      lists that server's resources and reads each: "resource NAME: TEXT"
//	/echo-session   replies with the session id it was given
//
// Replies always end with the stop reason end_turn, or cancelled after
// session/cancel.
package scripted

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	acp "github.com/coder/acp-go-sdk"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type session struct {
	mcp    *acp.McpServerHttpInline
	cancel context.CancelFunc
}

// Agent is the scripted agent.
type Agent struct {
	conn *acp.AgentSideConnection
	exit func(int)

	mu       sync.Mutex
	sessions map[string]*session
}

var (
	_ acp.Agent       = (*Agent)(nil)
	_ acp.AgentLoader = (*Agent)(nil)
)

// Serve runs the agent on in/out until the peer hangs up.
func Serve(in io.Reader, out io.Writer, exit func(int)) {
	a := &Agent{sessions: map[string]*session{}, exit: exit}
	a.conn = acp.NewAgentSideConnection(a, out, in)
	<-a.conn.Done()
}

// Main is the test agent's main.
func Main() { Serve(os.Stdin, os.Stdout, os.Exit) }

func (a *Agent) Authenticate(context.Context, acp.AuthenticateRequest) (acp.AuthenticateResponse, error) {
	return acp.AuthenticateResponse{}, nil
}

func (a *Agent) Initialize(context.Context, acp.InitializeRequest) (acp.InitializeResponse, error) {
	return acp.InitializeResponse{ProtocolVersion: acp.ProtocolVersionNumber,
		AgentCapabilities: acp.AgentCapabilities{LoadSession: true,
			McpCapabilities: acp.McpCapabilities{Http: true}},
		AgentInfo: &acp.Implementation{Name: "torii-test-agent", Version: "1"}}, nil
}

func (a *Agent) addSession(id string, servers []acp.McpServer) {
	s := &session{}
	for _, m := range servers {
		if m.Http != nil {
			s.mcp = m.Http
		}
	}
	a.mu.Lock()
	a.sessions[id] = s
	a.mu.Unlock()
}

func (a *Agent) NewSession(_ context.Context, p acp.NewSessionRequest) (acp.NewSessionResponse, error) {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := "scripted-" + hex.EncodeToString(b[:])
	a.addSession(id, p.McpServers)
	return acp.NewSessionResponse{SessionId: acp.SessionId(id)}, nil
}

// LoadSession accepts any id: the scripted agent keeps no transcript, so a
// load after a restart simply re-creates the session under its old id.
func (a *Agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	a.addSession(string(p.SessionId), p.McpServers)
	_ = a.update(ctx, string(p.SessionId), acp.UpdateAgentMessageText("(session loaded)"))
	return acp.LoadSessionResponse{}, nil
}

func (a *Agent) ResumeSession(context.Context, acp.ResumeSessionRequest) (acp.ResumeSessionResponse, error) {
	return acp.ResumeSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionResume)
}
func (a *Agent) ListSessions(context.Context, acp.ListSessionsRequest) (acp.ListSessionsResponse, error) {
	return acp.ListSessionsResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionList)
}
func (a *Agent) CloseSession(context.Context, acp.CloseSessionRequest) (acp.CloseSessionResponse, error) {
	return acp.CloseSessionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionClose)
}
func (a *Agent) SetSessionMode(context.Context, acp.SetSessionModeRequest) (acp.SetSessionModeResponse, error) {
	return acp.SetSessionModeResponse{}, nil
}
func (a *Agent) SetSessionConfigOption(context.Context, acp.SetSessionConfigOptionRequest) (acp.SetSessionConfigOptionResponse, error) {
	return acp.SetSessionConfigOptionResponse{}, acp.NewMethodNotFound(acp.AgentMethodSessionSetConfigOption)
}

func (a *Agent) Cancel(_ context.Context, p acp.CancelNotification) error {
	a.mu.Lock()
	s := a.sessions[string(p.SessionId)]
	a.mu.Unlock()
	if s != nil {
		a.mu.Lock()
		c := s.cancel
		a.mu.Unlock()
		if c != nil {
			c()
		}
	}
	return nil
}

func (a *Agent) update(ctx context.Context, sid string, u acp.SessionUpdate) error {
	return a.conn.SessionUpdate(ctx, acp.SessionNotification{SessionId: acp.SessionId(sid), Update: u})
}

func (a *Agent) say(ctx context.Context, sid, text string) error {
	return a.update(ctx, sid, acp.UpdateAgentMessageText(text))
}

func (a *Agent) Prompt(_ context.Context, p acp.PromptRequest) (acp.PromptResponse, error) {
	sid := string(p.SessionId)
	a.mu.Lock()
	s := a.sessions[sid]
	a.mu.Unlock()
	if s == nil {
		return acp.PromptResponse{}, acp.NewInvalidParams(map[string]any{"error": "unknown session " + sid})
	}
	var text strings.Builder
	for _, b := range p.Prompt {
		if b.Text != nil {
			text.WriteString(b.Text.Text)
		}
	}
	// The turn's own context: session/cancel ends it, not the request's.
	ctx, cancel := context.WithCancel(context.Background())
	a.mu.Lock()
	s.cancel = cancel
	a.mu.Unlock()
	defer cancel()
	err := a.turn(ctx, sid, s, text.String())
	// A cancelled permission outcome may arrive before session/cancel.
	if ctx.Err() != nil || errors.Is(err, context.Canceled) {
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	}
	if err != nil {
		return acp.PromptResponse{}, err
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

func field(text, key string) (string, bool) {
	i := strings.Index(text, key)
	if i < 0 {
		return "", false
	}
	rest := strings.TrimSpace(text[i+len(key):])
	return rest, true
}

func (a *Agent) turn(ctx context.Context, sid string, s *session, text string) error {
	switch {
	case strings.Contains(text, "/permission-crash"):
		go func() { _ = a.permission(ctx, sid) }()
		// Long enough for the request to reach the person; it is never answered.
		time.Sleep(time.Second)
		a.exit(4)
		return nil
	case strings.Contains(text, "/crash"):
		_ = a.say(ctx, sid, "about to crash")
		time.Sleep(50 * time.Millisecond)
		a.exit(3)
		return nil
	case strings.Contains(text, "/hang"):
		<-ctx.Done()
		return ctx.Err()
	case strings.Contains(text, "/flood"):
		rest, _ := field(text, "/flood")
		n, err := strconv.Atoi(strings.Fields(rest + " 1000")[0])
		if err != nil || n <= 0 {
			n = 1000
		}
		for i := 0; i < n; i++ {
			if err := a.say(ctx, sid, fmt.Sprintf("flood %06d\n", i)); err != nil {
				return err
			}
			if i%100 == 99 {
				if err := a.update(ctx, sid, acp.UpdatePlan(acp.PlanEntry{Content: fmt.Sprintf("step %d", i),
					Priority: acp.PlanEntryPriorityLow, Status: acp.PlanEntryStatusInProgress})); err != nil {
					return err
				}
			}
		}
		return a.say(ctx, sid, "flood done")
	case strings.Contains(text, "/slow"):
		for i := 0; i < 40; i++ {
			if err := a.say(ctx, sid, fmt.Sprintf("slow %d ", i)); err != nil {
				return err
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
		return nil
	case strings.Contains(text, "/permission"):
		return a.permission(ctx, sid)
	case strings.Contains(text, "/tools"):
		return a.listTools(ctx, sid, s)
	case strings.Contains(text, "/resources"):
		return a.readResources(ctx, sid, s)
	case strings.Contains(text, "/tool "):
		rest, _ := field(text, "/tool ")
		name, args, _ := strings.Cut(rest, " ")
		return a.callTool(ctx, sid, s, name, strings.TrimSpace(args))
	case strings.Contains(text, "/echo-session"):
		return a.say(ctx, sid, "session "+sid)
	case strings.Contains(text, "/markdown"):
		return a.say(ctx, sid, richMarkdown)
	}
	if err := a.update(ctx, sid, acp.UpdatePlan(
		acp.PlanEntry{Content: "Read the message", Priority: acp.PlanEntryPriorityHigh, Status: acp.PlanEntryStatusCompleted},
		acp.PlanEntry{Content: "Answer", Priority: acp.PlanEntryPriorityMedium, Status: acp.PlanEntryStatusInProgress})); err != nil {
		return err
	}
	for _, c := range []string{"**Hello** from the ", "scripted agent.\n\n", "You said: `" + oneLine(text) + "`"} {
		if err := a.say(ctx, sid, c); err != nil {
			return err
		}
	}
	return nil
}

// richMarkdown is every construct the side panel styles, for its screenshots and contrast checks.
const richMarkdown = "Here is what I found on **the page**, with a `quick` summary:\n\n" +
	"| option | cost | notes |\n|:--|--:|:--|\n| **fast** | 2 | cached |\n| cheap | 1 | [docs](https://example.com) |\n\n" +
	"```js\nconst pick = (a, b) => (a.cost < b.cost ? a : b); // the cheaper one\n```\n\n" +
	"> Quoted from the page.\n\n1. Read the table\n2. Pick **cheap**"

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

func (a *Agent) permission(ctx context.Context, sid string) error {
	id := acp.ToolCallId("perm-1")
	if err := a.update(ctx, sid, acp.StartToolCall(id, "Write to the page", acp.WithStartKind(acp.ToolKindEdit),
		acp.WithStartStatus(acp.ToolCallStatusPending))); err != nil {
		return err
	}
	resp, err := a.conn.RequestPermission(ctx, acp.RequestPermissionRequest{
		SessionId: acp.SessionId(sid),
		ToolCall:  acp.ToolCallUpdate{ToolCallId: id, Title: acp.Ptr("Write to the page"), Kind: acp.Ptr(acp.ToolKindEdit)},
		Options: []acp.PermissionOption{
			{Kind: acp.PermissionOptionKindAllowOnce, Name: "Allow", OptionId: "allow"},
			{Kind: acp.PermissionOptionKindRejectOnce, Name: "Deny", OptionId: "reject"},
		},
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		_ = a.say(ctx, sid, "permission request failed: "+err.Error())
		return nil
	}
	switch {
	case resp.Outcome.Cancelled != nil:
		_ = a.update(ctx, sid, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		return context.Canceled
	case resp.Outcome.Selected != nil && resp.Outcome.Selected.OptionId == "allow":
		if err := a.update(ctx, sid, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusCompleted))); err != nil {
			return err
		}
		return a.say(ctx, sid, "permission granted")
	}
	if err := a.update(ctx, sid, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed))); err != nil {
		return err
	}
	return a.say(ctx, sid, "permission denied")
}

type headerRT struct {
	h  http.Header
	rt http.RoundTripper
}

func (x headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range x.h {
		r.Header[k] = v
	}
	return x.rt.RoundTrip(r)
}

func (a *Agent) mcpSession(ctx context.Context, s *session) (*mcp.ClientSession, error) {
	if s.mcp == nil {
		return nil, fmt.Errorf("no HTTP MCP server was given")
	}
	h := http.Header{}
	for _, hd := range s.mcp.Headers {
		h.Set(hd.Name, hd.Value)
	}
	cl := mcp.NewClient(&mcp.Implementation{Name: "torii-test-agent", Version: "1"}, nil)
	return cl.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: s.mcp.Url,
		HTTPClient: &http.Client{Transport: headerRT{h, http.DefaultTransport}}, MaxRetries: -1}, nil)
}

func (a *Agent) listTools(ctx context.Context, sid string, s *session) error {
	cs, err := a.mcpSession(ctx, s)
	if err != nil {
		return a.say(ctx, sid, "tools error: "+err.Error())
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return a.say(ctx, sid, "tools error: "+err.Error())
	}
	var names []string
	for _, t := range res.Tools {
		names = append(names, t.Name)
	}
	sort.Strings(names)
	return a.say(ctx, sid, "tools: "+strings.Join(names, ","))
}

func (a *Agent) readResources(ctx context.Context, sid string, s *session) error {
	cs, err := a.mcpSession(ctx, s)
	if err != nil {
		return a.say(ctx, sid, "resources error: "+err.Error())
	}
	defer cs.Close()
	res, err := cs.ListResources(ctx, nil)
	if err != nil {
		return a.say(ctx, sid, "resources error: "+err.Error())
	}
	lines := []string{fmt.Sprintf("resources: %d", len(res.Resources))}
	for _, r := range res.Resources {
		got, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: r.URI})
		switch {
		case err != nil:
			lines = append(lines, "resource "+r.Name+" error: "+err.Error())
		case len(got.Contents) == 1:
			lines = append(lines, "resource "+r.Name+": "+got.Contents[0].Text)
		}
	}
	return a.say(ctx, sid, strings.Join(lines, "\n"))
}

func (a *Agent) callTool(ctx context.Context, sid string, s *session, name, args string) error {
	id := acp.ToolCallId("tool-" + name)
	var in map[string]any
	if args != "" {
		if err := json.Unmarshal([]byte(args), &in); err != nil {
			return a.say(ctx, sid, "bad tool arguments: "+err.Error())
		}
	}
	if err := a.update(ctx, sid, acp.StartToolCall(id, name, acp.WithStartKind(acp.ToolKindFetch),
		acp.WithStartStatus(acp.ToolCallStatusInProgress), acp.WithStartRawInput(in))); err != nil {
		return err
	}
	cs, err := a.mcpSession(ctx, s)
	if err != nil {
		_ = a.update(ctx, sid, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		return a.say(ctx, sid, "tool error: "+err.Error())
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: in})
	if err != nil {
		_ = a.update(ctx, sid, acp.UpdateToolCall(id, acp.WithUpdateStatus(acp.ToolCallStatusFailed)))
		return a.say(ctx, sid, "tool error: "+err.Error())
	}
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	status := acp.ToolCallStatusCompleted
	prefix := "tool result: "
	if res.IsError {
		status, prefix = acp.ToolCallStatusFailed, "tool failed: "
	}
	if err := a.update(ctx, sid, acp.UpdateToolCall(id, acp.WithUpdateStatus(status),
		acp.WithUpdateContent([]acp.ToolCallContent{acp.ToolContent(acp.TextBlock(text.String()))}))); err != nil {
		return err
	}
	return a.say(ctx, sid, prefix+text.String())
}
