package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/broker"
	"github.com/torii-browser/torii/internal/mcpserver"
	"github.com/torii-browser/torii/internal/toolerr"
)

// relay is `torii mcp`: it copies an agent's stdio to the daemon's MCP
// socket and back, line for line, and serves no MCP of its own (the daemon
// is the server). It reads just enough of each message to survive a daemon
// restart: the client's initialize and initialized, and which of its
// requests are still owed an answer. When the socket breaks, those
// requests are answered here with a typed error, the relay dials again
// (starting the daemon if none runs), replays initialize under an id of its
// own, swallows that reply, replays initialized, and tells the client the
// tool list may have changed.
type relay struct {
	label string
	named bool // label names a named session (--session), shared with other processes
	// browser, if set, names the browser this agent's calls go to (--browser).
	browser string
	dial    func(ctx context.Context) (net.Conn, error)
	out     io.Writer // the agent's stdin
	errw    io.Writer // the agent's log

	wmu sync.Mutex // one whole message per write to out

	mu         sync.Mutex
	conn       net.Conn      // nil while reconnecting
	ready      chan struct{} // closed once conn is set
	inflight   map[string]owed
	changed    chan struct{}     // signalled whenever an owed request is answered
	initParams json.RawMessage   // the params of the client's initialize request
	initedMsg  []byte            // its notifications/initialized
	listens    map[string]listen // its open subscriptions/listen requests, by id key
	replayKey  string            // id of the replayed initialize, whose reply is swallowed
	probeKey   string            // id of the ping whose reply publishes pendingConn
	pending    net.Conn          // a reconnection not yet answered
	notes      [][]byte          // what to tell the client once pending is published
	replays    int               // reconnections so far
	attached   bool              // a connection was made before
	closing    bool
}

// listen is an open subscriptions/listen request: its line, replayed to
// a new daemon, and its id, which the relay's notice names.
type listen struct {
	line []byte
	id   json.RawMessage
}

// owed is a client request sent to the daemon and not yet answered.
type owed struct {
	id     json.RawMessage
	method string
}

// Relay timings: how long stdin EOF waits for owed answers (a tool call's
// own time: a browser under load can take seconds, and a piped client still
// wants its answer), how long a message waits for a lost daemon to come
// back, and the redial backoff.
const (
	drainTimeout  = broker.DefaultCallTimeout + 2*time.Second
	reconnectWait = 10 * time.Second
	redialFirst   = 50 * time.Millisecond
	redialMax     = 2 * time.Second
	relayTag      = "torii-relay-"
)

func newRelay(label string, dial func(context.Context) (net.Conn, error), out, errw io.Writer) *relay {
	return &relay{label: label, dial: dial, out: out, errw: errw, ready: make(chan struct{}),
		inflight: map[string]owed{}, listens: map[string]listen{}, changed: make(chan struct{}, 1)}
}

// run relays until in reaches EOF (then owed answers get drainTimeout) or
// ctx ends. The first dial's error is returned: an agent configured with a
// broken daemon sees it at once.
func (r *relay) run(ctx context.Context, in io.Reader) error {
	c, err := r.dial(ctx)
	if err != nil {
		return err
	}
	if err := r.attach(ctx, c); err != nil {
		c.Close()
		return err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				r.fromClient(ctx, line)
			}
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
		r.drain()
	case <-ctx.Done():
	}
	r.mu.Lock()
	r.closing = true
	conn := r.conn
	r.mu.Unlock()
	if conn != nil {
		conn.Close()
	}
	return nil
}

// envelope is all the relay reads of a client's message, in its one
// decode: params are kept raw (the initialize replayed after a restart)
// and only a cancel's are read, for the request it names.
type envelope struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
}

// idKey is a request id in one spelling for both directions (1, 1.0),
// read from its raw JSON without decoding the message again.
func idKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch c := raw[0]; {
	case c == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return "s" + string(raw[1:len(raw)-1])
		}
		var v string
		if json.Unmarshal(raw, &v) != nil {
			return ""
		}
		return "s" + v
	case c == '-' || (c >= '0' && c <= '9'):
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return ""
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "" // null, or not an id
}

