package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/daemon"
	"github.com/torii-browser/torii/internal/mcpserver"
	"github.com/torii-browser/torii/internal/suggest"
	"github.com/torii-browser/torii/internal/toolerr"
	"github.com/torii-browser/torii/internal/version"
)

const execSynopsis = `exec [--json] [--out DIR] [--timeout D] TOOL [key=value…]

Calls one browser tool and prints its result. Each value is parsed as JSON
when it parses (numbers, true/false, null, "quoted strings", {objects},
[arrays]) and taken as a plain string otherwise:

  torii exec navigate url=https://example.com
  torii exec click ref=b12 observe=true
  torii exec fill ref=b7 value='"00123"'      # quoted: stays a string
  torii exec screenshot --out /tmp            # image saved, its path printed

Text content is printed; images are saved as torii-<tool>-<time>.<png|jpg>
in the current directory (or --out DIR). A tool error prints
"error <code>: <message>" and a hint on stderr and exits 1.`

func runExec(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "exec", execSynopsis)
	asJSON := fs.Bool("json", false, "print the whole MCP CallToolResult as JSON")
	outDir := fs.String("out", "", "directory for saved images (default: the current directory)")
	timeout := fs.Duration("timeout", 0, fmt.Sprintf("give up after this long, time in the queue included (default %.0fs, under an MCP client's 60s; at most %.0fs)", broker.DefaultCallTimeout.Seconds(), broker.MaxCallTimeout.Seconds()))
	label := fs.String("session", "exec", "the named session the call runs in: the same name, in any process, shares its tabs (also after a daemon restart)")
	fs.StringVar(label, "session-label", "exec", "the same as --session")
	end := fs.Bool("end", false, "end the named session now, instead of a call (its tabs close in a browser torii launched)")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if *end {
		if len(pos) > 0 {
			return &UsageError{Msg: "--end takes no tool: torii exec --session NAME --end"}
		}
		return endSession(ctx, s, *label)
	}
	if len(pos) == 0 {
		return &UsageError{Msg: "exec needs a tool name (see `torii tools`)"}
	}
	name := pos[0]
	arguments, err := parseToolArgs(pos[1:])
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if *timeout < 0 || *timeout > broker.MaxCallTimeout {
		return &UsageError{Msg: fmt.Sprintf("--timeout must be between 0 and %s", broker.MaxCallTimeout)}
	}
	p, err := paths()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	// The same MCP path as every agent's, in the named session of the label:
	// each exec is its own process, and sees the tabs the ones before it opened.
	hello := mcpserver.RelayHelloParams{SessionLabel: *label, Shared: true, TimeoutMs: timeout.Milliseconds()}
	cs, err := mcpserver.ConnectMCP(ctx, p.MCPSocket(), hello, &mcp.Implementation{Name: "torii-exec", Version: version.Version})
	if errors.Is(err, control.ErrDaemonNotRunning) {
		return ErrNotRunning
	}
	if err != nil {
		return err
	}
	// Closing the connection also cancels a call still running (SIGINT).
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: arguments})
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(s.Err, "torii exec: %s cancelled\n", name)
			return exitError{130}
		}
		return err
	}

	if res.IsError {
		e := toolerr.FromResult(res)
		if e != nil && e.Code == toolerr.ToolNotFound {
			return unknownTool(ctx, s, cs, name)
		}
		if *asJSON {
			if err := writeJSON(s.Out, res); err != nil {
				return err
			}
		}
		printToolError(s, res, e)
		return exitError{ExitFailure}
	}
	if *asJSON {
		return writeJSON(s.Out, res)
	}
	return printResult(s, name, res, *outDir)
}

// parseToolArgs turns key=value words into the arguments object: a value
// that parses as JSON is that JSON, anything else is a string.
func parseToolArgs(words []string) (json.RawMessage, error) {
	type kv struct {
		k string
		v json.RawMessage
	}
	var kvs []kv
	seen := map[string]bool{}
	for _, w := range words {
		k, v, ok := strings.Cut(w, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("argument %q is not key=value", w)
		}
		if seen[k] {
			return nil, fmt.Errorf("argument %q is given twice", k)
		}
		seen[k] = true
		var val json.RawMessage
		if t := strings.TrimSpace(v); t != "" && json.Valid([]byte(t)) {
			val = json.RawMessage(t)
		} else {
			val = jsonString(v)
		}
		kvs = append(kvs, kv{k, val})
	}
	// Keep the order given on the command line.
	var b bytes.Buffer
	b.WriteByte('{')
	for i, e := range kvs {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(jsonString(e.k))
		b.WriteByte(':')
		b.Write(e.v)
	}
	b.WriteByte('}')
	var compact bytes.Buffer
	if err := json.Compact(&compact, b.Bytes()); err != nil {
		return nil, err
	}
	return compact.Bytes(), nil
}

