package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// VerifyExport verifies a JSON export (JSONWriter) on its own, streaming:
// every record's hash, the order and the links between consecutive records;
// for a complete export also that the records run unbroken from the head it
// names down to its checkpoint; and that it is not cut short. A problem
// found is the one at the lowest record id (the first broken link).
func VerifyExport(r io.Reader) (Report, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	v := &exportWalk{dec: dec}
	rep, err := v.run()
	if err != nil {
		return Report{}, err
	}
	if v.worst != nil {
		return Report{}, v.worst
	}
	return rep, nil
}

type exportWalk struct {
	dec    *json.Decoder
	hdr    ExportHeader
	seenHd bool
	worst  *ChainError
	// the previous record (newer, as the export runs newest first)
	last    *Record
	oldest  *Record // the oldest chained record
	n       int64
	chained int64
	legacy  int64
}

func (v *exportWalk) fail(off int64, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &ChainError{Problem: ProblemTruncated, Detail: fmt.Sprintf("the export ends at byte %d, before its end", off)}
	}
	return &ChainError{Problem: ProblemNotExport, Detail: fmt.Sprintf("not a well-formed export at byte %d: %v", off, err)}
}

// found keeps the problem at the lowest record id.
func (v *exportWalk) found(e *ChainError) {
	if v.worst == nil || e.Seq < v.worst.Seq {
		v.worst = e
	}
}

func (v *exportWalk) run() (Report, error) {
	t, err := v.dec.Token()
	if err != nil {
		return Report{}, v.fail(v.dec.InputOffset(), err)
	}
	if d, ok := t.(json.Delim); !ok || d != '{' {
		return Report{}, &ChainError{Problem: ProblemNotExport, Detail: "the file is not a JSON object (an export made before the chain is a JSON array and cannot be verified)"}
	}
	count := int64(-1)
	for v.dec.More() {
		t, err := v.dec.Token()
		if err != nil {
			return Report{}, v.fail(v.dec.InputOffset(), err)
		}
		key, _ := t.(string)
		switch key {
		case "records":
			if !v.seenHd || v.hdr.Format != ExportFormat {
				return Report{}, &ChainError{Problem: ProblemNotExport, Detail: fmt.Sprintf("the file does not start as a %s header", ExportFormat)}
			}
			if v.hdr.Version > ExportVersion {
				return Report{}, &ChainError{Problem: ProblemNotExport, Detail: fmt.Sprintf("export version %d is newer than this torii (%d); upgrade torii", v.hdr.Version, ExportVersion)}
			}
			if err := v.records(); err != nil {
				return Report{}, err
			}
		case "count":
			if err := v.dec.Decode(&count); err != nil {
				return Report{}, v.fail(v.dec.InputOffset(), err)
			}
		case "format", "version", "chain", "complete":
			v.seenHd = true
			var err error
			switch key {
			case "format":
				err = v.dec.Decode(&v.hdr.Format)
			case "version":
				err = v.dec.Decode(&v.hdr.Version)
			case "chain":
				err = v.dec.Decode(&v.hdr.Chain)
			case "complete":
				err = v.dec.Decode(&v.hdr.Complete)
			}
			if err != nil {
				return Report{}, v.fail(v.dec.InputOffset(), err)
			}
		default: // a later torii's field: skip it
			var skip json.RawMessage
			if err := v.dec.Decode(&skip); err != nil {
				return Report{}, v.fail(v.dec.InputOffset(), err)
			}
		}
	}
	if _, err := v.dec.Token(); err != nil { // the closing brace
		return Report{}, v.fail(v.dec.InputOffset(), err)
	}
	if !v.seenHd {
		return Report{}, &ChainError{Problem: ProblemNotExport, Detail: "the file has no " + ExportFormat + " header"}
	}
	if v.worst != nil { // a broken link says more than a count that no longer matches
		return Report{}, v.worst
	}
	if count < 0 {
		return Report{}, &ChainError{Problem: ProblemTruncated, Detail: "the export has no record count at its end"}
	}
	if count != v.n {
		return Report{}, &ChainError{Problem: ProblemTruncated, Detail: fmt.Sprintf("the export says it holds %d records but holds %d", count, v.n)}
	}
	tip := v.hdr.Chain
	if v.hdr.Complete {
		// The oldest end: the oldest chained record follows the checkpoint.
		switch {
		case v.oldest == nil && tip.Head.Seq != tip.Checkpoint.Seq:
			v.found(&ChainError{Seq: tip.Checkpoint.Seq + 1, Problem: ProblemMissing, Detail: fmt.Sprintf("the export names head %d but holds no record after its checkpoint %d", tip.Head.Seq, tip.Checkpoint.Seq)})
		case v.oldest != nil && v.oldest.ID > tip.Checkpoint.Seq+1:
			v.found(&ChainError{Seq: tip.Checkpoint.Seq + 1, Problem: ProblemMissing, Detail: fmt.Sprintf("records %d to %d are not there (deleted); the oldest kept is %d", tip.Checkpoint.Seq+1, v.oldest.ID-1, v.oldest.ID)})
		case v.oldest != nil && v.oldest.ID == tip.Checkpoint.Seq+1 && v.oldest.Prev != tip.Checkpoint.Hash:
			v.found(&ChainError{Seq: v.oldest.ID, Problem: ProblemBrokenLink, Detail: "its prev is not the checkpoint's hash"})
		}
	}
	return Report{Records: v.chained, Legacy: v.legacy, Head: tip.Head, Checkpoint: tip.Checkpoint, Complete: v.hdr.Complete}, nil
}