func (r *relay) fromClient(ctx context.Context, line []byte) {
	if line[len(line)-1] != '\n' {
		line = append(line, '\n')
	}
	var e envelope
	parsed := json.Unmarshal(line, &e) == nil
	key := ""
	if parsed && e.Method != "" {
		key = idKey(e.ID)
	}
	r.mu.Lock()
	switch {
	case !parsed:
	case e.Method == "initialize" && key != "":
		r.initParams = e.Params
	case e.Method == "notifications/initialized":
		r.initedMsg = bytes.Clone(line)
	case e.Method == "subscriptions/listen" && key != "":
		// A stream answered only when it ends: not owed, but replayed to a
		// new daemon so the client keeps hearing of changes.
		r.listens[key] = listen{line: bytes.Clone(line), id: e.ID}
	case e.Method == "notifications/cancelled":
		// The daemon need not answer a cancelled request.
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(e.Params, &p) == nil {
			delete(r.inflight, idKey(p.RequestID))
			delete(r.listens, idKey(p.RequestID))
		}
	}
	r.mu.Unlock()

	conn := r.await(ctx)
	if conn == nil {
		if key != "" {
			r.fail(owed{e.ID, e.Method}, "the torii daemon is not reachable; nothing was sent")
		}
		return
	}
	if key != "" && e.Method != "subscriptions/listen" {
		// Registered under the lock that a lost connection sweeps under:
		// either the sweep answers it, or it goes out on a live socket.
		r.mu.Lock()
		if r.conn != conn {
			r.mu.Unlock()
			r.fromClient(ctx, line)
			return
		}
		r.inflight[key] = owed{bytes.Clone(e.ID), e.Method}
		r.mu.Unlock()
	}
	if _, err := conn.Write(line); err != nil {
		conn.Close() // its reader sweeps what was owed, this request included
	}
}

