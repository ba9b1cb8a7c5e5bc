package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/torii-browser/torii/internal/audit"
	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/wire"
)

// AuditWitness is the link method by which a paired extension hands the
// daemon the chain links it was shown before (its copy of the audit's
// head) and learns the current head. SECURITY I-70: the hash chain alone
// cannot stop someone who rewrites audit.db and recomputes every hash
// after an edit; the browser's links, kept outside the state directory,
// show it: on each reconnect the store must still hold each of them.
const AuditWitness = "torii/audit/witness"

// maxWitnesses bounds one witness call.
const maxWitnesses = 64

// AuditWitnessParams: the links the extension saw, empty to only learn
// the head.
type AuditWitnessParams struct {
	Witnesses []audit.Link `json:"witnesses"`
}

// AuditWitnessResult: the head now, how many links were compared, and the
// first disagreement.
type AuditWitnessResult struct {
	Head     audit.Link `json:"head"`
	Checked  int        `json:"checked"`
	Mismatch string     `json:"mismatch,omitempty"`
}

// AuditCrossCheck is the last cross-check with a browser, in `status`.
type AuditCrossCheck struct {
	DeviceID   string    `json:"deviceId"`
	DeviceName string    `json:"deviceName"`
	At         time.Time `json:"at"`
	Checked    int       `json:"checked"`
	OK         bool      `json:"ok"`
	Seq        int64     `json:"seq,omitempty"` // the record at fault
	Mismatch   string    `json:"mismatch,omitempty"`
}

// AuditStatus is `status`'s audit: the chain's head and checkpoint, the
// last cross-check with a browser (a failed one is kept until one passes),
// and what is wrong with the chain's ends, if anything.
type AuditStatus struct {
	Head       audit.Link       `json:"head"`
	Checkpoint audit.Checkpoint `json:"checkpoint"`
	CrossCheck *AuditCrossCheck `json:"crossCheck,omitempty"`
	Problem    *AuditProblem    `json:"problem,omitempty"`
}

// AuditProblem is a chain whose ends are not what the daemon signed and
// wrote (SECURITY I-74): a forged or missing checkpoint, records deleted
// from the end, a signed head the database contradicts.
type AuditProblem struct {
	Seq     int64  `json:"seq,omitempty"` // the record at fault, when one is
	Problem string `json:"problem"`       // an audit.Problem* constant
	Detail  string `json:"detail"`
	Next    string `json:"next"`
}

// auditCross holds the last cross-check.
type auditCross struct {
	mu   sync.Mutex
	last *AuditCrossCheck
}

var hexHash = regexp.MustCompile(`^[0-9a-f]{64}$`)

func (d *daemon) auditWitness(ctx context.Context, c *link.Conn, raw json.RawMessage) (any, error) {
	i := c.Info()
	if i.Kind != link.KindDevice {
		return nil, wire.Errorf(wire.CodeInvalidRequest, "%s: only a paired browser witnesses the audit", AuditWitness)
	}
	var p AuditWitnessParams
	if len(raw) > 0 && json.Unmarshal(raw, &p) != nil {
		return nil, wire.Errorf(wire.CodeInvalidParams, "%s: witnesses must be [{seq, hash}]", AuditWitness)
	}
	if len(p.Witnesses) > maxWitnesses {
		return nil, wire.Errorf(wire.CodeInvalidParams, "%s: at most %d witnesses", AuditWitness, maxWitnesses)
	}
	for _, w := range p.Witnesses {
		if w.Seq < 0 || !hexHash.MatchString(w.Hash) {
			return nil, wire.Errorf(wire.CodeInvalidParams, "%s: a witness is {seq ≥ 0, hash: 64 lowercase hex}", AuditWitness)
		}
	}
	if d.audit == nil {
		return nil, wire.Errorf(wire.CodeInternalError, "%s: the audit database is not open", AuditWitness)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tip, err := d.audit.Tip(ctx)
	if err != nil {
		return nil, wire.Errorf(wire.CodeInternalError, "%s: %v", AuditWitness, err)
	}
	res := AuditWitnessResult{Head: tip.Head}
	if len(p.Witnesses) == 0 {
		return res, nil
	}
	var badSeq int64 = -1
	for _, w := range p.Witnesses {
		var why string
		switch {
		case w.Seq > tip.Head.Seq:
			why = fmt.Sprintf("the browser saw record %d but the store ends at %d: records were deleted from its end, or audit.db was replaced", w.Seq, tip.Head.Seq)
		case w.Seq < tip.Checkpoint.Seq:
			continue // deleted by retention: nothing left to compare
		default:
			h, ok, err := d.audit.HashAt(ctx, w.Seq)
			if err != nil {
				return nil, wire.Errorf(wire.CodeInternalError, "%s: %v", AuditWitness, err)
			}
			switch {
			case !ok:
				why = fmt.Sprintf("record %d, which the browser saw, is not in the store", w.Seq)
			case h != w.Hash:
				why = fmt.Sprintf("record %d in the store is not the one the browser saw (hash %.12s, not %.12s): it was edited, or the chain rewritten", w.Seq, h, w.Hash)
			}
		}
		res.Checked++
		if why != "" && (badSeq < 0 || w.Seq < badSeq) {
			badSeq, res.Mismatch = w.Seq, why
		}
	}
	x := &AuditCrossCheck{DeviceID: i.DeviceID, DeviceName: i.DeviceName, At: time.Now().UTC(), Checked: res.Checked, OK: res.Mismatch == ""}
	if !x.OK {
		x.Seq, x.Mismatch = badSeq, res.Mismatch
		d.log.Warn("audit: the store disagrees with what a browser saw of the chain", "device", i.DeviceName, "seq", badSeq,
			"problem", res.Mismatch, "fix", "run `torii audit verify`; keep audit.db as evidence")
	} else {
		d.log.Debug("audit: cross-check with a browser passed", "device", i.DeviceName, "checked", res.Checked)
	}
	d.auditXC.mu.Lock()
	// A failed check stays in `status` until one passes.
	d.auditXC.last = x
	d.auditXC.mu.Unlock()
	return res, nil
}

// auditStatus is `status`'s audit; nil without a database.
func (d *daemon) auditStatus(ctx context.Context) *AuditStatus {
	if d.audit == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	tip, err := d.audit.Tip(ctx)
	if err != nil {
		return nil
	}
	st := &AuditStatus{Head: tip.Head, Checkpoint: tip.Checkpoint}
	// SECURITY I-74: status reports a forged or missing checkpoint.
	if ce, err := d.audit.Check(ctx); err != nil {
		d.log.Warn("audit: check the chain's ends", "err", err)
	} else if ce != nil {
		st.Problem = &AuditProblem{Seq: ce.Seq, Problem: ce.Problem, Detail: ce.Detail, Next: ce.Next()}
	}
	d.auditXC.mu.Lock()
	if d.auditXC.last != nil {
		x := *d.auditXC.last
		st.CrossCheck = &x
	}
	d.auditXC.mu.Unlock()
	return st
}

func (d *daemon) handleAuditTip(ctx context.Context) (any, error) {
	if d.audit == nil {
		return nil, wire.Errorf(wire.CodeInternalError, "audit.tip: the audit database is not open")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return d.audit.Tip(ctx)
}
