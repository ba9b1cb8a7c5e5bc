package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/torii-browser/torii/internal/suggest"
)

// DefaultListen is the loopback address the daemon binds unless told otherwise.
const DefaultListen = "127.0.0.1:7317"

// Config is config.json.
type Config struct {
	Listen       string   `json:"listen"` // default "127.0.0.1:7317"
	TLSCert      string   `json:"tlsCert,omitempty"`
	TLSKey       string   `json:"tlsKey,omitempty"`
	ExtensionIDs []string `json:"extensionIds,omitempty"` // extra extension IDs allowed as Origin besides the built-in one
	TokenOrigins []string `json:"tokenOrigins,omitempty"` // browser origins allowed for token clients, e.g. another side panel

	// The gateway (docs/gateway.md): ACP agents the daemon spawns for chat.
	Agents       []Agent `json:"agents,omitempty"`
	DefaultAgent string  `json:"defaultAgent,omitempty"` // default: the first agent
	RelayLimit   int     `json:"relayLimit,omitempty"`   // the panel's agent-to-agent loop guard; 0 = 4
	// AgentIdleTimeoutSec: a prompt with no update from the agent for this
	// long is reported not_responding; 0 = 120.
	AgentIdleTimeoutSec int `json:"agentIdleTimeoutSec,omitempty"`
	// MCPServers is the operator policy for type:"acp" MCP servers that
	// foreign ACP clients declare: only allowed names are connected, and
	// only pinned tools are exposed (deny-all when a server has no pins).
	MCPServers MCPServerPolicy `json:"mcpServers,omitzero"`
	// Broker: scheduling limits and tab hygiene for agent sessions;
	// zero fields take the defaults in BrokerDefaults.
	Broker Broker `json:"broker,omitzero"`
	// Audit is the audit database's retention policy (config/audit.go).
	Audit Audit `json:"audit,omitzero"`
	// FilesRoot is the download sandbox (internal/files): the folder under
	// which each agent session's saved files and allowed downloads go, one
	// folder per session; "" = ~/Downloads/torii. A leading ~/ is the home
	// folder. It must be absolute (SECURITY I-66).
	FilesRoot string `json:"filesRoot,omitempty"`
	// Team configures `torii serve --team` (team.go); the one-machine
	// daemon ignores it.
	Team *Team `json:"team,omitempty"`
}

// Broker holds the broker's limits. Zero means the default.
type Broker struct {
	MaxInFlight         int  `json:"maxInFlight,omitempty"`         // calls in the browser at once, all sessions: 8
	QueueBudgetMs       int  `json:"queueBudgetMs,omitempty"`       // a queued call fails with busy after this, if sooner than its own deadline: unset
	MaxQueuedPerSession int  `json:"maxQueuedPerSession,omitempty"` // a session's calls waiting at once: 16
	TabCap              int  `json:"tabCap,omitempty"`              // open agent tabs, all sessions: 20
	CloseTabsOnEnd      bool `json:"closeTabsOnEnd,omitempty"`      // close a session's tabs when it ends
	// SessionIdleSec ends a named session (torii mcp --session, torii exec)
	// after this long without a call: 900.
	SessionIdleSec int `json:"sessionIdleSec,omitempty"`
	// KeepManagedTabs keeps the tabs an agent opened in a browser torii
	// launched when its session ends; by default they close then.
	KeepManagedTabs bool `json:"keepManagedTabs,omitempty"`
	// ToolGroups are the tool groups offered to agents beside the core tools
	// (docs/tools.md lists each tool's group); none by default.
	ToolGroups []string `json:"toolGroups,omitempty"`
}

// BrokerDefaults are the broker's default limits.
// A queued call waits within its own deadline (SECURITY I-80): no separate
// queue budget unless one is set.
var BrokerDefaults = Broker{MaxInFlight: 8, MaxQueuedPerSession: 16, TabCap: 20, SessionIdleSec: 900}

// WithDefaults fills zero fields from BrokerDefaults.
func (b Broker) WithDefaults() Broker {
	d := BrokerDefaults
	if b.MaxInFlight > 0 {
		d.MaxInFlight = b.MaxInFlight
	}
	if b.QueueBudgetMs > 0 {
		d.QueueBudgetMs = b.QueueBudgetMs
	}
	if b.MaxQueuedPerSession > 0 {
		d.MaxQueuedPerSession = b.MaxQueuedPerSession
	}
	if b.TabCap > 0 {
		d.TabCap = b.TabCap
	}
	if b.SessionIdleSec > 0 {
		d.SessionIdleSec = b.SessionIdleSec
	}
	d.CloseTabsOnEnd = b.CloseTabsOnEnd
	d.KeepManagedTabs = b.KeepManagedTabs
	return d
}

