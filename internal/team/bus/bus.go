// Package bus connects the replicas of a team gateway over NATS: a tool call
// that lands on any replica reaches the replica holding the browser's link
// (the device's home) by request/reply on a subject per device; cancels
// follow it there; presence (which replica is home) is a lease in a
// JetStream key-value bucket; revocations and pairing decisions are
// broadcast as events.
package bus

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// Typed errors. Those that say "nothing ran" are safe to retry; ErrHomeLost
// is not.
var (
	// ErrNoHome: no replica serves the device. Nothing ran.
	ErrNoHome = errors.New("bus: no replica holds this device's link (the browser is not connected); nothing ran")
	// ErrDraining: the device's home is shutting down and took no new
	// call; the browser is reconnecting to another replica. Nothing ran.
	ErrDraining = fmt.Errorf("bus: the device's replica is draining: %w", ErrNoHome)
	// ErrHomeLost: the home stopped answering mid-call. The call may have run.
	ErrHomeLost = errors.New("bus: the device's replica stopped answering mid-call; the call may have run")
	// ErrUnavailable: NATS cannot be reached. Nothing was sent.
	ErrUnavailable = errors.New("bus: NATS is unreachable")
	// ErrBadDeviceID: a device ID that is not lowercase hex of bounded length.
	ErrBadDeviceID = errors.New("bus: a device ID is 1 to 64 lowercase hex digits")
)

const (
	presenceBucket = "torii_presence"
	eventsSubject  = "torii.events"
	maxDeviceID    = 64
	maxReplicaName = 253
)

// timing holds the protocol's intervals; tests never change them, so a
// test that passes proves the production numbers.
type timing struct {
	heartbeat time.Duration // home → caller while a handler runs
	lostAfter time.Duration // caller: no heartbeat for this long = home lost
	lease     time.Duration // presence key lifetime without renewal
	renew     time.Duration // presence renewal period
}

var defaultTiming = timing{
	heartbeat: 500 * time.Millisecond,
	lostAfter: 1500 * time.Millisecond,
	lease:     6 * time.Second,
	renew:     2 * time.Second,
}

// Bus is one replica's connection to the others.
type Bus struct {
	nc       *nats.Conn
	js       jetstream.JetStream
	replica  string
	url      string // as configured, for messages (redacted there)
	owner    string // this instance, so a restarted replica of the same name is not "us"
	log      *slog.Logger
	now      func() time.Time
	restored func() // after a reconnect restored presence; tests only
	t        timing

	ctx    context.Context // cancelled by Close: in-flight handlers stop
	cancel context.CancelFunc

	inbox  string // prefix of the per-call reply subjects
	callMu sync.Mutex
	calls  map[string]*pending

	homeCh chan *nats.Msg // calls and cancels for served devices, in arrival order

	mu            sync.Mutex
	kv            jetstream.KeyValue
	watchGen      int
	stopWatch     context.CancelFunc
	view          view // the bucket as the watch saw it (view.go)
	served        map[string]*served
	subs          map[*nats.Subscription]*served // call and cancel subscriptions → their serve
	draining      bool
	inflight      int
	drained       chan struct{}
	drainedClosed bool
	closed        bool
	resync        map[int]func() // Subscribe's: events may have been missed
	resyncN       int
}

type option func(*Bus)

// withRestored is called each time presence was restored after a
// reconnect, so a test can wait for it.
func withRestored(f func()) option { return func(b *Bus) { b.restored = f } }

// withClock replaces the wall clock this replica stamps records with, so a
// test can run replicas whose clocks disagree.
func withClock(now func() time.Time) option { return func(b *Bus) { b.now = now } }

// Connect dials NATS at url, creates the presence bucket if missing and
// starts this replica's side of the protocol. A URL that cannot be used is
// ErrBadURL; a server that cannot be reached, refuses the credentials or
// has no JetStream is a *ConnError wrapping ErrUnavailable. Once connected it
// reconnects by itself for as long as the process runs.
func Connect(ctx context.Context, url, replica string, log *slog.Logger) (*Bus, error) {
	return connect(ctx, url, replica, log)
}

