package mcpserver

// Why this file exists: the daemon's broker runs a session's calls strictly
// in the order they reach it, but go-sdk hands every incoming call to its
// own goroutine (jsonrpc2.Async, before any middleware or tool handler), so
// two tools/call an agent pipelines a few ms apart could reach the daemon
// swapped. Messages are still read one by one, in arrival order: the reader
// below stamps each tools/call with a number (params._meta["torii/seq"]),
// and callTool waits until every earlier-stamped call has been sent to the
// daemon (not answered: calls still run concurrently) before sending its own.
// A turn is released when the call is written to the control socket, when
// its handler returns, or when any reply to its request id is written (a
// call the SDK answers without running the handler, e.g. cancelled while
// queued). Waits are bounded: a number nobody releases is given up on.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// metaSeq is the _meta key of the arrival number; it never leaves this
// process (callTool forwards neither _meta nor this key).
const metaSeq = "torii/seq"

// orderWaitMax bounds how long a call waits for earlier ones to be sent.
const orderWaitMax = 2 * time.Second

type order struct {
	mu      sync.Mutex
	next    uint64
	open    map[uint64]string // stamped, not yet released: number → request id
	byID    map[string]uint64
	changed chan struct{} // closed (and replaced) on every release
}

func newOrder() *order {
	return &order{open: map[uint64]string{}, byID: map[string]uint64{}, changed: make(chan struct{})}
}

// stamp numbers the tools/call request with id; ok is false for a request
// id already pending (the SDK rejects the duplicate without a usable id).
func (o *order) stamp(id string) (n uint64, ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, dup := o.byID[id]; dup {
		return 0, false
	}
	o.next++
	o.open[o.next] = id
	o.byID[id] = o.next
	return o.next, true
}

func (o *order) release(n uint64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.drop(n)
}

func (o *order) releaseID(id string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n, ok := o.byID[id]; ok {
		o.drop(n)
	}
}

func (o *order) drop(n uint64) {
	id, ok := o.open[n]
	if !ok {
		return
	}
	delete(o.open, n)
	delete(o.byID, id)
	close(o.changed)
	o.changed = make(chan struct{})
}

// wait returns once no number below n is open, ctx ends, or orderWaitMax
// passes (then the laggards are given up on, so later calls do not wait
// for them again).
func (o *order) wait(ctx context.Context, n uint64) error {
	t := time.NewTimer(orderWaitMax)
	defer t.Stop()
	for {
		o.mu.Lock()
		earlier := false
		for m := range o.open {
			if m < n {
				earlier = true
				break
			}
		}
		ch := o.changed
		o.mu.Unlock()
		if !earlier {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			o.mu.Lock()
			for m := range o.open {
				if m < n {
					o.drop(m)
				}
			}
			o.mu.Unlock()
			return nil
		}
	}
}

// turn reads and strips the arrival number of a tools/call and waits for
// its turn; the returned release is idempotent. Unstamped calls (batches,
// in-memory transports) go at once.
func (o *order) turn(ctx context.Context, p *mcp.CallToolParamsRaw) (release func(), err error) {
	f, ok := p.Meta[metaSeq].(float64)
	if !ok {
		return func() {}, nil
	}
	delete(p.Meta, metaSeq)
	if len(p.Meta) == 0 {
		p.Meta = nil
	}
	n := uint64(f)
	release = sync.OnceFunc(func() { o.release(n) })
	if err := o.wait(ctx, n); err != nil {
		release()
		return release, err
	}
	return release, nil
}

type orderReader struct {
	o   *order
	rc  io.ReadCloser
	br  *bufio.Reader
	buf []byte
}

func (o *order) reader(r io.ReadCloser) io.ReadCloser {
	return &orderReader{o: o, rc: r, br: bufio.NewReader(r)}
}

// Read hands out whole lines, stamping each tools/call request.
func (r *orderReader) Read(p []byte) (int, error) {
	if len(r.buf) == 0 {
		line, err := r.br.ReadBytes('\n')
		if len(line) == 0 {
			return 0, err
		}
		r.buf = r.o.stampLine(line)
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *orderReader) Close() error { return r.rc.Close() }

// stampLine adds the arrival number to a single tools/call request line;
// anything else (or anything it cannot parse) passes unchanged.
func (o *order) stampLine(line []byte) []byte {
	trimmed := bytes.TrimSpace(line)
	if !bytes.HasPrefix(trimmed, []byte("{")) || !bytes.Contains(trimmed, []byte(`"tools/call"`)) {
		return line
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(trimmed, &msg) != nil {
		return line
	}
	var method string
	id := string(bytes.TrimSpace(msg["id"]))
	if json.Unmarshal(msg["method"], &method) != nil || method != "tools/call" || id == "" || id == "null" {
		return line
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil {
		return line
	}
	meta := map[string]any{}
	if raw, ok := params["_meta"]; ok && string(raw) != "null" {
		if json.Unmarshal(raw, &meta) != nil || meta == nil {
			return line
		}
	}
	n, ok := o.stamp(id)
	if !ok {
		return line
	}
	meta[metaSeq] = n
	var err error
	if params["_meta"], err = json.Marshal(meta); err == nil {
		if msg["params"], err = json.Marshal(params); err == nil {
			var out []byte
			if out, err = json.Marshal(msg); err == nil {
				return append(out, '\n')
			}
		}
	}
	o.release(n)
	return line
}

type orderWriter struct {
	o  *order
	wc io.WriteCloser
}

func (o *order) writer(w io.WriteCloser) io.WriteCloser { return &orderWriter{o: o, wc: w} }

// Write passes messages through; a reply releases its request's turn (the
// SDK writes one whole message per call).
func (w *orderWriter) Write(p []byte) (int, error) {
	var e struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if json.Unmarshal(bytes.TrimSpace(p), &e) == nil && e.Method == "" && len(e.ID) > 0 {
		w.o.releaseID(string(bytes.TrimSpace(e.ID)))
	}
	return w.wc.Write(p)
}

func (w *orderWriter) Close() error { return w.wc.Close() }
