package replica

import (
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/team/bus"
	"github.com/torii-browser/torii/internal/team/store"
)

// Problem is one reason /readyz is false, typed, with the next step. Its
// texts come from the store's and the bus's typed errors, which never
// carry a password.
type Problem struct {
	Engine  string `json:"engine"` // "store" or "bus"
	Code    string `json:"code"`   // e.g. store_auth, store_unreachable, bus_unreachable
	Message string `json:"message"`
	Fix     string `json:"fix"`
}

func problemOf(engine string, err error) Problem {
	var sc *store.ConnError
	var bc *bus.ConnError
	switch {
	case errors.As(err, &sc):
		return Problem{Engine: engine, Code: sc.Code, Message: sc.Msg, Fix: sc.Fix}
	case errors.As(err, &bc):
		return Problem{Engine: engine, Code: bc.Code, Message: bc.Msg, Fix: bc.Fix}
	}
	return Problem{Engine: engine, Code: engine + "_unavailable", Message: err.Error(),
		Fix: "see the gateway's log; it retries by itself"}
}

// public is the problem as /readyz shows it. /readyz answers anyone who
// reaches the replica, through the Ingress too, so it names the code and
// the setting to check but no host, port, user or database: those are in
// the replica's log, with the whole message (SECURITY I-101).
func (p Problem) public() Problem {
	where := "the store URL (team.store)"
	if p.Engine == "bus" {
		where = "the bus URL (team.bus)"
	}
	fix := map[string]string{
		"store_auth":             "check the user and password in " + where + " and the server's pg_hba.conf",
		"store_no_database":      "create the database named in " + where + ", or correct the name",
		"store_migrate":          "let the user in " + where + " create tables in its database",
		"bus_auth":               "check the user and password (or token) in " + where,
		"bus_no_jetstream":       "enable JetStream on the NATS server",
		p.Engine + "_connecting": "wait; the first attempt has not answered yet",
	}[p.Code]
	if fix == "" {
		fix = "check the host and port in " + where + " and that the server runs"
	}
	return Problem{Engine: p.Engine, Code: p.Code, Message: p.Engine + " unavailable (" + p.Code + "); the replica's log has the details",
		Fix: fix + "; the replica retries by itself"}
}

// reportEvery bounds how often a problem that stays the same is logged again.
const reportEvery = 30 * time.Second

// reporter logs an engine's problem when it starts or changes, then at most
// once per reportEvery while it lasts, and once when it ends: a probe every
// few seconds or a retry loop does not flood the log.
type reporter struct {
	log    *slog.Logger
	engine string

	mu     sync.Mutex
	last   *Problem
	since  time.Time // when the current problem started
	logged time.Time // when it was last logged
}

func newReporter(log *slog.Logger, engine string) *reporter {
	return &reporter{log: log, engine: engine}
}

func (p *reporter) failed(pr Problem) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	switch {
	case p.last == nil || *p.last != pr:
		if p.last == nil {
			p.since = now
		}
		p.last = &pr
	case now.Sub(p.logged) < reportEvery:
		return
	}
	p.logged = now
	p.log.Error("team "+p.engine+" unavailable: "+pr.Message, "code", pr.Code, "fix", pr.Fix,
		"for", now.Sub(p.since).Round(time.Second).String())
}

func (p *reporter) ok() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.last == nil {
		return
	}
	p.log.Info("team "+p.engine+" available again", "after", time.Since(p.since).Round(time.Second).String())
	p.last = nil
}
