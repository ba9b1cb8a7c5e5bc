package wire

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/torii-browser/torii/internal/fuzzseed"
)

// FuzzDecode: any frame decodes to a message or a typed error, never a
// panic; a decoded request survives a round trip; Peek agrees with Decode.
func FuzzDecode(f *testing.F) {
	for _, fr := range fuzzseed.Frames(f) {
		f.Add(fr)
	}
	fuzzseed.Corpus(f, "FuzzDecode")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, e := Decode(data)
		id, method, ok := Peek(data)
		if e != nil {
			if e.Code != CodeParseError && e.Code != CodeInvalidRequest {
				t.Fatalf("decode error code %d", e.Code)
			}
			if e.Code == CodeParseError && m != nil {
				t.Fatal("a parse error carries a message")
			}
			return
		}
		if m == nil {
			t.Fatal("no message and no error")
		}
		if !ok || method != m.Method || !bytes.Equal(id, m.ID) {
			t.Fatalf("Peek (%s %q %v) disagrees with Decode (%s %q)", id, method, ok, m.ID, m.Method)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		m2, e2 := Decode(b)
		if e2 != nil || m2.Method != m.Method || m2.HasID() != m.HasID() || (m.Error == nil) != (m2.Error == nil) {
			t.Fatalf("round trip: %s → %+v %v", b, m2, e2)
		}
	})
}
