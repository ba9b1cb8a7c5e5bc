package replica

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/team/store"
	"github.com/torii-browser/torii/internal/wire"
)

// storeTimeout bounds one store request made for the link, whose
// interfaces carry no context.
const storeTimeout = 5 * time.Second

// devices is the link's device store in team mode: the shared store's
// devices, whoever owns them (the signed challenge proves the key; which
// user's calls reach the device is checked on every call, SECURITY I-93).
// A revoked device is not found.
type devices struct{ st store.Store }

func (d devices) Get(id string) (pairing.Device, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	dev, err := d.st.Device(ctx, id)
	if err != nil {
		return pairing.Device{}, false
	}
	return pairing.Device{ID: dev.ID, Name: dev.Name, Origin: dev.Origin, PublicKey: dev.PublicKey,
		CreatedAt: dev.CreatedAt, LastSeen: dev.LastSeen}, true
}

func (d devices) Touch(id string, t time.Time) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return d.st.TouchDevice(ctx, id, t)
}

// noTokens: in team mode /acp serves browsers only; a bearer token there
// is refused (agents use /mcp with their user token).
type noTokens struct{}

func (noTokens) Check(string) (string, bool) { return "", false }

// Pairing limits per replica, as the one-machine daemon's.
const (
	pairPerMinute = 5
	// otpPairPerMinute bounds pairings that try a launch's one-time secret.
	// Such a secret was issued to a signed-in user, so a fleet of managed
	// browsers pairs at once; the bound only caps the store lookups a
	// stranger's bogus proofs can cause.
	otpPairPerMinute = 600
	maxPendingPair   = 16
	pairTimeout      = 120 * time.Second
)

// otpStore is the store's one-time secrets of managed launches.
type otpStore interface {
	OTPs(ctx context.Context) ([]store.OTP, error)
	ConsumeOTP(ctx context.Context, secret string) (userID string, err error)
}

// pairer decides torii/pair in team mode: a managed launch's one-time
// secret pairs at once for the user it was issued to; otherwise the
// request waits in the store for a person to approve its code (torii pair
// --server, on any replica), learned here from the bus.
type pairer struct {
	r       *replica
	timeout time.Duration

	mu       sync.Mutex
	waiting  map[string]chan struct{} // request ID → closed on pair.decided
	attempts []time.Time              // approvals by code, in the last minute
	otpTries []time.Time              // one-time-secret proofs, in the last minute
}

func newPairer(r *replica, timeout time.Duration) *pairer {
	if timeout <= 0 {
		timeout = pairTimeout
	}
	return &pairer{r: r, timeout: timeout, waiting: map[string]chan struct{}{}}
}