// await is the live connection, waiting up to reconnectWait for one.
func (r *relay) await(ctx context.Context) net.Conn {
	r.mu.Lock()
	conn, ready := r.conn, r.ready
	r.mu.Unlock()
	if conn != nil {
		return conn
	}
	t := time.NewTimer(reconnectWait)
	defer t.Stop()
	select {
	case <-ready:
	case <-t.C:
	case <-ctx.Done():
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.conn
}

// attach greets the daemon on c (replaying the client's initialization, if
// any). The first connection is used at once; a reconnection only once the
// daemon answers a ping sent after the replay, so a socket of a daemon
// still going away never takes the client's requests.
func (r *relay) attach(ctx context.Context, c net.Conn) error {
	msgs := [][]byte{mcpserver.RelayHelloParams{SessionLabel: r.label, Browser: r.browser, Shared: r.named}.Line()}
	r.mu.Lock()
	first := !r.attached
	r.attached = true
	replayKey, probeKey := "", ""
	var notes [][]byte
	if !first {
		r.replays++
		tag := func(what string) json.RawMessage {
			id, _ := json.Marshal(fmt.Sprintf("%s%s-%d", relayTag, what, r.replays))
			return id
		}
		if r.initParams != nil {
			// Rebuilt from what was kept: the client's line is not read again.
			id := tag("initialize")
			b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
			b = append(append(append(b, `,"method":"initialize","params":`...), r.initParams...), "}\n"...)
			msgs = append(msgs, b)
			replayKey = idKey(id)
			if r.initedMsg != nil {
				msgs = append(msgs, r.initedMsg)
			}
			// The new daemon's catalogue may differ from the old one's.
			notes = append(notes, []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{}}`+"\n"))
		}
		// A client that listens hears it on its stream (the listen's id in
		// _meta, as the SDK marks it).
		for _, l := range r.listens {
			msgs = append(msgs, l.line)
			n, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/tools/list_changed",
				"params": map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/subscriptionId": l.id}}})
			notes = append(notes, append(n, '\n'))
		}
		id := tag("ping")
		ping, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "ping"})
		msgs = append(msgs, append(ping, '\n'))
		probeKey = idKey(id)
	}
	r.mu.Unlock()
	for _, m := range msgs {
		if _, err := c.Write(m); err != nil {
			return err
		}
	}
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		return net.ErrClosed
	}
	r.replayKey, r.probeKey, r.notes, r.pending = replayKey, probeKey, notes, c
	r.mu.Unlock()
	if first {
		r.publish(c)
	}
	go r.fromDaemon(ctx, c)
	return nil
}

// publish makes c the live connection and tells the client what the
// reconnection may have changed.
func (r *relay) publish(c net.Conn) {
	r.mu.Lock()
	if r.closing || r.pending != c {
		r.mu.Unlock()
		return
	}
	r.conn, r.pending = c, nil
	close(r.ready)
	notes := r.notes
	r.notes = nil
	r.mu.Unlock()
	for _, n := range notes {
		r.write(n)
	}
}

// fromDaemon copies c to the client until c breaks, then reconnects.
func (r *relay) fromDaemon(ctx context.Context, c net.Conn) {
	br := bufio.NewReaderSize(c, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && r.answered(c, line) {
			r.write(line)
		}
		if err != nil {
			break
		}
	}
	c.Close()
	r.mu.Lock()
	if r.pending == c {
		// Never published: nothing was sent on it but the replay.
		r.pending = nil
		closing := r.closing
		r.mu.Unlock()
		if !closing {
			r.reconnect(ctx)
		}
		return
	}
	if r.conn != c {
		r.mu.Unlock()
		return
	}
	r.conn, r.ready = nil, make(chan struct{})
	lost := r.inflight
	r.inflight = map[string]owed{}
	closing := r.closing
	r.mu.Unlock()
	for _, o := range lost {
		r.fail(o, "the torii daemon went away during "+o.method+"; it may have partly run")
	}
	r.signal()
	if closing {
		return
	}
	fmt.Fprintln(r.errw, "torii: lost the daemon; reconnecting")
	r.reconnect(ctx)
}

// answered notes a reply to an owed request; false for the replies to the
// relay's own replayed initialize and ping, which the client must not see.
func (r *relay) answered(c net.Conn, line []byte) bool {
	id, method, ok := peekReply(line)
	if !ok || method != "" {
		return true
	}
	key := idKey(id)
	if key == "" {
		return true
	}
	r.mu.Lock()
	switch key {
	case r.replayKey:
		r.replayKey = ""
		r.mu.Unlock()
		return false
	case r.probeKey:
		r.probeKey = ""
		r.mu.Unlock()
		r.publish(c)
		return false
	}
	defer r.mu.Unlock()
	delete(r.listens, key)
	if _, ok := r.inflight[key]; ok {
		delete(r.inflight, key)
		r.signal()
	}
	return true
}

// peekReply reads the id and method of a daemon line from its first keys,
// where the daemon's SDK writes them ({"jsonrpc":"2.0","id":…,"result":…}),
// so a large result is not decoded to find its id; a line laid out
// otherwise is decoded whole.
func peekReply(line []byte) (id json.RawMessage, method string, ok bool) {
	d := json.NewDecoder(bytes.NewReader(line))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return nil, "", false
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return nil, "", false
		}
		switch k {
		case "jsonrpc":
			var v json.RawMessage
			if d.Decode(&v) != nil {
				return nil, "", false
			}
		case "id":
			if d.Decode(&id) != nil {
				return nil, "", false
			}
		case "method":
			if d.Decode(&method) != nil {
				return nil, "", false
			}
			return id, method, true
		default:
			if id == nil {
				// Not the SDK's layout: read the line whole.
				var e envelope
				if json.Unmarshal(line, &e) != nil {
					return nil, "", false
				}
				return e.ID, e.Method, true
			}
			// result or error after the id: the envelope has been read.
			return id, method, true
		}
	}
	return id, method, true
}

func (r *relay) reconnect(ctx context.Context) {
	wait := redialFirst
	for {
		r.mu.Lock()
		closing := r.closing
		r.mu.Unlock()
		if closing || ctx.Err() != nil {
			return
		}
		c, err := r.dial(ctx)
		if err == nil {
			if err = r.attach(ctx, c); err == nil {
				fmt.Fprintln(r.errw, "torii: reconnected to the daemon")
				return
			}
			c.Close()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait = min(wait*2, redialMax)
	}
}

// fail answers an owed request here: a tools/call with a typed tool
// error (the agent may retry it), anything else with a JSON-RPC error.
func (r *relay) fail(o owed, msg string) {
	reply := map[string]any{"jsonrpc": "2.0", "id": o.id}
	if o.method == "tools/call" {
		// The daemon is what went, not the browser: extension_not_connected
		// would send the agent to a browser that may be fine.
		reply["result"] = toolerr.New(toolerr.DaemonRestarted, "%s", msg).Result()
	} else {
		reply["error"] = map[string]any{"code": -32603, "message": msg}
	}
	b, err := json.Marshal(reply)
	if err == nil {
		r.write(append(b, '\n'))
	}
}

func (r *relay) write(line []byte) {
	r.wmu.Lock()
	defer r.wmu.Unlock()
	_, _ = r.out.Write(line)
}

func (r *relay) signal() {
	select {
	case r.changed <- struct{}{}:
	default:
	}
}

// drain waits until every owed request is answered, or drainTimeout: with
// `printf '…requests…' | torii mcp` the answers still reach the client.
func (r *relay) drain() {
	t := time.NewTimer(drainTimeout)
	defer t.Stop()
	for {
		r.mu.Lock()
		n := len(r.inflight)
		r.mu.Unlock()
		if n == 0 {
			return
		}
		select {
		case <-r.changed:
		case <-t.C:
			return
		}
	}
}