// jsonString encodes s without HTML escaping (URLs keep their &).
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return bytes.TrimRight(b.Bytes(), "\n")
}

func printToolError(s Stdio, res *mcp.CallToolResult, e *toolerr.Error) {
	if e != nil {
		fmt.Fprintf(s.Err, "error %s: %s\n", e.Code, e.Message)
		if e.Hint != "" {
			fmt.Fprintf(s.Err, "hint: %s\n", e.Hint)
		}
		return
	}
	var texts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			texts = append(texts, t.Text)
		}
	}
	msg := strings.Join(texts, "\n")
	if msg == "" {
		msg = "the tool reported an error without details"
	}
	fmt.Fprintf(s.Err, "error: %s\n", strings.TrimRight(msg, "\n"))
}

// printResult prints text content, saves images (printing their paths),
// and prints anything else as JSON.
func printResult(s Stdio, tool string, res *mcp.CallToolResult, dir string) error {
	stamp := time.Now().Format("20060102-150405.000")
	stamp = strings.Replace(stamp, ".", "-", 1)
	images := 0
	for _, c := range res.Content {
		switch c := c.(type) {
		case *mcp.TextContent:
			fmt.Fprint(s.Out, c.Text)
			if !strings.HasSuffix(c.Text, "\n") {
				fmt.Fprintln(s.Out)
			}
		case *mcp.ImageContent:
			images++
			p, err := saveImage(dir, tool, stamp, images, c)
			if err != nil {
				return err
			}
			fmt.Fprintln(s.Out, p)
		default:
			b, err := json.Marshal(c)
			if err != nil {
				return err
			}
			fmt.Fprintln(s.Out, string(b))
		}
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		return writeJSON(s.Out, res.StructuredContent)
	}
	return nil
}

func imageExt(mime string) string {
	switch strings.ToLower(mime) {
	case "image/png":
		return "png"
	case "image/jpeg", "image/jpg":
		return "jpg"
	case "image/webp":
		return "webp"
	case "image/gif":
		return "gif"
	}
	return "img"
}

// saveImage writes an image owner-only (a screenshot may show private
// pages) without overwriting anything, and returns its absolute path.
func saveImage(dir, tool, stamp string, n int, c *mcp.ImageContent) (string, error) {
	if dir == "" {
		dir = "."
	}
	data := c.Data
	if len(data) == 0 {
		return "", errors.New("the tool returned an empty image")
	}
	// The SDK decodes base64 on unmarshal; tolerate a double encoding.
	if dec, err := base64.StdEncoding.DecodeString(string(data)); err == nil && len(dec) > 0 && !isImage(data) && isImage(dec) {
		data = dec
	}
	base := "torii-" + safeName(tool) + "-" + stamp
	if n > 1 {
		base += fmt.Sprintf("-%d", n)
	}
	ext := "." + imageExt(c.MIMEType)
	for i := 0; ; i++ {
		name := base + ext
		if i > 0 {
			name = fmt.Sprintf("%s_%d%s", base, i, ext)
		}
		p := filepath.Join(dir, name)
		f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, os.ErrExist) && i < 100 {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("save image: %w", err)
		}
		_, werr := f.Write(data)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("save image: %w", werr)
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		return p, nil
	}
}

func isImage(b []byte) bool {
	return bytes.HasPrefix(b, []byte("\x89PNG")) || bytes.HasPrefix(b, []byte("\xff\xd8\xff")) ||
		bytes.HasPrefix(b, []byte("RIFF")) || bytes.HasPrefix(b, []byte("GIF8"))
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// unknownTool reports a name the catalogue lacks, with the close names.
func unknownTool(ctx context.Context, s Stdio, cs *mcp.ClientSession, name string) error {
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			break
		}
		names = append(names, t.Name)
	}
	fmt.Fprintf(s.Err, "torii exec: no tool named %q\n", name)
	if close := suggest.Close(name, names); len(close) > 0 {
		fmt.Fprintf(s.Err, "did you mean: %s\n", strings.Join(close, ", "))
	}
	fmt.Fprintln(s.Err, "run `torii tools` for the list")
	return exitError{ExitFailure}
}

// endSession ends a named session now (sessions.end).
func endSession(ctx context.Context, s Stdio, name string) error {
	c, _, err := dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := c.Call(ctx, "sessions.end", daemon.SessionsEndParams{Name: name}, nil); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "ended session %q\n", name)
	return nil
}
