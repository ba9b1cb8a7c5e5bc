package audit

// The hash chain (docs/audit.md, "The chain"). Each record's hash covers the
// previous record's hash (its prev field) and all its own fields, in a
// canonical form simple enough to recompute from an export in a few lines:
//
//	hash = hex(SHA-256("torii-audit-1\n" + for each field k, v of the record in
//	       ascending byte order of k, except "hash", v not "" and not 0:
//	       k + "=" + len(v) + ":" + v + "\n"))
//
// v is the field's value as the JSON export writes it: a string's UTF-8
// bytes, an integer in decimal, the time as RFC 3339 UTC with the
// milliseconds' trailing zeros dropped. Empty fields are left out so that a
// field added to Record later (a new kind of record) leaves the hashes of
// the records written before it unchanged.
//
// SECURITY I-70: the chain makes an edit, a deleted row, a reordered pair or
// a cut-off export visible to `torii audit verify`; retention deletes only
// from the start and records a checkpoint the rest of the chain starts from,
// signed with the daemon's key (SECURITY I-74, anchor.go).

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// HashPrefix starts every canonical form; the digit is the form's version.
const HashPrefix = "torii-audit-1\n"

// Genesis is the prev of the first chained record: a chain starts at a
// genesis checkpoint whose hash is all zeros.
var Genesis = strings.Repeat("0", 64)

// Checkpoint kinds.
const (
	CheckpointGenesis   = "genesis"   // where the chain starts; records at or before it predate the chain
	CheckpointRetention = "retention" // the last record retention deleted
	// CheckpointAnchor is a signed head team mode keeps: the record at its
	// seq had its hash when the gateway signed it. Signed like retention's.
	CheckpointAnchor = "anchor"
)

// Link is a position in the chain: a record's id and hash.
type Link struct {
	Seq  int64  `json:"seq"`
	Hash string `json:"hash"`
}

// Checkpoint is where the kept chain starts: records up to Seq are gone (or
// predate the chain), and record Seq+1's prev is Hash.
type Checkpoint struct {
	Link
	Kind string    `json:"kind"`
	At   time.Time `json:"at"`
	// Sig is the daemon's signature over a retention checkpoint (hex, 64
	// bytes) and Key the daemon ID that made it (SECURITY I-74, anchor.go).
	Sig string `json:"sig,omitempty"`
	Key string `json:"key,omitempty"`
}

// canonField reads one field of a Record in canonical form.
type canonField struct {
	name string
	get  func(r *Record) (string, bool) // value, present (not empty/zero)
}

// canonFields are Record's JSON fields but hash, by name: every field a
// Record gains is covered without editing this file (a kind this file
// cannot put in canonical form fails at start, and in the tests).
var canonFields = func() []canonField {
	rt := reflect.TypeFor[Record]()
	var out []canonField
	for i := 0; i < rt.NumField(); i++ {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || name == "hash" {
			continue
		}
		idx := i
		var get func(r *Record) (string, bool)
		switch {
		case f.Type == reflect.TypeFor[time.Time]():
			get = func(r *Record) (string, bool) {
				t := reflect.ValueOf(r).Elem().Field(idx).Interface().(time.Time)
				if t.IsZero() {
					return "", false
				}
				return FormatTime(t), true
			}
		case f.Type.Kind() == reflect.String:
			get = func(r *Record) (string, bool) {
				s := reflect.ValueOf(r).Elem().Field(idx).String()
				return s, s != ""
			}
		case f.Type.Kind() == reflect.Int64 || f.Type.Kind() == reflect.Int:
			get = func(r *Record) (string, bool) {
				n := reflect.ValueOf(r).Elem().Field(idx).Int()
				return strconv.FormatInt(n, 10), n != 0
			}
		default:
			panic(fmt.Sprintf("audit: Record.%s has a type the chain's canonical form does not cover", f.Name))
		}
		out = append(out, canonField{name: name, get: get})
	}
	// The common fields, read without reflection: verify reads a million.
	fast := map[string]func(r *Record) (string, bool){
		"id":         func(r *Record) (string, bool) { return strconv.FormatInt(r.ID, 10), r.ID != 0 },
		"time":       func(r *Record) (string, bool) { return FormatTime(r.Time), !r.Time.IsZero() },
		"tool":       func(r *Record) (string, bool) { return r.Tool, r.Tool != "" },
		"session":    func(r *Record) (string, bool) { return r.Session, r.Session != "" },
		"origin":     func(r *Record) (string, bool) { return r.Origin, r.Origin != "" },
		"outcome":    func(r *Record) (string, bool) { return r.Outcome, r.Outcome != "" },
		"code":       func(r *Record) (string, bool) { return r.Code, r.Code != "" },
		"durationMs": func(r *Record) (string, bool) { return strconv.FormatInt(r.DurationMs, 10), r.DurationMs != 0 },
		"approval":   func(r *Record) (string, bool) { return r.Approval, r.Approval != "" },
		"prev":       func(r *Record) (string, bool) { return r.Prev, r.Prev != "" },
	}
	for i := range out {
		if g, ok := fast[out[i].name]; ok {
			out[i].get = g
		}
	}
	slices.SortFunc(out, func(a, b canonField) int { return strings.Compare(a.name, b.name) })
	return out
}()

