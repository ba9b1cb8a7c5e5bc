package link

import (
	"encoding/json"
	"strings"

	"github.com/torii-browser/torii/internal/logx"
	"github.com/torii-browser/torii/internal/wire"
)

// logFrame logs one frame when Verbose is on. SECURITY I-10: torii/*
// params (nonces, keys, signatures, OTP proofs) and every result are
// never logged — only method, id and size. SECURITY I-33: no params are
// logged at all: mcp/message carries tool arguments (typed text, URLs) and
// session/prompt the person's words, so a frame is logged as its method,
// id and size, plus, for mcp/message, the inner MCP method and tool name.
func (s *Server) logFrame(dir string, c *Conn, data []byte) {
	if !s.opts.Verbose {
		return
	}
	id, method, ok := wire.Peek(data)
	attrs := []any{"dir", dir, "conn", c.id, "bytes", len(data)}
	if !ok {
		s.log.Debug("link: frame (not JSON)", attrs...)
		return
	}
	// SECURITY I-50: id, method and tool name are the peer's; each is cut.
	attrs = append(attrs, "id", logx.Field(string(id)))
	if method == "" {
		s.log.Debug("link: frame response", attrs...)
		return
	}
	attrs = append(attrs, "method", logx.Field(method))
	if strings.HasPrefix(method, "torii/") {
		attrs = append(attrs, "params", "[redacted]")
	} else if method == "mcp/message" {
		var m struct {
			Params struct {
				Method string `json:"method"`
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &m) == nil {
			attrs = append(attrs, "inner", logx.Field(m.Params.Method))
			if m.Params.Method == "tools/call" {
				attrs = append(attrs, "tool", logx.Field(m.Params.Params.Name))
			}
		}
	}
	s.log.Debug("link: frame", attrs...)
}
