package replica

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

// Backoff between attempts to open an engine that is not there yet: short
// at first (a database starting beside the gateway), capped so a fixed
// password or a created database is noticed within seconds.
const (
	minBackoff = 200 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// engines opens the store and the bus. A replica whose engines cannot be
// used at start still serves /healthz and a false /readyz naming why, and
// retries each engine until it opens (SECURITY I-101); only an error
// retrying cannot fix (a malformed URL) stops it.
type engines struct {
	r         *replica
	openStore func(ctx context.Context, url string) (store.Store, error)
	openBus   func(ctx context.Context, url, replica string, log *slog.Logger) (router, error)
	storeLog  *reporter
	busLog    *reporter

	mu     sync.Mutex
	st     store.Store
	bus    router
	stErr  error // the last failure while the store is not open
	busErr error
}

func newEngines(r *replica) *engines {
	e := &engines{r: r, openStore: r.opts.openStore, openBus: r.opts.openBus,
		storeLog: newReporter(r.log, "store"), busLog: newReporter(r.log, "bus")}
	if e.openStore == nil {
		e.openStore = defaultStore
	}
	if e.openBus == nil {
		e.openBus = defaultBus
	}
	return e
}

// permanent reports whether retrying cannot help: every failure to reach or
// use an engine wraps its package's ErrUnavailable; the rest (ErrBadURL, an
// unusable SQLite path, a bad replica name) are the configuration's.
func permanent(err error) bool {
	return err != nil && !errors.Is(err, store.ErrUnavailable) && !errors.Is(err, bus.ErrUnavailable)
}

// tryStore and tryBus make one attempt each; nil once that engine is open.
func (e *engines) tryStore(ctx context.Context) error {
	if e.storeOpen() {
		return nil
	}
	st, err := e.openStore(ctx, e.r.team.Store)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.stErr = err
		return err
	}
	e.st, e.stErr = st, nil
	return nil
}

func (e *engines) tryBus(ctx context.Context) error {
	if e.busOpen() {
		return nil
	}
	b, err := e.openBus(ctx, e.r.team.Bus, e.r.team.Replica, e.r.log)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		e.busErr = err
		return err
	}
	e.bus, e.busErr = b, nil
	return nil
}

func (e *engines) storeOpen() bool { e.mu.Lock(); defer e.mu.Unlock(); return e.st != nil }
func (e *engines) busOpen() bool   { e.mu.Lock(); defer e.mu.Unlock(); return e.bus != nil }

// first makes one attempt at each engine, together. It returns a permanent
// error, prefixed with the setting at fault; retryable ones are logged and
// left for retry.
func (e *engines) first(ctx context.Context) error {
	var wg sync.WaitGroup
	var stErr, busErr error
	wg.Go(func() { stErr = e.tryStore(ctx) })
	wg.Go(func() { busErr = e.tryBus(ctx) })
	wg.Wait()
	if permanent(stErr) {
		return fmt.Errorf("replica: team.store: %w", stErr)
	}
	if permanent(busErr) {
		return fmt.Errorf("replica: team.bus: %w", busErr)
	}
	e.report(stErr, busErr)
	return nil
}

func (e *engines) report(stErr, busErr error) {
	if stErr != nil {
		e.storeLog.failed(problemOf("store", stErr))
	}
	if busErr != nil {
		e.busLog.failed(problemOf("bus", busErr))
	}
}

// untilOpen retries each engine not open yet until both are, ctx ends
// (its error) or one fails permanently.
func (e *engines) untilOpen(ctx context.Context) error {
	var wg sync.WaitGroup
	var stErr, busErr error
	wg.Go(func() { stErr = retry(ctx, e.tryStore, e.storeLog) })
	wg.Go(func() { busErr = retry(ctx, e.tryBus, e.busLog) })
	wg.Wait()
	if stErr != nil {
		return fmt.Errorf("replica: team.store: %w", stErr)
	}
	if busErr != nil {
		return fmt.Errorf("replica: team.bus: %w", busErr)
	}
	return nil
}

// retry calls try until it succeeds, fails permanently or ctx ends, waiting
// a capped exponential backoff with jitter between attempts, so replicas
// that started together do not retry in step against a recovering server.
func retry(ctx context.Context, try func(context.Context) error, log *reporter) error {
	wait := minBackoff
	for {
		err := try(ctx)
		if err == nil {
			log.ok()
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if permanent(err) {
			return err
		}
		log.failed(problemOf(log.engine, err))
		d := wait/2 + rand.N(wait/2+1)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, maxBackoff)
	}
}

// problems is what /readyz says while the engines are not both open.
func (e *engines) problems() (stOK, busOK bool, ps []Problem) {
	e.mu.Lock()
	defer e.mu.Unlock()
	stOK, busOK = e.st != nil, e.bus != nil
	if !stOK {
		ps = append(ps, problemOrConnecting("store", e.stErr))
	}
	if !busOK {
		ps = append(ps, problemOrConnecting("bus", e.busErr))
	}
	return stOK, busOK, ps
}

func problemOrConnecting(engine string, err error) Problem {
	if err == nil {
		return Problem{Engine: engine, Code: engine + "_connecting", Message: "connecting to the " + engine,
			Fix: "wait; the first attempt has not answered yet"}
	}
	return problemOf(engine, err)
}

// close closes whichever engine is open (SIGTERM before both were).
func (e *engines) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.bus != nil {
		e.bus.Close()
	}
	if e.st != nil {
		e.st.Close()
	}
}
