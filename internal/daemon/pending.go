package daemon

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/wire"
)

// Pairing limits (docs/protocol.md). SECURITY I-12.
const (
	pairPerMinute  = 5
	maxPendingPair = 4
	pairTimeout    = 120 * time.Second
)

// PendingPair is one request waiting for the person (control `pair.pending`).
type PendingPair struct {
	RequestID  string    `json:"requestId"`
	DeviceName string    `json:"deviceName"`
	Origin     string    `json:"origin"`
	Code       string    `json:"code"`
	CreatedAt  time.Time `json:"createdAt"`
}

type decision struct {
	deviceID string
	err      error
}

type pendingReq struct {
	req     link.PairRequest
	created time.Time
	done    chan decision // buffered 1: the decider never blocks
}

// pairings is the daemon's pairing manager: it implements link.Pairer and
// serves the control methods pair.pending / pair.decide.
type pairings struct {
	devices *pairing.DeviceStore
	otps    *pairing.OTPs
	now     func() time.Time
	timeout time.Duration

	mu       sync.Mutex
	pending  map[string]*pendingReq
	attempts []time.Time
}

func newPairings(devices *pairing.DeviceStore, otps *pairing.OTPs, now func() time.Time) *pairings {
	return &pairings{devices: devices, otps: otps, now: now, timeout: pairTimeout, pending: map[string]*pendingReq{}}
}

// Pair implements link.Pairer.
func (p *pairings) Pair(ctx context.Context, req link.PairRequest) (string, error) {
	now := p.now()
	p.mu.Lock()
	// SECURITY I-12: daemon-wide budget, so many connections cannot flood
	// the person with codes to approve.
	kept := p.attempts[:0]
	for _, t := range p.attempts {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	p.attempts = kept
	// Refused attempts count too, so a flood stays refused; the slice is
	// capped because only "more than the budget" matters.
	if len(p.attempts) <= pairPerMinute {
		p.attempts = append(p.attempts, now)
	}
	if len(p.attempts) > pairPerMinute || len(p.pending) >= maxPendingPair {
		p.mu.Unlock()
		return "", wire.Errorf(wire.CodeRateLimited, "too many pairing requests; try again in a minute")
	}
	if _, dup := p.pending[req.RequestID]; dup {
		p.mu.Unlock()
		return "", wire.Errorf(wire.CodeInvalidParams, "torii/pair: requestId %s is already pending", req.RequestID)
	}
	// SECURITY I-5: a one-time secret is single use and expires in 60 s.
	// A proof matching no live secret consumes nothing and falls back to
	// approval by code, so a stray request cannot cancel a launch.
	if req.OTPProof != nil {
		if name, ok := p.otps.ConsumeNamed(req.Transcript, req.OTPProof); ok {
			p.mu.Unlock()
			if name != "" {
				req.DeviceName = name
			}
			return p.add(req)
		}
	}
	pr := &pendingReq{req: req, created: now, done: make(chan decision, 1)}
	p.pending[req.RequestID] = pr
	p.mu.Unlock()

	t := time.NewTimer(p.timeout)
	defer t.Stop()
	select {
	case d := <-pr.done:
		return d.deviceID, d.err
	case <-t.C:
		p.drop(req.RequestID)
		return "", wire.Errorf(wire.CodePairingTimeout, "nobody approved the pairing within %s", p.timeout)
	case <-ctx.Done():
		p.drop(req.RequestID)
		return "", ctx.Err()
	}
}

func (p *pairings) add(req link.PairRequest) (string, error) {
	dev, err := p.devices.Add(req.DeviceName, req.Origin, req.DeviceKey)
	if err != nil {
		return "", wire.Errorf(wire.CodeInternalError, "store device: %v", err)
	}
	return dev.ID, nil
}

func (p *pairings) drop(id string) {
	p.mu.Lock()
	delete(p.pending, id)
	p.mu.Unlock()
}

// list returns pending requests, oldest first.
func (p *pairings) list() []PendingPair {
	p.mu.Lock()
	out := make([]PendingPair, 0, len(p.pending))
	for _, pr := range p.pending {
		out = append(out, PendingPair{RequestID: pr.req.RequestID, DeviceName: pr.req.DeviceName,
			Origin: pr.req.Origin, Code: pr.req.Code, CreatedAt: pr.created})
	}
	p.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out
}

// ErrNoSuchRequest is returned by decide for an unknown or finished request.
var errNoSuchRequest = wire.Errorf(wire.CodeInvalidParams, "no pending pairing request with that requestId (it may have timed out or its connection closed)")

// decide approves or denies a pending request. SECURITY I-5: approval is
// the person's act after comparing the code.
func (p *pairings) decide(requestID string, approve bool) (string, error) {
	p.mu.Lock()
	pr, ok := p.pending[requestID]
	delete(p.pending, requestID)
	p.mu.Unlock()
	if !ok {
		return "", errNoSuchRequest
	}
	if !approve {
		pr.done <- decision{err: wire.Errorf(wire.CodePairingDenied, "the pairing was denied")}
		return "", nil
	}
	id, err := p.add(pr.req)
	pr.done <- decision{deviceID: id, err: err}
	return id, err
}