// FormatTime is a record's time as the export and the canonical form write
// it: UTC, milliseconds, RFC 3339 (trailing zeros of the fraction dropped).
func FormatTime(t time.Time) string {
	return time.UnixMilli(t.UnixMilli()).UTC().Format(time.RFC3339Nano)
}

// appendPair appends one canonical field.
func appendPair(b []byte, k, v string) []byte {
	b = append(b, k...)
	b = append(b, '=')
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, '\n')
}

// Canonical is r's canonical form (without the hash field).
func Canonical(r *Record) []byte {
	return canonical(make([]byte, 0, 256), r)
}

func canonical(b []byte, r *Record) []byte {
	b = append(b, HashPrefix...)
	for _, f := range canonFields {
		if v, ok := f.get(r); ok {
			b = appendPair(b, f.name, v)
		}
	}
	return b
}

// HashRecord is the hash r should carry: SHA-256 of its canonical form,
// lowercase hex. r.Prev must be set.
func HashRecord(r *Record) string {
	var buf [512]byte
	sum := sha256.Sum256(canonical(buf[:0], r))
	return hex.EncodeToString(sum[:])
}

// HashExtended is HashRecord for a record that carries fields beyond
// Record's (team mode's user, device and replica): extra's non-empty values
// join the canonical form in key order, exactly as an export's unknown
// fields do, so `torii audit verify --file` checks an export of such
// records as it is. With no extra field it is HashRecord. An extra key
// that is one of Record's is a programming error.
func HashExtended(r *Record, extra map[string]string) string {
	fields := make(map[string]string, len(canonFields)+len(extra))
	for _, f := range canonFields {
		if v, ok := f.get(r); ok {
			fields[f.name] = v
		}
	}
	for k, v := range extra {
		if k == "hash" || slices.ContainsFunc(canonFields, func(f canonField) bool { return f.name == k }) {
			panic("audit: HashExtended: extra field " + k + " is one of Record's")
		}
		if v != "" {
			fields[k] = v
		}
	}
	return hashFields(fields)
}

// hashMatches reports whether r's hash is the one its fields give,
// without allocating (verify checks a million).
func hashMatches(buf []byte, r *Record) ([]byte, bool) {
	buf = canonical(buf[:0], r)
	sum := sha256.Sum256(buf)
	var hx [64]byte
	hex.Encode(hx[:], sum[:])
	return buf, string(hx[:]) == r.Hash
}

// hashFields is HashRecord for a record read from an export: its present
// fields (not "" and not 0) as strings, those a newer torii added included.
func hashFields(fields map[string]string) string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		if k != "hash" {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	b := []byte(HashPrefix)
	for _, k := range keys {
		b = appendPair(b, k, fields[k])
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// seal prepares r for the chain after prev: its fields bounded and valid
// UTF-8 (so the export's JSON holds them byte for byte), its time at the
// stored millisecond, its id, prev and hash set.
func seal(r *Record, prev Link) {
	r.ID = prev.Seq + 1
	r.Time = time.UnixMilli(r.Time.UnixMilli()).UTC()
	for _, c := range textColumns {
		if !c.sealed {
			p := c.field(r)
			*p = clip(*p)
		}
	}
	r.Prev = prev.Hash
	r.Hash = HashRecord(r)
}
