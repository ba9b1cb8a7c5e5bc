package audit

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Filter selects records. Empty fields match everything; string fields
// match exactly. Results are newest first.
type Filter struct {
	Since   time.Time `json:"since,omitzero"` // inclusive
	Until   time.Time `json:"until,omitzero"` // exclusive
	Tool    string    `json:"tool,omitempty"`
	Session string    `json:"session,omitempty"`
	Outcome string    `json:"outcome,omitempty"`
	Code    string    `json:"code,omitempty"`
	Origin  string    `json:"origin,omitempty"`
	// BeforeID pages backwards: only records with a smaller id.
	BeforeID int64 `json:"beforeId,omitempty"`
	// Limit bounds the records returned; 0 = all (Each) or 100 (Query).
	Limit int `json:"limit,omitempty"`
}

// Validate checks the outcome and the time range.
func (f Filter) Validate() error {
	if f.Outcome != "" && f.Outcome != OutcomeOK && f.Outcome != OutcomeError {
		return fmt.Errorf("outcome must be %q or %q", OutcomeOK, OutcomeError)
	}
	if f.Limit < 0 {
		return fmt.Errorf("limit must not be negative")
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return fmt.Errorf("until must be after since")
	}
	return nil
}

func (f Filter) sql() (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) {
		where = append(where, cond)
		args = append(args, v)
	}
	if !f.Since.IsZero() {
		add("ts >= ?", f.Since.UnixMilli())
	}
	if !f.Until.IsZero() {
		add("ts < ?", f.Until.UnixMilli())
	}
	for _, c := range []struct{ col, v string }{{"tool", f.Tool}, {"session", f.Session}, {"outcome", f.Outcome},
		{"code", f.Code}, {"origin", f.Origin}} {
		if c.v != "" {
			add(c.col+" = ?", c.v)
		}
	}
	if f.BeforeID > 0 {
		add("id < ?", f.BeforeID)
	}
	q := `SELECT ` + recordCols + ` FROM calls`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += " LIMIT " + strconv.Itoa(f.Limit)
	}
	return q, args
}