func connect(ctx context.Context, url, replica string, log *slog.Logger, opts ...option) (*Bus, error) {
	if replica == "" {
		replica, _ = os.Hostname()
	}
	if err := checkURL(url); err != nil {
		return nil, err
	}
	if replica == "" || len(replica) > maxReplicaName {
		return nil, fmt.Errorf("bus: replica name must be 1 to %d characters: set team.replica", maxReplicaName)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bus{replica: replica, url: url, owner: nuid.Next(), log: log.With("replica", replica), now: time.Now, t: defaultTiming,
		calls: map[string]*pending{}, served: map[string]*served{},
		subs: map[*nats.Subscription]*served{}, resync: map[int]func(){}, drained: make(chan struct{}), homeCh: make(chan *nats.Msg, 8192)}
	for _, o := range opts {
		o(b)
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())

	dial := 2 * time.Second
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < dial {
		dial = max(time.Until(dl), time.Millisecond)
	}
	nc, err := nats.Connect(url,
		nats.Name("torii "+replica),
		nats.Timeout(dial),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250*time.Millisecond),
		nats.ReconnectJitter(250*time.Millisecond, time.Second),
		// No buffering while disconnected: a call published into a buffer
		// could run long after its caller gave up, or never; failing at
		// once lets the caller say "nothing ran".
		nats.ReconnectBufSize(-1),
		nats.PingInterval(5*time.Second),
		nats.MaxPingsOutstanding(2),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			b.log.Warn("bus: disconnected from NATS", "err", err)
			b.viewLost()
			b.connChanged()
		}),
		nats.ReconnectHandler(func(*nats.Conn) {
			b.log.Info("bus: reconnected to NATS")
			b.connChanged()
			go b.afterReconnect()
		}),
	)
	if err != nil {
		b.cancel()
		return nil, connError(url, err)
	}
	b.nc = nc
	b.js, err = jetstream.New(nc)
	if err == nil {
		err = b.ensureBucket(ctx)
	}
	if err == nil {
		b.inbox = nc.NewInbox() + "."
		_, err = nc.Subscribe(b.inbox+"*", b.onReply)
	}
	if err == nil {
		err = b.startWatch()
	}
	if err != nil {
		b.cancel()
		nc.Close()
		return nil, connError(url, err)
	}
	go b.dispatch()
	go b.renewLoop()
	return b, nil
}

// redact drops credentials from a URL for messages.
func redact(url string) string {
	if i, j := strings.Index(url, "://"), strings.LastIndex(url, "@"); i >= 0 && j > i {
		return url[:i+3] + "…@" + url[j+1:]
	}
	return url
}

// Ready reports whether this replica can route: connected to NATS and the
// presence bucket answers.
func (b *Bus) Ready(ctx context.Context) error {
	if !b.nc.IsConnected() {
		// The last error says why reconnecting fails (refused, credentials).
		cause := b.nc.LastError()
		if cause == nil {
			cause = fmt.Errorf("%w (connection %s)", nats.ErrNoServers, b.nc.Status())
		}
		return connError(b.url, cause)
	}
	kv := b.bucket()
	if kv == nil {
		return fmt.Errorf("%w: the presence bucket is not available yet", ErrUnavailable)
	}
	if _, err := kv.Status(ctx); err != nil {
		return fmt.Errorf("%w: presence bucket: %v", ErrUnavailable, err)
	}
	return nil
}

// Close releases this replica's presence, cancels in-flight handlers and
// disconnects. Drain first for a graceful stop.
func (b *Bus) Close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	all := make([]*served, 0, len(b.served))
	for _, s := range b.served {
		all = append(all, s)
	}
	b.mu.Unlock()
	for _, s := range all {
		b.stopServing(s)
	}
	b.cancel()
	b.nc.Close()
}

// validDevice refuses anything but 1 to 64 lowercase hex digits, so a
// device ID can never widen or redirect a subject. SECURITY I-90.
func validDevice(id string) error {
	if id == "" || len(id) > maxDeviceID {
		return fmt.Errorf("%w: got %d characters", ErrBadDeviceID, len(id))
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return fmt.Errorf("%w: %q is not allowed", ErrBadDeviceID, string(c))
		}
	}
	return nil
}

func callSubject(id string) string   { return "torii.dev." + id + ".call" }
func cancelSubject(id string) string { return "torii.dev." + id + ".cancel" }
