package agents

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

func chunk(s string) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"sessionUpdate": "agent_message_chunk", "content": map[string]string{"type": "text", "text": s}})
	return b
}

func plan(i int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"sessionUpdate":"plan","entries":[{"content":"step %d","priority":"low","status":"pending"}]}`, i))
}

// A client that never reads: the outbox stays within its bounds and
// counts what it drops; the history keeps the latest HistoryMax.
func TestBufferBoundsWithoutReader(t *testing.T) {
	b := NewBuffer()
	b.SetLive(true)
	const n = 30000
	for i := 0; i < n; i++ {
		b.Push(chunk(fmt.Sprintf("c%d ", i)))
		if i%10 == 0 {
			b.Push(plan(i))
		}
	}
	st := b.Stats()
	if st.Received != n+n/10 {
		t.Fatalf("received %d", st.Received)
	}
	if st.Outbox > OutboxMax || st.OutboxBytes > OutboxBytes || st.OutboxPeak > OutboxMax || st.Dropped == 0 {
		t.Fatalf("outbox: %+v", st)
	}
	if st.History != HistoryMax || st.HistoryBytes > HistoryBytes {
		t.Fatalf("history: %+v", st)
	}
	// The newest update is the last one kept.
	h := b.History()
	if !strings.Contains(string(h[len(h)-1]), fmt.Sprintf("c%d ", n-1)) {
		t.Fatalf("last history entry %s", h[len(h)-1])
	}
}

// Adjacent text chunks coalesce; anything else keeps its place and bytes.
func TestBufferCoalesces(t *testing.T) {
	b := NewBuffer()
	b.SetLive(true)
	b.Push(chunk("a"))
	b.Push(chunk("b"))
	b.Push(plan(1))
	b.Push(chunk("c"))
	odd := json.RawMessage(`{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"d"},"messageId":"m1"}`)
	b.Push(odd)
	var got []string
	for u := b.Pop(); u != nil; u = b.Pop() {
		got = append(got, string(u))
	}
	want := []string{string(chunk("ab")), string(plan(1)), string(chunk("c")), string(odd)}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("outbox:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if st := b.Stats(); st.Coalesced != 1 || st.History != 4 {
		t.Fatalf("stats %+v", st)
	}
	// Not live: only the history grows.
	b.SetLive(false)
	b.Push(chunk("e"))
	if b.Pending() != 0 || b.Stats().History != 5 {
		t.Fatalf("not live: pending %d, %+v", b.Pending(), b.Stats())
	}
}
