package mcpserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// drainTimeout caps how long EOF on stdin waits for answers still owed.
const drainTimeout = 2 * time.Second

// drain pairs a reader and a writer so that EOF on the input is held back
// until every request already read has been answered (or drainTimeout
// passes). Without it, `printf '…requests…' | torii mcp` would close the
// session before the SDK wrote the replies, and the client would get nothing.
type drain struct {
	mu sync.Mutex
	// ids of requests read but not yet answered (a subscriptions/listen
	// stream is answered only when it ends, so it is not owed)
	owed     map[string]bool
	answered chan struct{} // signalled on every reply
}

func newDrain() *drain { return &drain{owed: map[string]bool{}, answered: make(chan struct{}, 1)} }

type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func (d *drain) reader(r io.ReadCloser) io.ReadCloser {
	return &drainReader{d: d, rc: r, br: bufio.NewReader(r)}
}
func (d *drain) writer(w io.WriteCloser) io.WriteCloser {
	return &drainWriter{d: d, wc: w}
}

type drainReader struct {
	d   *drain
	rc  io.ReadCloser
	br  *bufio.Reader
	buf []byte
}

// Read hands out whole lines, noting request ids on the way.
func (r *drainReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		line, err := r.br.ReadBytes('\n')
		if len(line) > 0 {
			var e envelope
			if json.Unmarshal(bytes.TrimSpace(line), &e) == nil && e.Method != "" && e.Method != "subscriptions/listen" && len(e.ID) > 0 && string(e.ID) != "null" {
				r.d.mu.Lock()
				r.d.owed[string(e.ID)] = true
				r.d.mu.Unlock()
			}
			r.buf = line
		} else if err != nil {
			if err == io.EOF {
				r.d.wait()
			}
			return 0, err
		}
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *drainReader) Close() error { return r.rc.Close() }

func (d *drain) wait() {
	deadline := time.After(drainTimeout)
	for {
		d.mu.Lock()
		n := len(d.owed)
		d.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-d.answered:
		case <-deadline:
			return
		}
	}
}

type drainWriter struct {
	d  *drain
	wc io.WriteCloser
}

// Write passes replies through and crosses their ids off. The SDK writes one
// whole message per call.
func (w *drainWriter) Write(p []byte) (int, error) {
	n, err := w.wc.Write(p)
	var e envelope
	if json.Unmarshal(bytes.TrimSpace(p), &e) == nil && e.Method == "" && len(e.ID) > 0 {
		w.d.mu.Lock()
		delete(w.d.owed, string(e.ID))
		w.d.mu.Unlock()
		select {
		case w.d.answered <- struct{}{}:
		default:
		}
	}
	return n, err
}

func (w *drainWriter) Close() error { return w.wc.Close() }
