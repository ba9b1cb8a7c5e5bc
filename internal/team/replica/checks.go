package replica

import (
	"context"
	"crypto/sha256"
	"errors"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/team/store"
)

// checks remembers what the store said about user tokens and users'
// devices, so a call does not ask the database, on its way in and again at
// the browser's home, what it asked a moment ago.
//
// SECURITY I-93: an answer is used only while younger than maxAge, counted
// from before the query that gave it; a loop re-confirms the answers in use
// every maxAge/2, one query per kind, so a busy token rarely waits on the
// store; a revocation event drops its answers at once, and EventResync (the
// bus lost NATS, so events were missed) drops them all. Only what exists is
// remembered: an unknown token or device is asked of the store every time.
// A store that fails a query (a round, a check, an audit write) has every
// answer dropped, so the next requests reach it and get its 503, and no
// call starts that could not be audited.
type checks struct {
	st     store.Store
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	gen     uint64 // bumped by every drop: an answer asked for before it is not kept
	tokens  map[[32]byte]*tokenCheck
	devices map[string]*devicesCheck // by user ID
}

// checkMaxAge bounds how long a revoked token or device can still pass on a
// replica that missed the revocation's event (SECURITY I-93's 2 s).
const checkMaxAge = time.Second

// Answers not used for checkIdle are forgotten rather than re-confirmed
// (an agent calling at least that often never waits on the store; a
// quieter one asks once), which keeps each round to what is in use; at
// most checkMax of each kind are kept.
const (
	checkIdle = 10 * time.Second
	checkMax  = 10000
)

type tokenCheck struct {
	tok      store.Token
	at, used time.Time
}

type devicesCheck struct {
	devs     []store.Device
	at, used time.Time
}

func newChecks(st store.Store, maxAge time.Duration) *checks {
	if maxAge <= 0 {
		maxAge = checkMaxAge
	}
	return &checks{st: st, maxAge: maxAge, now: time.Now,
		tokens: map[[32]byte]*tokenCheck{}, devices: map[string]*devicesCheck{}}
}

// CheckToken is store.CheckToken, remembered.
func (c *checks) CheckToken(ctx context.Context, secret string) (store.Token, error) {
	key := sha256.Sum256([]byte(secret))
	c.mu.Lock()
	now := c.now()
	if e := c.tokens[key]; e != nil && now.Sub(e.at) < c.maxAge {
		e.used = now
		c.mu.Unlock()
		return e.tok, nil
	}
	gen := c.gen
	c.mu.Unlock()
	tok, err := c.st.CheckToken(ctx, secret)
	if err != nil {
		c.failed(err)
		return tok, err
	}
	c.mu.Lock()
	if c.gen == gen && (c.tokens[key] != nil || len(c.tokens) < checkMax) {
		c.tokens[key] = &tokenCheck{tok: tok, at: now, used: now}
	}
	c.mu.Unlock()
	return tok, nil
}

// userDevices is the user's devices, remembered unless fresh, and when
// the store was asked for them. The slice is shared: callers do not
// modify it.
func (c *checks) userDevices(ctx context.Context, userID string, fresh bool) ([]store.Device, time.Time, error) {
	c.mu.Lock()
	now := c.now()
	if e := c.devices[userID]; e != nil && !fresh && now.Sub(e.at) < c.maxAge {
		e.used = now
		c.mu.Unlock()
		return e.devs, e.at, nil
	}
	gen := c.gen
	c.mu.Unlock()
	devs, err := c.st.Devices(ctx, userID)
	if err != nil {
		c.failed(err)
		return nil, now, err
	}
	c.mu.Lock()
	if c.gen == gen && (c.devices[userID] != nil || len(c.devices) < checkMax) {
		c.devices[userID] = &devicesCheck{devs: devs, at: now, used: now}
	}
	c.mu.Unlock()
	return devs, now, nil
}

