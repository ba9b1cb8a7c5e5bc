package link

import (
	"strings"

	"github.com/torii-browser/torii/internal/jsonrpc"
)

const maxLoggedParams = 1024

// logFrame logs one frame when Verbose is on. SECURITY I-10: torii/*
// params (nonces, keys, signatures, OTP proofs) and every result are
// never logged — only method, id and size.
func (s *Server) logFrame(dir string, c *Conn, data []byte) {
	if !s.opts.Verbose {
		return
	}
	id, method, ok := jsonrpc.Peek(data)
	attrs := []any{"dir", dir, "conn", c.id, "bytes", len(data)}
	if !ok {
		s.log.Debug("link: frame (not JSON)", attrs...)
		return
	}
	attrs = append(attrs, "id", string(id))
	if method == "" {
		s.log.Debug("link: frame response", attrs...)
		return
	}
	attrs = append(attrs, "method", method)
	if !strings.HasPrefix(method, "torii/") && len(data) <= maxLoggedParams {
		attrs = append(attrs, "frame", string(data))
	} else if strings.HasPrefix(method, "torii/") {
		attrs = append(attrs, "params", "[redacted]")
	}
	s.log.Debug("link: frame", attrs...)
}
