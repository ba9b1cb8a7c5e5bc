package pairing

import (
	"bytes"
	"encoding/hex"
	"errors"
	"regexp"
	"testing"
)

// A hand-written expectation, independent of enc, for the length-prefix
// framing: catches a change of endianness or width.
func TestPairTranscriptLiteral(t *testing.T) {
	got := PairTranscript("r", "o", []byte{1}, []byte{2, 3}, nil, []byte{})
	want := "0000000d" + hex.EncodeToString([]byte("torii-pair-v1")) +
		"00000001" + "72" + "00000001" + "6f" + "00000001" + "01" + "00000002" + "0203" +
		"00000000" + "00000000"
	if hex.EncodeToString(got) != want {
		t.Fatalf("got  %x\nwant %s", got, want)
	}
}

func TestAuthTranscriptLiteral(t *testing.T) {
	got := AuthTranscript(RoleDevice, "c", "d", "é", nil, nil, []byte{9}, []byte{8})
	want := "0000000d" + hex.EncodeToString([]byte("torii-auth-v1")) +
		"00000006" + hex.EncodeToString([]byte("device")) +
		"00000001" + "63" + "00000001" + "64" +
		"00000002" + "c3a9" + // UTF-8 length in bytes, not characters
		"00000000" + "00000000" + "00000001" + "09" + "00000001" + "08"
	if hex.EncodeToString(got) != want {
		t.Fatalf("got  %x\nwant %s", got, want)
	}
}

// Moving bytes between adjacent fields must change the transcript.
func TestTranscriptFieldBoundaries(t *testing.T) {
	a := PairTranscript("ab", "c", nil, nil, nil, nil)
	b := PairTranscript("a", "bc", nil, nil, nil, nil)
	if bytes.Equal(a, b) {
		t.Fatal("field boundary not encoded")
	}
	if bytes.Equal(AuthTranscript(RoleDaemon, "c", "d", "o", nil, nil, nil, nil),
		AuthTranscript(RoleDevice, "c", "d", "o", nil, nil, nil, nil)) {
		t.Fatal("roles not separated")
	}
}

func TestCodeFormat(t *testing.T) {
	re := regexp.MustCompile(`^[0-9]{6}$`)
	zero := false
	for i := 0; i < 2000; i++ {
		c := Code([]byte{byte(i), byte(i >> 8)})
		if !re.MatchString(c) {
			t.Fatalf("code %q", c)
		}
		zero = zero || c[0] == '0'
	}
	if !zero {
		t.Fatal("no leading-zero code in 2000 tries: padding suspect")
	}
}

func TestOTPProofCheck(t *testing.T) {
	tr := PairTranscript("r", vectorOrigin, []byte{1}, []byte{2}, []byte{3}, []byte{4})
	p := OTPProof("secret", tr)
	if len(p) != 32 || !CheckOTPProof("secret", tr, p) {
		t.Fatal("proof does not check")
	}
	other := PairTranscript("r2", vectorOrigin, []byte{1}, []byte{2}, []byte{3}, []byte{4})
	for name, ok := range map[string]bool{
		"wrong secret":     CheckOTPProof("secreT", tr, p),
		"other transcript": CheckOTPProof("secret", other, p),
		"truncated":        CheckOTPProof("secret", tr, p[:31]),
		"empty":            CheckOTPProof("secret", tr, nil),
	} {
		if ok {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestB64(t *testing.T) {
	b := []byte{0xfb, 0xff, 0xfe, 0x00}
	s := EncodeB64(b)
	if s != "-__-AA" {
		t.Fatalf("EncodeB64 = %q", s)
	}
	got, err := DecodeB64(s)
	if err != nil || !bytes.Equal(got, b) {
		t.Fatalf("round trip: %x %v", got, err)
	}
	for _, bad := range []string{"-__-AA==", "+//+AA", "-__-A", "-__-AB", "-__\n-AA", "-__-AA\r", "a b", "é"} {
		if _, err := DecodeB64(bad); !errors.Is(err, ErrBadBase64) {
			t.Errorf("%q: err %v, want ErrBadBase64", bad, err)
		}
	}
	if got, err := DecodeB64(""); err != nil || len(got) != 0 {
		t.Errorf("empty: %x %v", got, err)
	}
}

func TestNewNonce(t *testing.T) {
	a, b := NewNonce(), NewNonce()
	if len(a) != 32 || len(b) != 32 || bytes.Equal(a, b) {
		t.Fatalf("nonces %x %x", a, b)
	}
}