// Pair implements link.Pairer.
func (p *pairer) Pair(ctx context.Context, req link.PairRequest) (string, error) {
	if req.OTPProof != nil {
		if e := p.admitOTP(); e != nil {
			return "", e
		}
		if id, ok, err := p.pairOTP(ctx, req); ok || err != nil {
			return id, err
		}
		// A proof matching no live secret consumes nothing and falls back
		// to approval by code, as on one machine.
	}
	if e := p.admit(); e != nil {
		return "", e
	}
	st := p.r.st
	sctx, cancel := context.WithTimeout(ctx, storeTimeout)
	pr, err := st.CreatePairRequest(sctx, store.PairRequest{ID: req.RequestID, DeviceName: req.DeviceName, Origin: req.Origin,
		DeviceKey: req.DeviceKey, Code: req.Code, State: store.PairPending}, p.timeout)
	cancel()
	switch {
	case errors.Is(err, store.ErrExists):
		// SECURITY I-93: a request ID is used once, on any replica.
		return "", wire.Errorf(wire.CodeInvalidParams, "torii/pair: requestId %s was already used; send a fresh one", req.RequestID)
	case err != nil:
		return "", wire.Errorf(wire.CodeInternalError, "the gateway cannot record the pairing request now (its database is unavailable); try again shortly")
	}
	// The store names the request; pair.decided carries that name.
	decided := make(chan struct{})
	p.mu.Lock()
	if _, dup := p.waiting[pr.ID]; dup || len(p.waiting) >= maxPendingPair {
		p.mu.Unlock()
		return "", wire.Errorf(wire.CodeRateLimited, "too many pairing requests; try again in a minute")
	}
	p.waiting[pr.ID] = decided
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.waiting, pr.ID)
		p.mu.Unlock()
	}()
	// A decision made before the wait began was announced unheard: read it.
	sctx, cancel = context.WithTimeout(ctx, storeTimeout)
	now, err := st.PairRequest(sctx, pr.ID)
	cancel()
	if err != nil || now.State == store.PairPending {
		t := time.NewTimer(p.timeout)
		defer t.Stop()
		select {
		case <-decided:
		case <-t.C:
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	sctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	pr, err = st.PairRequest(sctx, pr.ID)
	switch {
	case err != nil:
		return "", wire.Errorf(wire.CodeInternalError, "the gateway cannot read the pairing decision now (its database is unavailable); pair again")
	case pr.State == store.PairApproved && pr.DeviceID != "":
		return pr.DeviceID, nil
	case pr.State == store.PairDenied:
		return "", wire.Errorf(wire.CodePairingDenied, "the pairing was denied")
	}
	return "", wire.Errorf(wire.CodePairingTimeout, "nobody approved the pairing within %s", p.timeout)
}

// pairOTP pairs with a managed launch's one-time secret: ok when a live
// secret matched and was consumed (once, on any replica).
func (p *pairer) pairOTP(ctx context.Context, req link.PairRequest) (id string, ok bool, err error) {
	os, can := p.r.st.(otpStore)
	if !can {
		return "", false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	live, err := os.OTPs(ctx)
	if err != nil {
		return "", false, wire.Errorf(wire.CodeInternalError, "the gateway cannot check the one-time secret now (its database is unavailable); launch again")
	}
	matched := ""
	// Every secret is checked, so timing tells nothing about which matched.
	for _, o := range live {
		if pairing.CheckOTPProof(o.Secret, req.Transcript, req.OTPProof) {
			matched = o.Secret
		}
	}
	if matched == "" {
		return "", false, nil
	}
	user, err := os.ConsumeOTP(ctx, matched)
	if errors.Is(err, store.ErrNotFound) {
		return "", false, nil // consumed meanwhile by another pairing
	}
	if err != nil {
		return "", false, wire.Errorf(wire.CodeInternalError, "the gateway cannot use the one-time secret now (its database is unavailable); launch again")
	}
	dev, err := p.r.st.AddDevice(ctx, user, req.DeviceName, req.Origin, req.DeviceKey)
	if err != nil {
		return "", false, wire.Errorf(wire.CodeInternalError, "the gateway cannot record the device now; launch again")
	}
	p.r.log.Info("replica: device paired with a one-time secret", "device", dev.ID, "user", user)
	return dev.ID, true, nil
}

// admit is the per-replica budget of pairings by code, as on one machine.
func (p *pairer) admit() error { return p.within(&p.attempts, pairPerMinute) }

// admitOTP is the budget of one-time-secret proofs.
func (p *pairer) admitOTP() error { return p.within(&p.otpTries, otpPairPerMinute) }

// within counts one attempt in the last minute's window, refusing past max.
func (p *pairer) within(window *[]time.Time, max int) error {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := (*window)[:0]
	for _, t := range *window {
		if now.Sub(t) < time.Minute {
			kept = append(kept, t)
		}
	}
	*window = kept
	if len(kept) >= max {
		return wire.Errorf(wire.CodeRateLimited, "too many pairing requests; try again in a minute")
	}
	*window = append(kept, now)
	return nil
}

// decided wakes the torii/pair waiting on request id, if it is here.
func (p *pairer) decided(id string) {
	p.mu.Lock()
	ch := p.waiting[id]
	delete(p.waiting, id)
	p.mu.Unlock()
	if ch != nil {
		close(ch)
	}
}
