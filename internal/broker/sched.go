package broker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/torii-browser/torii/internal/toolerr"
)

// The scheduler (SECURITY I-25). A call waits in one FIFO list
// until it may be sent:
//
//   - it is its session's oldest call and the session has none running
//     (a session's calls run one at a time, in order);
//   - no other call runs on the tab it names (one call at a time per tab);
//   - fewer than MaxInFlight calls run in the browser, all sessions together.
//
// Admission scans the list in arrival order and admits every call that may
// run, so sessions are served first-come first-served and a blocked session
// never holds up another (no head-of-line blocking, no starvation). A call
// still waiting when its own deadline is up (or after broker.queueBudgetMs,
// when set), or arriving when its session already has MaxQueuedPerSession
// waiting, fails with busy: it was never sent, so retrying is safe. The
// call ahead of it timing out or failing only lets it run (SECURITY I-80).

type pending struct {
	seq   uint64
	sess  *Session
	tool  string
	tab   int      // -1: names no tab
	bw    *browser // the browser it was routed to
	enq   time.Time
	admit chan struct{} // closed when admitted or failed
	fail  *toolerr.Error
	state int
}

const (
	stWaiting = iota
	stRunning
	stDone
)

// tabKey names a tab: tab IDs are each browser's own, so two browsers'
// tab 7 are two tabs.
type tabKey struct {
	browser string
	tab     int
}

func (p *pending) tabKey() tabKey {
	k := tabKey{tab: p.tab}
	if p.bw != nil {
		k.browser = p.bw.id
	}
	return k
}

// tabOf reads a call's tabId argument (-1 when absent or not a number),
// in the one pass that also says whether the arguments are JSON at all.
func tabOf(args json.RawMessage) (tab int, valid bool) {
	if len(args) == 0 {
		return -1, true
	}
	var a struct {
		TabID *float64 `json:"tabId"`
	}
	err := json.Unmarshal(args, &a)
	var syntax *json.SyntaxError
	if errors.As(err, &syntax) {
		return -1, false
	}
	if err != nil || a.TabID == nil || *a.TabID < 0 || *a.TabID != float64(int(*a.TabID)) {
		return -1, true
	}
	return int(*a.TabID), true
}

// enqueue adds a call in the order of its arrival stamp (a fresh one if it
// has none), or refuses it at once with busy (session queue full) or
// daemon_restarted (the broker is closed).
func (b *Broker) enqueue(s *Session, tool string, tab int, bw *browser, a *Arrival) (*pending, *toolerr.Error) {
	b.smu.Lock()
	defer b.smu.Unlock()
	if b.closed {
		return nil, toolerr.New(toolerr.DaemonRestarted, "the daemon is shutting down; nothing was sent")
	}
	if len(s.queue) >= b.limits.MaxQueuedPerSession {
		return nil, toolerr.New(toolerr.Busy, "this session already has %d calls waiting; nothing was sent", len(s.queue))
	}
	seq := uint64(0)
	if a != nil {
		seq = a.seq
	} else {
		seq = b.stamp.Add(1)
	}
	p := &pending{seq: seq, sess: s, tool: tool, tab: tab, bw: bw, enq: time.Now(), admit: make(chan struct{})}
	s.queue = insertBySeq(s.queue, p)
	s.used = p.enq
	b.waiting = insertBySeq(b.waiting, p)
	b.pumpLocked()
	return p, nil
}

// insertBySeq inserts p into q, which is sorted by seq: a call read
// earlier than calls already queued goes ahead of them.
func insertBySeq(q []*pending, p *pending) []*pending {
	i := len(q)
	for i > 0 && q[i-1].seq > p.seq {
		i--
	}
	return slices.Insert(q, i, p)
}

// pumpLocked admits every waiting call that may run now, oldest first.
func (b *Broker) pumpLocked() {
	for i := 0; i < len(b.waiting) && b.inflight < b.limits.MaxInFlight; {
		p := b.waiting[i]
		s := p.sess
		if s.running != nil || len(s.queue) == 0 || s.queue[0] != p || (p.tab >= 0 && b.tabBusy[p.tabKey()]) {
			i++
			continue
		}
		b.waiting = slices.Delete(b.waiting, i, i+1)
		s.queue = s.queue[1:]
		s.running = p
		b.inflight++
		if p.tab >= 0 {
			b.tabBusy[p.tabKey()] = true
		}
		p.state = stRunning
		close(p.admit)
	}
}

// minRun is the least a call must have left of its deadline to be sent: less
// could not bring back even the extension's typed answer.
const minRun = time.Second

// wait blocks until p is admitted (nil) or fails: ctx ended (cancelled),
// its deadline (less minRun) or the queue budget passed (busy), or the
// broker failed it.
func (b *Broker) wait(ctx context.Context, p *pending, deadline time.Time) *toolerr.Error {
	until := deadline.Add(-minRun)
	b.smu.Lock()
	budget := b.limits.QueueBudgetMs
	b.smu.Unlock()
	if budget > 0 {
		if q := p.enq.Add(time.Duration(budget) * time.Millisecond); q.Before(until) {
			until = q
		}
	}
	t := time.NewTimer(time.Until(until))
	defer t.Stop()
	select {
	case <-p.admit:
	case <-t.C:
		b.drop(p, &toolerr.Error{Code: toolerr.Busy,
			Message: fmt.Sprintf("%s waited %s in the queue behind this session's or this tab's other calls, all of its deadline, without being sent; nothing was sent",
				p.tool, time.Since(p.enq).Round(time.Millisecond)),
			Hint: "Retry once the calls ahead of it have answered; nothing was sent."})
	case <-ctx.Done():
		b.drop(p, toolerr.New(toolerr.Cancelled, "%s was cancelled while queued; nothing was sent", p.tool))
	}
	b.smu.Lock()
	defer b.smu.Unlock()
	return p.fail
}

// drop removes a waiting call with err; a call already admitted is left
// alone (the race is won by admission).
func (b *Broker) drop(p *pending, err *toolerr.Error) {
	b.smu.Lock()
	defer b.smu.Unlock()
	b.dropLocked(p, err)
	b.pumpLocked()
}

func (b *Broker) dropLocked(p *pending, err *toolerr.Error) {
	if p.state != stWaiting {
		return
	}
	p.state = stDone
	p.fail = err
	if i := slices.Index(b.waiting, p); i >= 0 {
		b.waiting = slices.Delete(b.waiting, i, i+1)
	}
	if i := slices.Index(p.sess.queue, p); i >= 0 {
		p.sess.queue = slices.Delete(p.sess.queue, i, i+1)
	}
	close(p.admit)
}

// release ends a running call and admits what may run next.
func (b *Broker) release(p *pending) {
	b.smu.Lock()
	defer b.smu.Unlock()
	if p.state != stRunning {
		return
	}
	p.state = stDone
	b.inflight--
	if p.tab >= 0 {
		delete(b.tabBusy, p.tabKey())
	}
	if p.sess.running == p {
		p.sess.running = nil
	}
	b.pumpLocked()
}

// failWaiting fails every waiting call with err (the extension went away,
// or the daemon is shutting down): nothing was sent, and nobody hangs.
func (b *Broker) failWaiting(err *toolerr.Error) int {
	b.smu.Lock()
	defer b.smu.Unlock()
	ws := slices.Clone(b.waiting)
	for _, p := range ws {
		b.dropLocked(p, err)
	}
	return len(ws)
}
