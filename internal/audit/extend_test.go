package audit

import (
	"bytes"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/pairing"
)

func TestHashExtendedIsTheExportsForm(t *testing.T) {
	t.Parallel()
	r := &Record{ID: 3, Time: t0, Tool: "click", Session: "agent:a", Outcome: OutcomeOK, DurationMs: 12, Prev: Genesis}
	if got, want := HashExtended(r, nil), HashRecord(r); got != want {
		t.Fatalf("no extra field: %s, want HashRecord's %s", got, want)
	}
	if got, want := HashExtended(r, map[string]string{"userId": ""}), HashRecord(r); got != want {
		t.Fatalf("an empty extra field changed the hash: %s, want %s", got, want)
	}
	extra := map[string]string{"userId": "u1", "deviceId": "d1", "replica": "r1"}
	// An export's reader hashes every present field it finds, known or not.
	fields := map[string]string{"id": "3", "time": FormatTime(t0), "tool": "click", "session": "agent:a",
		"outcome": OutcomeOK, "durationMs": "12", "prev": Genesis, "userId": "u1", "deviceId": "d1", "replica": "r1"}
	if got, want := HashExtended(r, extra), hashFields(fields); got != want {
		t.Fatalf("extended hash %s is not the export's %s", got, want)
	}
	extra["replica"] = "r2"
	if HashExtended(r, extra) == hashFields(fields) {
		t.Fatal("an extra field is not covered by the hash")
	}
	defer func() {
		if recover() == nil {
			t.Fatal("an extra field named as one of Record's was accepted")
		}
	}()
	HashExtended(r, map[string]string{"tool": "x"})
}

func TestSignAndVerifyCheckpoint(t *testing.T) {
	t.Parallel()
	id, err := pairing.NewIdentityFromScalar(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	c := Checkpoint{Link: Link{Seq: 7, Hash: Genesis[:60] + "abcd"}, Kind: CheckpointAnchor, At: time.UnixMilli(t0.UnixMilli()).UTC()}
	if err := SignCheckpoint(nil, &c); err == nil {
		t.Fatal("signed without a key")
	}
	if err := SignCheckpoint(id, &c); err != nil {
		t.Fatal(err)
	}
	if ce := VerifyCheckpoint(c, id.PublicKey()); ce != nil {
		t.Fatalf("own signature refused: %v", ce)
	}
	if ce := VerifyCheckpoint(c, nil); ce == nil || ce.Problem != ProblemNoKey {
		t.Fatalf("no key: %v, want %s", ce, ProblemNoKey)
	}
	moved := c
	moved.Seq = 8
	if ce := VerifyCheckpoint(moved, id.PublicKey()); ce == nil || ce.Problem != ProblemCheckpointForged {
		t.Fatalf("moved checkpoint: %v, want %s", ce, ProblemCheckpointForged)
	}
	other, _ := pairing.NewIdentityFromScalar(bytes.Repeat([]byte{6}, 32))
	if ce := VerifyCheckpoint(c, other.PublicKey()); ce == nil || ce.Problem != ProblemCheckpointForged {
		t.Fatalf("another key: %v, want %s", ce, ProblemCheckpointForged)
	}
}
