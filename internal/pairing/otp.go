package pairing

import (
	"crypto/rand"
	"sync"
	"time"
)

// OTPs holds the one-time secrets of managed launch.
//
// SECURITY I-5: memory only (never written to disk), short-lived, single use.
type OTPs struct {
	mu   sync.Mutex
	ttl  time.Duration
	now  func() time.Time
	live map[string]time.Time // secret -> expiry
	name map[string]string    // secret -> the device name it pairs under, if given
}

// DefaultOTPTTL is the lifetime the protocol fixes for a one-time secret.
const DefaultOTPTTL = 60 * time.Second

// maxLiveOTPs bounds memory if something issues secrets in a loop.
const maxLiveOTPs = 64

// NewOTPs makes a set with the given lifetime (<= 0 means 60 s) and clock
// (nil means time.Now).
func NewOTPs(ttl time.Duration, now func() time.Time) *OTPs {
	if ttl <= 0 {
		ttl = DefaultOTPTTL
	}
	if now == nil {
		now = time.Now
	}
	return &OTPs{ttl: ttl, now: now, live: map[string]time.Time{}, name: map[string]string{}}
}

// Issue returns a fresh secret (32 random bytes, base64url) and its expiry.
func (o *OTPs) Issue() (otp string, expires time.Time) { return o.IssueNamed("") }

// IssueNamed is Issue for a launch that names the browser it starts: the
// device paired with the secret takes name rather than the one it proposes
// (the launcher knows the profile and host; the extension does not).
func (o *OTPs) IssueNamed(name string) (otp string, expires time.Time) {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	otp = EncodeB64(b)
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now()
	o.purge(now)
	for len(o.live) >= maxLiveOTPs {
		o.dropOldest()
	}
	expires = now.Add(o.ttl)
	o.live[otp] = expires
	if name != "" {
		o.name[otp] = name
	}
	return otp, expires
}

// Consume checks proof against every live secret; the secret it matches is
// consumed; an attempt that matches none consumes nothing and returns false.
// Expired secrets never match.
func (o *OTPs) Consume(pairTranscript, proof []byte) bool {
	_, ok := o.ConsumeNamed(pairTranscript, proof)
	return ok
}

// ConsumeNamed is Consume that also returns the name the secret was issued
// with ("" none).
func (o *OTPs) ConsumeNamed(pairTranscript, proof []byte) (string, bool) {
	if len(proof) == 0 {
		return "", false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.purge(o.now())
	matched := ""
	// Check every secret without stopping early so timing does not reveal
	// how many are live or which one matched.
	for s := range o.live {
		if CheckOTPProof(s, pairTranscript, proof) {
			matched = s
		}
	}
	if matched == "" {
		return "", false
	}
	name := o.name[matched]
	delete(o.live, matched)
	delete(o.name, matched)
	return name, true
}

// Live reports how many unexpired secrets are held (for status and tests).
func (o *OTPs) Live() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.purge(o.now())
	return len(o.live)
}

func (o *OTPs) purge(now time.Time) {
	for s, exp := range o.live {
		if !now.Before(exp) {
			delete(o.live, s)
			delete(o.name, s)
		}
	}
}

func (o *OTPs) dropOldest() {
	var oldest string
	var t time.Time
	for s, exp := range o.live {
		if oldest == "" || exp.Before(t) {
			oldest, t = s, exp
		}
	}
	delete(o.live, oldest)
	delete(o.name, oldest)
}
