package agents

import (
	"encoding/json"
	"sync"
)

// Buffer bounds (docs/gateway.md): the latest HistoryMax updates are kept
// for session/load; the outbox to the attached client holds at most
// OutboxMax entries and OutboxBytes. Adjacent text chunks of the same kind
// are coalesced (up to chunkMax bytes per entry) in both, so a flooding
// agent costs entries only when it interleaves other updates; beyond the
// bounds the outbox drops (counted) and the history forgets its oldest.
const (
	HistoryMax   = 2000
	HistoryBytes = 8 << 20
	OutboxMax    = 512
	OutboxBytes  = 4 << 20
	chunkMax     = 64 << 10
)

// Stats count what passed through a Buffer.
type Stats struct {
	Received        int64 `json:"received"`
	Coalesced       int64 `json:"coalesced"`
	Dropped         int64 `json:"dropped"`
	Outbox          int   `json:"outbox"`
	OutboxBytes     int   `json:"outboxBytes"`
	OutboxPeak      int   `json:"outboxPeak"`
	OutboxPeakBytes int   `json:"outboxPeakBytes"`
	History         int   `json:"history"`
	HistoryBytes    int   `json:"historyBytes"`
}

type entry struct {
	kind string
	text []byte          // coalescable chunk: its text
	raw  json.RawMessage // anything else: the update object as received
}

func (e *entry) size() int { return len(e.text) + len(e.raw) + 64 }

// JSON renders the update object.
func (e *entry) JSON() json.RawMessage {
	if e.raw != nil {
		return e.raw
	}
	b, _ := json.Marshal(map[string]any{"sessionUpdate": e.kind,
		"content": map[string]string{"type": "text", "text": string(e.text)}})
	return b
}

// Buffer is one session's update buffer.
type Buffer struct {
	mu        sync.Mutex
	hist      []*entry
	histHead  int
	histBytes int
	out       []*entry
	outBytes  int
	live      bool
	sig       chan struct{}
	stats     Stats
}

// NewBuffer returns an empty buffer with no live client.
func NewBuffer() *Buffer { return &Buffer{sig: make(chan struct{}, 1)} }

// classify splits an update into a coalescable text chunk or a raw entry.
func classify(update json.RawMessage) *entry {
	var m map[string]json.RawMessage
	if json.Unmarshal(update, &m) != nil {
		return &entry{raw: update}
	}
	var kind string
	_ = json.Unmarshal(m["sessionUpdate"], &kind)
	if (kind == "agent_message_chunk" || kind == "agent_thought_chunk") && len(m) == 2 && m["content"] != nil {
		var c map[string]json.RawMessage
		if json.Unmarshal(m["content"], &c) == nil && len(c) == 2 {
			var typ, text string
			if json.Unmarshal(c["type"], &typ) == nil && typ == "text" && json.Unmarshal(c["text"], &text) == nil {
				return &entry{kind: kind, text: []byte(text)}
			}
		}
	}
	return &entry{kind: kind, raw: update}
}

func merge(tail, e *entry) bool {
	if tail == nil || tail.raw != nil || e.raw != nil || tail.kind != e.kind || len(tail.text)+len(e.text) > chunkMax {
		return false
	}
	tail.text = append(tail.text, e.text...)
	return true
}

// Push records one update object (the "update" member of session/update).
func (b *Buffer) Push(update json.RawMessage) {
	e := classify(update)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.stats.Received++
	// History.
	var htail *entry
	if len(b.hist) > b.histHead {
		htail = b.hist[len(b.hist)-1]
	}
	if before := sizeOf(htail); merge(htail, e) {
		b.histBytes += sizeOf(htail) - before
	} else {
		h := *e
		if h.text != nil {
			h.text = append([]byte(nil), e.text...)
		}
		b.hist = append(b.hist, &h)
		b.histBytes += h.size()
	}
	for len(b.hist)-b.histHead > HistoryMax || (b.histBytes > HistoryBytes && len(b.hist)-b.histHead > 1) {
		b.histBytes -= b.hist[b.histHead].size()
		b.hist[b.histHead] = nil
		b.histHead++
	}
	if b.histHead > HistoryMax {
		b.hist = append([]*entry(nil), b.hist[b.histHead:]...)
		b.histHead = 0
	}
	// Outbox.
	if !b.live {
		return
	}
	var otail *entry
	if len(b.out) > 0 {
		otail = b.out[len(b.out)-1]
	}
	if before := sizeOf(otail); merge(otail, e) {
		b.outBytes += sizeOf(otail) - before
		b.stats.Coalesced++
	} else if len(b.out) >= OutboxMax || b.outBytes+e.size() > OutboxBytes {
		b.stats.Dropped++
		return
	} else {
		b.out = append(b.out, e)
		b.outBytes += e.size()
	}
	if len(b.out) > b.stats.OutboxPeak {
		b.stats.OutboxPeak = len(b.out)
	}
	if b.outBytes > b.stats.OutboxPeakBytes {
		b.stats.OutboxPeakBytes = b.outBytes
	}
	select {
	case b.sig <- struct{}{}:
	default:
	}
}

func sizeOf(e *entry) int {
	if e == nil {
		return 0
	}
	return e.size()
}

// Signal fires after a Push to a live outbox.
func (b *Buffer) Signal() <-chan struct{} { return b.sig }

// Pop takes the oldest outbox entry (nil when empty).
func (b *Buffer) Pop() json.RawMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.out) == 0 {
		return nil
	}
	e := b.out[0]
	b.out[0] = nil
	b.out = b.out[1:]
	if len(b.out) == 0 {
		b.out = nil
	}
	b.outBytes -= e.size()
	return e.JSON()
}

// Pending is the number of outbox entries.
func (b *Buffer) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.out)
}

// SetLive turns the outbox on (a client is attached) or off and empties it
// (the history keeps everything for session/load).
func (b *Buffer) SetLive(live bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live = live
	b.out = nil
	b.outBytes = 0
}

// History is the kept updates, oldest first.
func (b *Buffer) History() []json.RawMessage {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]json.RawMessage, 0, len(b.hist)-b.histHead)
	for _, e := range b.hist[b.histHead:] {
		out = append(out, e.JSON())
	}
	return out
}

// Stats is a snapshot of the counters.
func (b *Buffer) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.stats
	s.Outbox, s.OutboxBytes = len(b.out), b.outBytes
	s.History, s.HistoryBytes = len(b.hist)-b.histHead, b.histBytes
	return s
}
