package daemon

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/link"
)

// HTTP deadlines (SECURITY I-49). Every request's headers must arrive within
// headerTimeout and its body within bodyTimeout; a write that the peer does
// not drain fails after writeTimeout; an idle keep-alive connection is
// closed after idleTimeout. WebSocket connections (/acp) keep their own
// deadlines once upgraded (internal/link).
const (
	headerTimeout = 5 * time.Second
	bodyTimeout   = 30 * time.Second
	writeTimeout  = 10 * time.Second
	idleTimeout   = 30 * time.Second
	// maxHeaderBytes: the endpoints need a few short headers.
	maxHeaderBytes = 64 << 10
)

// httpLimits are the deadlines in force; tests shorten them.
type httpLimits struct {
	header, body, write, idle time.Duration
}

func (l httpLimits) withDefaults() httpLimits {
	if l.header <= 0 {
		l.header = headerTimeout
	}
	if l.body <= 0 {
		l.body = bodyTimeout
	}
	if l.write <= 0 {
		l.write = writeTimeout
	}
	if l.idle <= 0 {
		l.idle = idleTimeout
	}
	return l
}

// guard wraps every endpoint: the one Host rule (SECURITY I-2), a deadline
// on the request body, a deadline on each write, refusals that close the
// connection instead of waiting for a body the client never finishes, and
// the one challenge rule: every 401 says how to authenticate.
func guard(loopback bool, lim httpLimits, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer serving(r.Context())()
		local := ""
		if a, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok && a != nil {
			local = a.String()
		}
		if !config.HostAllowed(loopback, local, r.Host) {
			w.Header().Set("Connection", "close")
			http.Error(w, "host not allowed", http.StatusForbidden)
			return
		}
		rc := http.NewResponseController(w)
		if r.Body != nil && r.Body != http.NoBody {
			// SECURITY I-49: a body that never finishes fails after the deadline
			// instead of holding the connection; once read, the deadline is
			// lifted so a long streamed answer is not cut.
			_ = rc.SetReadDeadline(time.Now().Add(lim.body))
			r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		} else if isWebSocketUpgrade(r) {
			// The link sets its own deadlines on the upgraded connection; a
			// deadline left here would outlive the request on the hijacked conn.
			next.ServeHTTP(&refusalCloser{ResponseWriter: w, req: r}, r)
			return
		}
		dw := &deadlineWriter{refusalCloser: refusalCloser{ResponseWriter: w, req: r}, rc: rc, timeout: lim.write}
		// The server's final flush after the handler is bounded too.
		defer func() { _ = rc.SetWriteDeadline(time.Now().Add(lim.write)) }()
		next.ServeHTTP(dw, r)
	})
}

// bearerChallenge is the WWW-Authenticate of a 401: error="invalid_token"
// when a bearer token was shown (wrong, revoked), in the Authorization
// header or as the /acp subprotocol; no error code when none was (RFC 6750
// §3.1). The realm names where tokens come from.
func bearerChallenge(r *http.Request) string {
	const c = `Bearer realm="torii"`
	if f := strings.Fields(r.Header.Get("Authorization")); len(f) >= 1 && strings.EqualFold(f[0], "bearer") {
		return c + `, error="invalid_token"`
	}
	for _, h := range r.Header.Values("Sec-WebSocket-Protocol") {
		if strings.Contains(h, link.BearerSubprotocolPrefix) {
			return c + `, error="invalid_token"`
		}
	}
	return c
}

func isWebSocketUpgrade(r *http.Request) bool {
	return r.Method == http.MethodGet && r.Header.Get("Upgrade") != ""
}

// refusalCloser marks every error response "Connection: close": net/http
// would otherwise read up to 256 KiB of an unread body before answering,
// so a client that never finishes its body would never hear its 401.
// Every 401, from any endpoint (/acp, /mcp), carries a Bearer challenge
// (RFC 9110 §11.6.1), unless the handler set its own.
type refusalCloser struct {
	http.ResponseWriter
	req   *http.Request
	wrote bool
}

func (w *refusalCloser) WriteHeader(code int) {
	if !w.wrote && code >= 400 {
		w.Header().Set("Connection", "close")
	}
	// SECURITY I-8: one challenge rule for every endpoint.
	if !w.wrote && code == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", bearerChallenge(w.req))
	}
	w.wrote = true
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalCloser) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

func (w *refusalCloser) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack lets the WebSocket library take the connection over; it asserts
// http.Hijacker directly rather than unwrapping.
func (w *refusalCloser) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

// deadlineWriter bounds each write (and flush) by the write deadline and
// lifts it afterwards, so a long-lived event stream that is idle holds no
// expired deadline while one that the peer stops reading fails.
type deadlineWriter struct {
	refusalCloser
	rc      *http.ResponseController
	timeout time.Duration
}

func (w *deadlineWriter) Write(p []byte) (int, error) {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	defer func() { _ = w.rc.SetWriteDeadline(time.Time{}) }()
	return w.refusalCloser.Write(p)
}

func (w *deadlineWriter) FlushError() error {
	_ = w.rc.SetWriteDeadline(time.Now().Add(w.timeout))
	defer func() { _ = w.rc.SetWriteDeadline(time.Time{}) }()
	return w.rc.Flush()
}

// deadlineBody lifts the body's read deadline once the body is consumed.
type deadlineBody struct {
	io.ReadCloser
	once sync.Once
	lift func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.lift)
	}
	return n, err
}