// Agent is one ACP agent the daemon may spawn: a preset, or a command line.
// Fields set beside a preset override it.
type Agent struct {
	Name    string            `json:"name"`
	Preset  string            `json:"preset,omitempty"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
}

// MCPServerPolicy is the allowlist and per-server tool pins.
type MCPServerPolicy struct {
	Allow []string            `json:"allow,omitempty"`
	Pins  map[string][]string `json:"pins,omitempty"`
}

// Presets are the common ACP agents' command lines.
var Presets = map[string][]string{
	"claude-agent-acp": {"claude-agent-acp"},
	"gemini":           {"gemini", "--acp"},
	"codex-acp":        {"codex-acp"},
	"opencode":         {"opencode", "acp"},
}

// ResolvedAgents returns the agents with presets expanded (Command and Args
// filled in), in config order.
func (c Config) ResolvedAgents() []Agent {
	out := make([]Agent, 0, len(c.Agents))
	for _, a := range c.Agents {
		r := a
		if p, ok := Presets[a.Preset]; ok {
			if r.Command == "" {
				r.Command = p[0]
				if r.Args == nil {
					r.Args = append([]string(nil), p[1:]...)
				}
			}
		}
		out = append(out, r)
	}
	return out
}

// DefaultAgentName is defaultAgent, or the first agent's name.
func (c Config) DefaultAgentName() string {
	if c.DefaultAgent != "" || len(c.Agents) == 0 {
		return c.DefaultAgent
	}
	return c.Agents[0].Name
}

// Default returns the configuration used when no config.json exists.
func Default() Config { return Config{Listen: DefaultListen} }

// ParseError is returned by Load for a config file that is not valid JSON or
// holds unknown fields. Line and Column are 1-based; 0 when unknown.
type ParseError struct {
	File   string
	Line   int
	Column int
	Err    error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("config: %s:%d:%d: %v", e.File, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("config: %s: %v", e.File, e.Err)
}
func (e *ParseError) Unwrap() error { return e.Err }

// Load reads p.ConfigFile(). A missing file gives Default(); an empty
// "listen" is filled with the default. The result is not validated: call
// Validate.
func Load(p Paths) (Config, error) {
	path := p.ConfigFile()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Default(), nil
	}
	if err != nil {
		return Config{}, fmt.Errorf("config: read %s: %w", path, err)
	}
	c := Default()
	dec := json.NewDecoder(bytes.NewReader(data))
	// Unknown fields are usually typos ("tlscert"); silently ignoring them
	// could leave a non-loopback bind without the TLS the person meant.
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, parseError(path, data, dec, err)
	}
	if dec.More() {
		return Config{}, parseError(path, data, dec, errors.New("trailing data after the JSON object"))
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, parseError(path, data, dec, errors.New("trailing data after the JSON object"))
	}
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	return c, nil
}

func parseError(path string, data []byte, dec *json.Decoder, err error) error {
	off := -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset)
	case errors.As(err, &te):
		off = int(te.Offset)
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		off = len(data)
	default:
		off = int(dec.InputOffset())
		// encoding/json has no typed unknown-field error; point at the key.
		if name, ok := strings.CutPrefix(err.Error(), `json: unknown field "`); ok {
			name = strings.TrimSuffix(name, `"`)
			if i := bytes.Index(data, []byte(`"`+name+`"`)); i >= 0 {
				off = i
			}
			if c := suggest.Closest(name, jsonKeys()); c != "" {
				err = fmt.Errorf("%w (did you mean %q?)", err, c)
			}
		}
	}
	pe := &ParseError{File: path, Err: err}
	if off >= 0 {
		pe.Line, pe.Column = lineCol(data, off)
	}
	return pe
}

