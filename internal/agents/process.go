// Package agents runs the ACP agents the daemon spawns for chat
// (docs/gateway.md): their configuration and presets, the process, and the
// client side of ACP over the agent's stdio, plus the bounded buffer a
// session's updates pass through.
package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/wire"
)

// Info describes a configured agent (gateway method torii/agents).
type Info struct {
	Name      string `json:"name"`
	Preset    string `json:"preset,omitempty"`
	Command   string `json:"command"`
	Available bool   `json:"available"`
}

// Available reports whether the agent's command can be found (on PATH, or
// as a path).
func Available(a config.Agent) bool {
	if a.Command == "" {
		return false
	}
	_, err := exec.LookPath(a.Command)
	return err == nil
}

// Describe lists agents for torii/agents.
func Describe(list []config.Agent) []Info {
	out := make([]Info, 0, len(list))
	for _, a := range list {
		out = append(out, Info{Name: a.Name, Preset: a.Preset, Command: a.Command, Available: Available(a)})
	}
	return out
}

// Handlers receive what the agent sends. Notify runs on the reader
// goroutine and must not block for long (it is the backpressure point);
// Request runs on its own goroutine.
type Handlers struct {
	Notify  func(method string, params json.RawMessage)
	Request func(ctx context.Context, method string, params json.RawMessage) (any, *wire.Error)
}

// Process is one running agent and its ACP connection.
type Process struct {
	Spec config.Agent
	cmd  *exec.Cmd
	rpc  *rpcConn
	log  *slog.Logger

	stderr *tail
	exited chan struct{}
	exit   error
	killed atomic.Bool
	// Init is the agent's initialize answer.
	Init InitializeResult
}

// InitializeResult is the part of the agent's initialize answer the
// gateway uses.
type InitializeResult struct {
	ProtocolVersion   int `json:"protocolVersion"`
	AgentCapabilities struct {
		LoadSession         bool `json:"loadSession"`
		SessionCapabilities struct {
			Resume json.RawMessage `json:"resume,omitempty"`
		} `json:"sessionCapabilities"`
		MCPCapabilities struct {
			HTTP bool `json:"http"`
		} `json:"mcpCapabilities"`
	} `json:"agentCapabilities"`
	AgentInfo json.RawMessage `json:"agentInfo,omitempty"`
}

// Start spawns the agent in its own process group (so Kill reaches its
// children) with the configured environment on top of the daemon's.
func Start(spec config.Agent, cwd string, h Handlers, log *slog.Logger) (*Process, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if spec.Command == "" {
		return nil, fmt.Errorf("agents: %s: no command", spec.Name)
	}
	path, err := exec.LookPath(spec.Command)
	if err != nil {
		return nil, fmt.Errorf("agents: %s: command %q not found: %w", spec.Name, spec.Command, err)
	}
	cmd := exec.Command(path, spec.Args...)
	cmd.Env = os.Environ()
	keys := make([]string, 0, len(spec.Env))
	for k := range spec.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cmd.Env = append(cmd.Env, k+"="+spec.Env[k])
	}
	if cwd != "" {
		if st, err := os.Stat(cwd); err == nil && st.IsDir() {
			cmd.Dir = cwd
		}
	}
	setProcessGroup(cmd)
	p := &Process{Spec: spec, cmd: cmd, log: log, stderr: &tail{max: 16 << 10}, exited: make(chan struct{})}
	cmd.Stderr = p.stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("agents: start %s: %w", spec.Name, err)
	}
	pw.Close()
	notify, request := h.Notify, h.Request
	if notify == nil {
		notify = func(string, json.RawMessage) {}
	}
	if request == nil {
		request = func(_ context.Context, m string, _ json.RawMessage) (any, *wire.Error) {
			return nil, wire.Errorf(wire.CodeMethodNotFound, "method %q not found", m)
		}
	}
	p.rpc = newRPCConn(pr, stdin, log, notify, request)
	go func() {
		p.exit = cmd.Wait()
		// Let the reader drain what the agent wrote before it exited, then
		// unblock it (a grandchild may still hold the pipe open).
		select {
		case <-p.rpc.Done():
		case <-time.After(time.Second):
		}
		pr.Close()
		<-p.rpc.Done()
		close(p.exited)
		log.Info("agents: agent exited", "agent", spec.Name, "pid", cmd.Process.Pid, "err", p.exit, "killed", p.killed.Load())
	}()
	log.Info("agents: agent started", "agent", spec.Name, "pid", cmd.Process.Pid)
	return p, nil
}

// Initialize runs ACP initialize. Torii offers no fs or terminal methods.
func (p *Process) Initialize(ctx context.Context, clientName, clientVersion string) error {
	params := map[string]any{
		"protocolVersion": 1,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": false, "writeTextFile": false},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": clientName, "version": clientVersion},
	}
	if err := p.Call(ctx, "initialize", params, &p.Init); err != nil {
		return fmt.Errorf("agents: %s initialize: %w", p.Spec.Name, err)
	}
	if p.Init.ProtocolVersion != 1 {
		return fmt.Errorf("agents: %s speaks ACP protocol %d; torii speaks 1", p.Spec.Name, p.Init.ProtocolVersion)
	}
	return nil
}

// CanResume reports whether the agent advertised session/resume.
func (p *Process) CanResume() bool {
	r := p.Init.AgentCapabilities.SessionCapabilities.Resume
	return len(r) > 0 && string(r) != "null" && string(r) != "false"
}

// Call sends a request to the agent.
func (p *Process) Call(ctx context.Context, method string, params, result any) error {
	return p.rpc.Call(ctx, method, params, result)
}

// Notify sends a notification to the agent.
func (p *Process) Notify(method string, params any) error { return p.rpc.Notify(method, params) }

// Exited is closed once the process has ended and its output is read.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Crashed reports whether the process ended without Kill.
func (p *Process) Crashed() bool {
	select {
	case <-p.exited:
		return !p.killed.Load()
	default:
		return false
	}
}

// ExitDetail is a one-line account of how the process ended, with the
// tail of its stderr.
func (p *Process) ExitDetail() string {
	s := "exited"
	if p.exit != nil {
		s = p.exit.Error()
	}
	if t := p.stderr.String(); t != "" {
		s += ": " + lastLine(t)
	}
	return s
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Kill ends the agent and its process group; it returns when the process
// has exited (or after 5 s).
func (p *Process) Kill() {
	p.killed.Store(true)
	select {
	case <-p.exited:
		return
	default:
	}
	killGroup(p.cmd)
	select {
	case <-p.exited:
	case <-time.After(5 * time.Second):
	}
}

// tail keeps the last max bytes written (the agent's stderr).
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(b []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, b...)
	if len(t.b) > t.max {
		t.b = append([]byte(nil), t.b[len(t.b)-t.max:]...)
	}
	return len(b), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

func lastLine(s string) string {
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '\n' {
			s = s[i+1:]
			break
		}
	}
	if len(s) > 200 {
		s = s[:200]
	}
	return s
}

var _ io.Writer = (*tail)(nil)