// Each streams the matching records, newest first, to fn (records queued
// before the call are written first). fn's error stops the walk.
func (s *Store) Each(ctx context.Context, f Filter, fn func(Record) error) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if err := s.Flush(ctx); err != nil {
		return err
	}
	q, args := f.sql()
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("audit: query: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Record
		if err := scanRecord(rows, &r); err != nil {
			return err
		}
		if err := fn(r); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Page is one Query answer. Next, when non-zero, is the BeforeID of the
// following page. Chain is the chain's head and checkpoint when the page
// was read; a page holds no record newer than that head.
type Page struct {
	Records []Record  `json:"records"`
	Next    int64     `json:"next,omitempty"`
	Chain   *ChainTip `json:"chain,omitempty"`
}

// ChainTip is what an export needs to be verified later: the chain's last
// link and where the kept chain starts.
type ChainTip struct {
	Head       Link       `json:"head"`
	Checkpoint Checkpoint `json:"checkpoint"`
}

// Tip is the chain's head and latest checkpoint, once queued records are
// written.
func (s *Store) Tip(ctx context.Context) (ChainTip, error) {
	if err := s.Flush(ctx); err != nil {
		return ChainTip{}, err
	}
	s.wmu.Lock() // not between a retention's delete and its checkpoint
	defer s.wmu.Unlock()
	cp, err := s.LatestCheckpoint(ctx)
	if err != nil {
		return ChainTip{}, err
	}
	return ChainTip{Head: s.Head(), Checkpoint: cp}, nil
}

// zero reports whether f selects every record (no condition, no limit).
func (f Filter) zero() bool { return f == Filter{} }

// Query returns one page of at most f.Limit records (default 100, at most
// MaxLimit), newest first.
func (s *Store) Query(ctx context.Context, f Filter) (Page, error) {
	if f.Limit == 0 {
		f.Limit = 100
	}
	if f.Limit > MaxLimit {
		f.Limit = MaxLimit
	}
	want := f.Limit
	f.Limit++ // one more tells whether a next page exists
	tip, err := s.Tip(ctx)
	if err != nil {
		return Page{}, err
	}
	if f.BeforeID == 0 || f.BeforeID > tip.Head.Seq+1 {
		f.BeforeID = tip.Head.Seq + 1
	}
	p := Page{Records: []Record{}, Chain: &tip}
	err = s.Each(ctx, f, func(r Record) error {
		p.Records = append(p.Records, r)
		return nil
	})
	if err != nil {
		return Page{}, err
	}
	if len(p.Records) > want {
		p.Records = p.Records[:want]
		p.Next = p.Records[want-1].ID
	}
	return p, nil
}

// CSVHeader is the first line of a CSV export.
var CSVHeader = []string{"id", "time", "tool", "session", "origin", "outcome", "code", "durationMs", "approval", "secrets", "prev", "hash"}

// CSVWriter writes records as CSV, one per line, after CSVHeader.
type CSVWriter struct {
	w      *csv.Writer
	header bool
}

// NewCSVWriter writes to w.
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one record (the header first).
func (c *CSVWriter) Write(r Record) error {
	if !c.header {
		c.header = true
		if err := c.w.Write(CSVHeader); err != nil {
			return err
		}
	}
	return c.w.Write([]string{strconv.FormatInt(r.ID, 10), r.Time.UTC().Format(time.RFC3339Nano), cell(r.Tool), cell(r.Session),
		cell(r.Origin), cell(r.Outcome), cell(r.Code), strconv.FormatInt(r.DurationMs, 10), cell(r.Approval), cell(r.Secrets), r.Prev, r.Hash})
}

// Close writes the header if nothing was written, and flushes.
func (c *CSVWriter) Close() error {
	if !c.header {
		c.header = true
		if err := c.w.Write(CSVHeader); err != nil {
			return err
		}
	}
	c.w.Flush()
	return c.w.Error()
}

// cell neutralises spreadsheet formulas: session labels and origins come
// from agents and pages, so a cell starting with = + - @ or a control
// character is prefixed with ' (CSV injection).
func cell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// ExportFormat names a JSON export (docs/audit.md, "Verifying an export").
const ExportFormat = "torii-audit-export"

// ExportVersion is the JSON export's version.
const ExportVersion = 1

// ExportHeader opens a JSON export: the chain's tip when it was read, and
// whether the export holds every kept record (no filter, no limit), so its
// records must run unbroken from the head down to the checkpoint.
type ExportHeader struct {
	Format   string   `json:"format"`
	Version  int      `json:"version"`
	Chain    ChainTip `json:"chain"`
	Complete bool     `json:"complete"`
}

// JSONWriter writes an export: one JSON object, the header's fields, then
// "records" (newest first, one per line) and "count" last, so an export of
// any size streams without being held in memory and one cut short is seen.
type JSONWriter struct {
	w        io.Writer
	n        int
	tip      ChainTip
	complete bool
	started  bool
}

// NewJSONWriter writes to w. Call SetChain before the first Write.
func NewJSONWriter(w io.Writer) *JSONWriter { return &JSONWriter{w: w} }

// SetChain sets the header's tip and completeness.
func (j *JSONWriter) SetChain(tip ChainTip, complete bool) {
	j.tip, j.complete = tip, complete
}

func (j *JSONWriter) start() error {
	if j.started {
		return nil
	}
	j.started = true
	h, err := json.Marshal(ExportHeader{Format: ExportFormat, Version: ExportVersion, Chain: j.tip, Complete: j.complete})
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(j.w, "%s,\n\"records\": [", h[:len(h)-1])
	return err
}

// Write writes one record.
func (j *JSONWriter) Write(r Record) error {
	if err := j.start(); err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	sep := ",\n"
	if j.n == 0 {
		sep = "\n"
	}
	j.n++
	if _, err := io.WriteString(j.w, sep); err != nil {
		return err
	}
	_, err = j.w.Write(b)
	return err
}

// Close ends the records and writes the count.
func (j *JSONWriter) Close() error {
	if err := j.start(); err != nil {
		return err
	}
	nl := "\n"
	if j.n == 0 {
		nl = ""
	}
	_, err := fmt.Fprintf(j.w, "%s],\n\"count\": %d}\n", nl, j.n)
	return err
}

// Export streams the matching records to w as "json" or "csv".
func (s *Store) Export(ctx context.Context, f Filter, format string, w io.Writer) error {
	var rw interface {
		Write(Record) error
		Close() error
	}
	complete := f.zero()
	tip, err := s.Tip(ctx)
	if err != nil {
		return err
	}
	if f.BeforeID == 0 || f.BeforeID > tip.Head.Seq+1 {
		f.BeforeID = tip.Head.Seq + 1
	}
	switch format {
	case "json":
		jw := NewJSONWriter(w)
		jw.SetChain(tip, complete)
		rw = jw
	case "csv":
		rw = NewCSVWriter(w)
	default:
		return fmt.Errorf("audit: unknown export format %q (json or csv)", format)
	}
	if err := s.Each(ctx, f, rw.Write); err != nil {
		return err
	}
	return rw.Close()
}
