package broker

// The audit hook. Keep it through restructurings: every
// finished call — refused by the gate, refused in the queue, or run on the
// extension — reaches the Observer exactly once, through record(); a call
// to a client-declared server's tool through the gateway, through
// ObserveExternal. The daemon registers internal/audit's store here
// (internal/daemon/audit.go).

import (
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/toolerr"
)

// MetaAudit (result _meta) is what the extension reports for the audit:
// {"origin": "<scheme://host[:port] the call acted on>", "approval":
// "<allowed|approved|denied|timeout>", "secrets": "NAME on ORIGIN, …"},
// each optional. The broker reads and
// strips it. docs/audit.md.
const MetaAudit = "torii/audit"

// AuditRecord is one finished call as the Observer sees it. SECURITY I-31:
// metadata only — it has no field for arguments, typed text, page content
// or results, and the broker never puts them in one.
type AuditRecord struct {
	Time     time.Time // when the call arrived
	Tool     string
	Session  string // the session's label
	Origin   string // as the extension reported it; "" when it did not
	Outcome  string // "ok" or "error"
	Code     string // the error code; "" when ok
	Duration time.Duration
	Approval string // the person's decision when one was asked; ""
	Secrets  string // the secrets the call used, by name (SECURITY I-69); ""
	Tag      string // the call's Call.Tag
}

// Observer receives every finished call. CallDone runs on the calling
// goroutine before the call's result is returned; it should not block,
// except where the record must be durable before the reply (team mode
// writes its audit there, and so delays the reply by that write).
type Observer interface {
	CallDone(AuditRecord)
}

// SetObserver registers o (nil removes it).
func (b *Broker) SetObserver(o Observer) {
	b.observer.Store(&o)
}

// observe hands a finished call to the Observer; res is nil when nothing
// was sent. Called from record().
func (b *Broker) observe(s *Session, tag, tool string, start time.Time, code toolerr.Code, res *mcp.CallToolResult) {
	p := b.observer.Load()
	if p == nil || *p == nil {
		takeAudit(res)
		return
	}
	r := AuditRecord{Time: start, Tool: tool, Outcome: "ok", Code: string(code), Duration: time.Since(start), Tag: tag}
	if s != nil {
		r.Session = s.label
	}
	if code != "" {
		r.Outcome = "error"
	}
	r.Origin, r.Approval, r.Secrets = takeAudit(res)
	(*p).CallDone(r)
}

// ObserveExternal hands the Observer a call that does not pass the broker:
// a tool of an MCP server a chat client declared, called through the
// gateway as <server>.<tool> (internal/gateway/tools.go), recorded under
// that full name with the same metadata-only record. res is the answer the
// agent got (a refusal included). Such a server is not the extension: its
// _meta is never read as an origin or approval. A nil broker records
// nothing.
func (b *Broker) ObserveExternal(session, tool string, start time.Time, res *mcp.CallToolResult) {
	if b == nil {
		return
	}
	p := b.observer.Load()
	if p == nil || *p == nil {
		return
	}
	r := AuditRecord{Time: start, Tool: tool, Session: session, Outcome: "ok", Duration: time.Since(start)}
	if e := toolerr.FromResult(res); e != nil {
		r.Outcome, r.Code = "error", string(e.Code)
	} else if res == nil || res.IsError {
		r.Outcome, r.Code = "error", string(toolerr.Internal)
	}
	(*p).CallDone(r)
}

// maxAuditSecrets bounds what a record keeps of the secrets a call used.
const maxAuditSecrets = 500

// takeAudit reads and strips MetaAudit from a result.
func takeAudit(res *mcp.CallToolResult) (origin, approval, secrets string) {
	raw, ok := takeMeta(res, MetaAudit)
	if !ok {
		return "", "", ""
	}
	var m struct {
		Origin   string `json:"origin"`
		Approval string `json:"approval"`
		Secrets  string `json:"secrets"`
	}
	if b, err := json.Marshal(raw); err == nil && json.Unmarshal(b, &m) == nil {
		return m.Origin, m.Approval, clipRunes(m.Secrets, maxAuditSecrets)
	}
	return "", "", ""
}