func lineCol(data []byte, off int) (line, col int) {
	if off > len(data) {
		off = len(data)
	}
	before := data[:off]
	line = bytes.Count(before, []byte{'\n'}) + 1
	col = off - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// Validation errors.
var (
	// ErrBadListen: Listen is not host:port with a numeric port.
	ErrBadListen = errors.New("config: listen must be host:port")
	// ErrNonLoopbackNeedsTLS: SECURITY I-1, a non-loopback bind needs TLS.
	ErrNonLoopbackNeedsTLS = errors.New("config: a non-loopback listen address needs tlsCert and tlsKey")
	// ErrTLSHalf: only one of tlsCert and tlsKey is set.
	ErrTLSHalf = errors.New("config: tlsCert and tlsKey must be set together")
	// ErrBadExtensionID: an extensionIds entry is not a Chrome extension ID.
	ErrBadExtensionID = errors.New("config: extensionIds entries must be 32 letters a-p")
	// ErrBadOrigin: a tokenOrigins entry is not scheme://host[:port].
	ErrBadOrigin = errors.New("config: tokenOrigins entries must be scheme://host[:port] with no path")
	// ErrBadAgent: an agents entry is incomplete, duplicated or names an unknown preset.
	ErrBadAgent = errors.New("config: bad agents entry")
	// ErrBadFilesRoot is a filesRoot that is not an absolute folder.
	ErrBadFilesRoot = errors.New("config: bad filesRoot")
)

// Validate checks the config. The "and a token" half of SECURITY I-1 is the
// daemon's to check, since only it knows whether tokens exist.
func (c Config) Validate() error {
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return fmt.Errorf("%w: %q: %v", ErrBadListen, c.Listen, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%w: %q: bad port", ErrBadListen, c.Listen)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return ErrTLSHalf
	}
	// SECURITY I-1: an empty host binds every interface, so it counts as
	// non-loopback.
	if !IsLoopbackHost(host) && (c.TLSCert == "" || c.TLSKey == "") {
		return fmt.Errorf("%w (listen %q)", ErrNonLoopbackNeedsTLS, c.Listen)
	}
	for _, id := range c.ExtensionIDs {
		if !validExtensionID(id) {
			return fmt.Errorf("%w: %q", ErrBadExtensionID, id)
		}
	}
	for _, o := range c.TokenOrigins {
		if !validOrigin(o) {
			return fmt.Errorf("%w: %q", ErrBadOrigin, o)
		}
	}
	if err := c.Audit.validate(); err != nil {
		return err
	}
	if c.FilesRoot != "" && !strings.HasPrefix(c.FilesRoot, "~/") && !filepath.IsAbs(c.FilesRoot) {
		return fmt.Errorf("%w: filesRoot %q must be an absolute folder (or start with ~/)", ErrBadFilesRoot, c.FilesRoot)
	}
	return c.validateAgents()
}

func (c Config) validateAgents() error {
	seen := map[string]bool{}
	for i, a := range c.Agents {
		switch {
		case a.Name == "" || strings.ContainsAny(a.Name, " \t\r\n@<>\"/"):
			return fmt.Errorf("%w: agents[%d]: name must be non-empty, without spaces, @, <, >, \" or /", ErrBadAgent, i)
		case seen[a.Name]:
			return fmt.Errorf("%w: agents[%d]: duplicate name %q", ErrBadAgent, i, a.Name)
		case a.Preset != "" && Presets[a.Preset] == nil:
			return fmt.Errorf("%w: agents[%d]: unknown preset %q", ErrBadAgent, i, a.Preset)
		case a.Preset == "" && a.Command == "":
			return fmt.Errorf("%w: agents[%d]: give a preset or a command", ErrBadAgent, i)
		}
		seen[a.Name] = true
	}
	if c.DefaultAgent != "" && !seen[c.DefaultAgent] {
		return fmt.Errorf("%w: defaultAgent %q is not in agents", ErrBadAgent, c.DefaultAgent)
	}
	if c.RelayLimit < 0 || c.AgentIdleTimeoutSec < 0 {
		return fmt.Errorf("%w: relayLimit and agentIdleTimeoutSec must not be negative", ErrBadAgent)
	}
	return nil
}

func validExtensionID(id string) bool {
	if len(id) != 32 {
		return false
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 'a' || id[i] > 'p' {
			return false
		}
	}
	return true
}

// validOrigin accepts exactly what a browser sends in Origin: scheme "://"
// host, optional port, nothing else, so the daemon can compare strings.
func validOrigin(o string) bool {
	scheme, rest, ok := strings.Cut(o, "://")
	if !ok || scheme == "" || rest == "" {
		return false
	}
	for _, r := range scheme {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.') {
			return false
		}
	}
	if strings.ContainsAny(rest, "/?#@ \t\r\n") {
		return false
	}
	return true
}

// IsLoopbackHost reports whether host names the loopback interface:
// "localhost", "::1", or any address in 127.0.0.0/8. host may carry a port
// and brackets ("[::1]:7317", "localhost:7317"), so the same function checks
// the bind address and the Host header (DNS rebinding, SECURITY I-2).
func IsLoopbackHost(host string) bool {
	h := host
	if sh, _, err := net.SplitHostPort(host); err == nil {
		h = sh
	} else if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		h = h[1 : len(h)-1]
	}
	if h == "" {
		return false
	}
	// A trailing dot is the same DNS name; Chrome may send it.
	h = strings.TrimSuffix(h, ".")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	// Zones ("::1%lo") are not something a Host header carries; refuse them.
	if strings.Contains(h, "%") {
		return false
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// HostAllowed is the one DNS-rebinding rule every HTTP endpoint applies
// (SECURITY I-2): a request that reached a loopback address — because the
// daemon binds loopback, or because it arrived through one — must name a
// loopback host. localAddr is the address the request arrived on ("" when
// unknown); trailing dots and letter case are normalised by IsLoopbackHost,
// so `localhost.` is the same name on every endpoint.
func HostAllowed(loopbackBind bool, localAddr, host string) bool {
	if !loopbackBind && (localAddr == "" || !IsLoopbackHost(localAddr)) {
		return true
	}
	return IsLoopbackHost(host)
}
