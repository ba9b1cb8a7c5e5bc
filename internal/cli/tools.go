package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/extension"
)

type toolsListResult struct {
	Tools              []*mcp.Tool `json:"tools"`
	ExtensionConnected bool        `json:"extensionConnected"`
}

func runTools(ctx context.Context, s Stdio, args []string) error {
	fs := newFlags(s, "tools", "tools [--json]\n\nLists the browser tools the connected extension serves: name, R (reads only) or W\n(acts on the page or the browser), and description. --json prints the raw MCP tool list.\nWithout a running daemon it lists the catalogue built into torii.")
	asJSON := fs.Bool("json", false, "print the tools as MCP Tool objects (JSON)")
	pos, err := parseInterspersed(fs, s, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return &UsageError{Msg: "tools takes no arguments"}
	}
	var raw struct {
		Tools              json.RawMessage `json:"tools"`
		ExtensionConnected bool            `json:"extensionConnected"`
	}
	c, _, err := dial(ctx)
	switch {
	case errors.Is(err, ErrNotRunning):
		// No daemon: the catalogue built into this binary is the same list, read offline.
		tools, cerr := extension.Catalogue()
		if cerr != nil {
			return cerr
		}
		if len(tools) == 0 {
			return fmt.Errorf("%w; this torii was built without the extension, so it has no tool list of its own", err)
		}
		if raw.Tools, err = json.Marshal(tools); err != nil {
			return err
		}
		fmt.Fprintln(s.Err, "torii tools: the daemon is not running; listed: the catalogue built into torii (start it with `torii launch` to call them)")
	case err != nil:
		return err
	default:
		defer c.Close()
		if err := c.Call(ctx, "tools.list", nil, &raw); err != nil {
			return err
		}
		switch {
		case len(raw.Tools) == 0 || string(raw.Tools) == "null" || string(raw.Tools) == "[]":
			fmt.Fprintln(s.Err, "torii tools: no tools yet: the Torii extension is not connected (see `torii status`, `torii doctor`)")
		case !raw.ExtensionConnected:
			fmt.Fprintln(s.Err, "torii tools: the extension is not connected; calls fail until it is (listed: the last catalogue it served, or the one built into torii)")
		}
	}
	var r toolsListResult
	if err := json.Unmarshal(raw.Tools, &r.Tools); err != nil {
		return fmt.Errorf("tools.list: %w", err)
	}
	if *asJSON {
		if len(r.Tools) == 0 {
			raw.Tools = json.RawMessage("[]")
		}
		return writeIndented(s, raw.Tools)
	}
	width := 0
	for _, t := range r.Tools {
		width = max(width, len(t.Name))
	}
	for _, t := range r.Tools {
		desc, _, _ := strings.Cut(strings.TrimSpace(t.Description), "\n")
		fmt.Fprintf(s.Out, "%-*s  %s  %s\n", width, t.Name, toolClass(t), desc)
	}
	return nil
}

// toolClass is R for a tool annotated read-only, else W (MCP's default for
// a tool without annotations is "may write").
func toolClass(t *mcp.Tool) string {
	if t.Annotations != nil && t.Annotations.ReadOnlyHint {
		return "R"
	}
	return "W"
}

func writeIndented(s Stdio, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := s.Out.Write(b.Bytes())
	return err
}
