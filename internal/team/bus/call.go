package bus

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"
)

// CallRequest is one tool call on its way to the device's home.
type CallRequest struct {
	CallID    string          `json:"callId"`
	UserID    string          `json:"userId"`
	TokenID   string          `json:"tokenId"`
	Session   string          `json:"session"` // the Torii-Session name, "" for the token's default
	DeviceID  string          `json:"deviceId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	BudgetMs  int64           `json:"budgetMs"` // time left, RELATIVE: replica clocks may disagree
	From      string          `json:"from"`     // the sending replica
}

// The home's messages to a caller's inbox, told apart by a header so a
// heartbeat costs no decoding.
const (
	hdrKind    = "Torii-Kind"
	hdrRefusal = "Torii-Refusal"

	kindHeartbeat = "hb"
	kindResult    = "result"
	kindRefused   = "refused"

	refusedDraining = "draining"
	refusedMoved    = "moved" // this replica lost the device to another one a moment ago
	refusedBad      = "bad"

	maxMovedRetries = 3
)

// pending is a call waiting for its home's messages.
type pending struct {
	hb   chan struct{}  // coalesced: any heartbeat since the last look
	done chan *nats.Msg // the first terminal message
}

// onReply routes a message on this replica's inbox to its call. It never
// blocks: a slow caller must not stall every other call's replies.
func (b *Bus) onReply(m *nats.Msg) {
	token := strings.TrimPrefix(m.Subject, b.inbox)
	b.callMu.Lock()
	p := b.calls[token]
	b.callMu.Unlock()
	if p == nil {
		return
	}
	if m.Header.Get(hdrKind) == kindHeartbeat {
		select {
		case p.hb <- struct{}{}:
		default:
		}
		return
	}
	select {
	case p.done <- m:
	default:
	}
}

// Call sends r to the device's home and waits for its result. While the
// home runs the call it sends a heartbeat every 500 ms; none for 1.5 s means
// the home was lost (ErrHomeLost: it may have run). No replica serving the
// device gives ErrNoHome at once (nothing ran). Cancelling ctx, or its
// deadline passing, cancels the call at the home.
func (b *Bus) Call(ctx context.Context, r CallRequest) (*mcp.CallToolResult, error) {
	if err := validDevice(r.DeviceID); err != nil {
		return nil, err
	}
	if r.CallID == "" {
		r.CallID = nuid.Next()
	}
	r.From = b.replica
	// SECURITY I-91: the budget travels as a duration; the home counts it
	// from its own receipt, so clocks that disagree cannot shorten or
	// stretch it.
	if dl, ok := ctx.Deadline(); ok {
		left := time.Until(dl).Milliseconds()
		if left <= 0 {
			return nil, context.DeadlineExceeded
		}
		if r.BudgetMs <= 0 || left < r.BudgetMs {
			r.BudgetMs = left
		}
	}
	body, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("bus: encode call: %w", err)
	}
	for attempt := 0; ; attempt++ {
		res, err := b.callOnce(ctx, r, body)
		if errors.Is(err, errMoved) && attempt < maxMovedRetries {
			continue // the browser moved: the subject now reaches its new home
		}
		if errors.Is(err, errMoved) {
			return nil, ErrNoHome
		}
		return res, err
	}
}

var errMoved = errors.New("bus: the device moved to another replica")

func (b *Bus) callOnce(ctx context.Context, r CallRequest, body []byte) (*mcp.CallToolResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !b.nc.IsConnected() {
		return nil, fmt.Errorf("%w (%s); nothing was sent", ErrUnavailable, b.nc.Status())
	}
	token := nuid.Next()
	p := &pending{hb: make(chan struct{}, 1), done: make(chan *nats.Msg, 1)}
	b.callMu.Lock()
	b.calls[token] = p
	b.callMu.Unlock()
	defer func() {
		b.callMu.Lock()
		delete(b.calls, token)
		b.callMu.Unlock()
	}()

	// SECURITY I-90: the subject is built only from a validated device ID,
	// and only the device's home subscribes to it.
	msg := &nats.Msg{Subject: callSubject(r.DeviceID), Reply: b.inbox + token, Data: body}
	if err := b.nc.PublishMsg(msg); err != nil {
		return nil, fmt.Errorf("%w: %v; nothing was sent", ErrUnavailable, err)
	}
	lost := time.NewTimer(b.t.lostAfter)
	defer lost.Stop()
	for {
		select {
		case <-p.hb:
			lost.Reset(b.t.lostAfter)
		case m := <-p.done:
			return b.terminal(m)
		case <-lost.C:
			// A home that is alive but cut off must not run it later.
			b.sendCancel(r.DeviceID, r.CallID)
			return nil, fmt.Errorf("%w (no heartbeat for %s from the home of device %s)", ErrHomeLost, b.t.lostAfter, r.DeviceID)
		case <-ctx.Done():
			b.sendCancel(r.DeviceID, r.CallID)
			return nil, ctx.Err()
		}
	}
}

func (b *Bus) terminal(m *nats.Msg) (*mcp.CallToolResult, error) {
	switch {
	case len(m.Data) == 0 && m.Header.Get("Status") == "503":
		return nil, ErrNoHome
	case m.Header.Get(hdrKind) == kindRefused:
		switch m.Header.Get(hdrRefusal) {
		case refusedDraining:
			return nil, ErrDraining
		case refusedMoved:
			return nil, errMoved
		default:
			return nil, fmt.Errorf("bus: the home refused a malformed call; nothing ran")
		}
	case m.Header.Get(hdrKind) == kindResult:
		var res mcp.CallToolResult
		if err := json.Unmarshal(m.Data, &res); err != nil {
			return nil, fmt.Errorf("%w: its result did not decode: %v", ErrHomeLost, err)
		}
		return &res, nil
	}
	return nil, fmt.Errorf("%w: an unknown reply from the home", ErrHomeLost)
}

// cancelMsg is the body on torii.dev.<id>.cancel.
type cancelMsg struct {
	CallID string `json:"callId"`
}

// sendCancel is best effort: a home that never hears it still stops at the
// call's budget.
func (b *Bus) sendCancel(deviceID, callID string) {
	data, _ := json.Marshal(cancelMsg{CallID: callID})
	if err := b.nc.Publish(cancelSubject(deviceID), data); err != nil {
		b.log.Debug("bus: cancel not sent", "device", deviceID, "call", callID, "err", err)
	}
}