func (v *exportWalk) records() error {
	t, err := v.dec.Token()
	if err != nil {
		return v.fail(v.dec.InputOffset(), err)
	}
	if d, ok := t.(json.Delim); !ok || d != '[' {
		return &ChainError{Problem: ProblemNotExport, Detail: "records is not an array"}
	}
	for v.dec.More() {
		var raw map[string]any
		if err := v.dec.Decode(&raw); err != nil {
			return v.fail(v.dec.InputOffset(), err)
		}
		v.n++
		if err := v.record(raw); err != nil {
			return err
		}
	}
	if _, err := v.dec.Token(); err != nil {
		return v.fail(v.dec.InputOffset(), err)
	}
	return nil
}

// record checks one record, newest first.
func (v *exportWalk) record(raw map[string]any) error {
	fields := make(map[string]string, len(raw))
	for k, x := range raw {
		switch x := x.(type) {
		case string:
			if x != "" {
				fields[k] = x
			}
		case json.Number:
			if _, err := strconv.ParseInt(string(x), 10, 64); err != nil {
				return &ChainError{Problem: ProblemNotExport, Detail: fmt.Sprintf("record %d: %s is not an integer", v.n, k)}
			}
			if x != "0" {
				fields[k] = string(x)
			}
		case nil:
		default:
			return &ChainError{Problem: ProblemNotExport, Detail: fmt.Sprintf("record %d: %s is neither a string nor an integer", v.n, k)}
		}
	}
	id, err := strconv.ParseInt(fields["id"], 10, 64)
	if err != nil || id <= 0 {
		return &ChainError{Problem: ProblemNotExport, Detail: fmt.Sprintf("record %d has no id", v.n)}
	}
	r := &Record{ID: id, Prev: fields["prev"], Hash: fields["hash"]}
	tip := v.hdr.Chain
	if v.last != nil && id >= v.last.ID {
		v.found(&ChainError{Seq: min(id, v.last.ID), Problem: ProblemOutOfOrder, Detail: fmt.Sprintf("record %d comes after record %d in an export that runs newest first", id, v.last.ID)})
	}
	if r.Hash == "" {
		if id <= tip.Checkpoint.Seq && tip.Checkpoint.Kind == CheckpointGenesis {
			v.legacy++ // from before the chain: nothing to check
			v.last = r
			return nil
		}
		v.found(&ChainError{Seq: id, Problem: ProblemAltered, Detail: "it has no hash"})
	} else if hashFields(fields) != r.Hash {
		v.found(&ChainError{Seq: id, Problem: ProblemAltered, Detail: "its fields do not give its hash: the record was edited"})
	}
	switch {
	case id > tip.Head.Seq:
		v.found(&ChainError{Seq: id, Problem: ProblemHeadMismatch, Detail: fmt.Sprintf("it is newer than the head the export names (%d)", tip.Head.Seq)})
	case id == tip.Head.Seq && r.Hash != tip.Head.Hash:
		v.found(&ChainError{Seq: id, Problem: ProblemHeadMismatch, Detail: "its hash is not the head the export names"})
	case id <= tip.Checkpoint.Seq:
		v.found(&ChainError{Seq: id, Problem: ProblemBeforeCheckpoint, Detail: fmt.Sprintf("a chained record at or before the checkpoint (%d)", tip.Checkpoint.Seq)})
	}
	if v.hdr.Complete {
		expect := tip.Head.Seq // the id this record should have
		if v.last != nil {
			expect = v.last.ID - 1
		}
		if id < expect {
			v.found(&ChainError{Seq: id + 1, Problem: ProblemMissing, Detail: fmt.Sprintf("records %d to %d are not there (deleted)", id+1, expect)})
		}
	}
	if v.last != nil && v.last.ID == id+1 && v.last.Prev != r.Hash && v.last.Hash != "" {
		v.found(&ChainError{Seq: v.last.ID, Problem: ProblemBrokenLink, Detail: fmt.Sprintf("its prev is not record %d's hash", id)})
	}
	v.chained++
	v.last = r
	if v.oldest == nil || id < v.oldest.ID {
		v.oldest = r
	}
	return nil
}

// describe is one line for a verified chain.
func (r Report) describe(source string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: chain ok: %d record(s) verified", source, r.Records)
	if r.Records > 0 && r.Complete {
		fmt.Fprintf(&b, " (%d to %d)", r.Head.Seq-r.Records+1, r.Head.Seq)
	}
	fmt.Fprintf(&b, ", head %d %s, from the %s checkpoint at %d", r.Head.Seq, short(r.Head.Hash), r.Checkpoint.Kind, r.Checkpoint.Seq)
	if r.Checkpoint.Sig != "" {
		fmt.Fprintf(&b, " (signed by %s)", r.Checkpoint.Key)
	}
	if r.SignedHead != nil {
		fmt.Fprintf(&b, "; it holds the head the daemon signed (%d)", r.SignedHead.Seq)
	}
	if r.Legacy > 0 {
		fmt.Fprintf(&b, "; %d older record(s) predate the chain and are not covered", r.Legacy)
	}
	if !r.Complete {
		b.WriteString("; a selection (filtered or limited): each record and the links between neighbours verified, not that none is missing")
	}
	return b.String()
}

// Describe is Report in one line, for the CLI.
func (r Report) Describe(source string) string { return r.describe(source) }

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
