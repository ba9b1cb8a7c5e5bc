package pairing

import (
	"encoding/binary"
	"testing"

	"github.com/torii-browser/torii/internal/fuzzseed"
)

// parseEnc splits an enc() encoding back into its fields.
func parseEnc(b []byte) ([][]byte, bool) {
	var out [][]byte
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, false
		}
		n := binary.BigEndian.Uint32(b)
		b = b[4:]
		if uint64(n) > uint64(len(b)) {
			return nil, false
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out, true
}

// FuzzTranscripts: every transcript decodes back into exactly the fields
// it was built from (no two field lists share an encoding), the code is
// always six digits, and the daemon's and the device's auth transcripts
// never coincide.
func FuzzTranscripts(f *testing.F) {
	v := fuzzseed.Load(f)
	for _, p := range v.Pairing {
		dk, _ := DecodeB64(p.DeviceKeyB64)
		ak, _ := DecodeB64(p.DaemonKeyB64)
		cn, _ := DecodeB64(p.ClientNonceB64)
		sn, _ := DecodeB64(p.ServerNonceB64)
		f.Add(p.RequestID, p.Origin, "", dk, ak, cn, sn)
	}
	for _, a := range v.Auth {
		dk, _ := DecodeB64(a.DeviceKeyB64)
		ak, _ := DecodeB64(a.DaemonKeyB64)
		cn, _ := DecodeB64(a.ClientNonceB64)
		sn, _ := DecodeB64(a.ServerNonceB64)
		f.Add(a.ConnectionID, a.Origin, a.DeviceID, dk, ak, cn, sn)
	}
	f.Add("", "", "", []byte{}, []byte{}, []byte{}, []byte{})
	f.Fuzz(func(t *testing.T, id, origin, device string, deviceKey, daemonKey, cn, sn []byte) {
		pt := PairTranscript(id, origin, deviceKey, daemonKey, cn, sn)
		fields, ok := parseEnc(pt)
		want := [][]byte{[]byte(pairLabel), []byte(id), []byte(origin), deviceKey, daemonKey, cn, sn}
		if !ok || len(fields) != len(want) {
			t.Fatalf("pair transcript does not parse into %d fields", len(want))
		}
		for i := range want {
			if string(fields[i]) != string(want[i]) {
				t.Fatalf("pair field %d differs", i)
			}
		}
		if c := Code(pt); len(c) != 6 || c[0] < '0' || c[0] > '9' {
			t.Fatalf("code %q", c)
		}
		d := AuthTranscript(RoleDaemon, id, device, origin, deviceKey, daemonKey, cn, sn)
		e := AuthTranscript(RoleDevice, id, device, origin, deviceKey, daemonKey, cn, sn)
		if string(d) == string(e) {
			t.Fatal("daemon and device transcripts coincide")
		}
		if af, ok := parseEnc(d); !ok || len(af) != 9 || string(af[1]) != RoleDaemon || string(af[2]) != id {
			t.Fatal("auth transcript does not parse back")
		}
		if string(pt) == string(d) {
			t.Fatal("a pair transcript equals an auth transcript")
		}
	})
}