// userDevice is the user's first device match accepts: in the remembered
// list first, in the store's when that has none, so a device paired a
// moment ago is found and a refusal is always the store's word.
func (c *checks) userDevice(ctx context.Context, userID string, match func(store.Device) bool) (store.Device, error) {
	for _, fresh := range []bool{false, true} {
		devs, _, err := c.userDevices(ctx, userID, fresh)
		if err != nil {
			return store.Device{}, err
		}
		for _, d := range devs {
			if d.UserID == userID && match(d) {
				return d, nil
			}
		}
	}
	return store.Device{}, store.ErrNotFound
}

// onEvent drops what an event says changed.
func (c *checks) onEvent(kind, id, userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	switch kind {
	case evTokenRevoked:
		for k, e := range c.tokens {
			if e.tok.ID == id {
				delete(c.tokens, k)
			}
		}
	case evDeviceRevoked:
		delete(c.devices, userID)
		for u, e := range c.devices { // an event without its user
			for _, d := range e.devs {
				if d.ID == id {
					delete(c.devices, u)
				}
			}
		}
	case evUserDeleted:
		for k, e := range c.tokens {
			if e.tok.UserID == id {
				delete(c.tokens, k)
			}
		}
		delete(c.devices, id)
	case evPairDecided:
		delete(c.devices, userID) // a device added
	default: // EventResync, or a kind this replica does not know
		clear(c.tokens)
		clear(c.devices)
	}
}

// failed drops every answer when the store failed a query (not when it
// answered "not found").
func (c *checks) failed(err error) {
	if err == nil || errors.Is(err, store.ErrNotFound) {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.tokens)
	clear(c.devices)
}

// run re-confirms the answers in use until ctx ends.
func (c *checks) run(ctx context.Context) {
	tick := time.NewTicker(c.maxAge / 2)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			qctx, cancel := context.WithTimeout(ctx, c.maxAge)
			c.refresh(qctx)
			cancel()
		}
	}
}

// refresh asks the store about every answer used lately, two queries in
// all, and forgets those the store no longer has. Answers given while it
// asks are newer than its own and left alone.
func (c *checks) refresh(ctx context.Context) {
	c.mu.Lock()
	now := c.now()
	gen := c.gen
	toks := make(map[[32]byte]*tokenCheck, len(c.tokens))
	tokenIDs := make([]string, 0, len(c.tokens))
	for k, e := range c.tokens {
		if now.Sub(e.used) > checkIdle {
			delete(c.tokens, k)
			continue
		}
		toks[k] = e
		tokenIDs = append(tokenIDs, e.tok.ID)
	}
	devs := make(map[string]*devicesCheck, len(c.devices))
	userIDs := make([]string, 0, len(c.devices))
	for u, e := range c.devices {
		if now.Sub(e.used) > checkIdle {
			delete(c.devices, u)
			continue
		}
		devs[u] = e
		userIDs = append(userIDs, u)
	}
	c.mu.Unlock()
	if len(tokenIDs) > 0 {
		live, err := c.st.LiveTokens(ctx, tokenIDs)
		if err != nil {
			c.failed(err)
			return
		}
		ok := make(map[string]bool, len(live))
		for _, id := range live {
			ok[id] = true
		}
		c.mu.Lock()
		for k, e := range toks {
			switch {
			case c.gen != gen || c.tokens[k] != e:
			case ok[e.tok.ID]:
				e.at = now
			default:
				delete(c.tokens, k)
			}
		}
		c.mu.Unlock()
	}
	if len(userIDs) > 0 {
		list, err := c.st.UsersDevices(ctx, userIDs)
		if err != nil {
			c.failed(err)
			return
		}
		byUser := make(map[string][]store.Device, len(userIDs))
		for _, d := range list {
			byUser[d.UserID] = append(byUser[d.UserID], d)
		}
		c.mu.Lock()
		for u, e := range devs {
			if c.gen == gen && c.devices[u] == e {
				// A new entry, not e changed: a caller may hold e.devs.
				c.devices[u] = &devicesCheck{devs: byUser[u], at: now, used: e.used}
			}
		}
		c.mu.Unlock()
	}
}
