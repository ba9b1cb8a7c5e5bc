package cli

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Result shapes of the control-socket methods (docs/protocol.md, "Control
// socket"). Only the fields the CLI shows are typed; --json output passes the
// daemon's own JSON through.

type statusResult struct {
	Version            string       `json:"version"`
	PID                int          `json:"pid"`
	Listen             string       `json:"listen"`
	DaemonID           string       `json:"daemonId"`
	StartedAt          flexTime     `json:"startedAt"`
	Now                flexTime     `json:"now"`
	Connections        []connection `json:"connections"`
	ExtensionConnected bool         `json:"extensionConnected"`
}

type connection struct {
	ID         string   `json:"id"`
	Kind       string   `json:"kind"`
	DeviceID   string   `json:"deviceId"`
	DeviceName string   `json:"deviceName"`
	Origin     string   `json:"origin"`
	Since      flexTime `json:"since"`
}

type pendingRequest struct {
	RequestID  string   `json:"requestId"`
	DeviceName string   `json:"deviceName"`
	Origin     string   `json:"origin"`
	Code       string   `json:"code"`
	CreatedAt  flexTime `json:"createdAt"`
}

type pendingResult struct {
	Requests []pendingRequest `json:"requests"`
}

type device struct {
	DeviceID  string   `json:"deviceId"`
	Name      string   `json:"name"`
	Origin    string   `json:"origin"`
	CreatedAt flexTime `json:"createdAt"`
	LastSeen  flexTime `json:"lastSeen"`
	Connected bool     `json:"connected"`
}

type devicesResult struct {
	Devices []device `json:"devices"`
}

type tokenInfo struct {
	ID        string   `json:"id"`
	Label     string   `json:"label"`
	CreatedAt flexTime `json:"createdAt"`
}

type otpResult struct {
	OTP       string   `json:"otp"`
	ExpiresAt flexTime `json:"expiresAt"`
	URL       string   `json:"url"`
}

// flexTime accepts an RFC 3339 string or Unix milliseconds, so the CLI does
// not break on either encoding of a timestamp.
type flexTime struct{ time.Time }

func (t *flexTime) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" || s == `""` || s == "0" {
		t.Time = time.Time{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		v, err := time.Parse(time.RFC3339Nano, str)
		if err != nil {
			return fmt.Errorf("bad timestamp %q: %w", str, err)
		}
		t.Time = v
		return nil
	}
	ms, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return fmt.Errorf("bad timestamp %s", s)
	}
	t.Time = time.UnixMilli(int64(ms))
	return nil
}

func (t flexTime) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return json.Marshal(t.Time)
}

// short formats a timestamp for tables.
func (t flexTime) short() string {
	if t.IsZero() {
		return "-"
	}
	return t.Local().Format("2006-01-02 15:04:05")
}

// formatCode shows a 6-digit pairing code as "123 456", easier to compare.
func formatCode(c string) string {
	if len(c) == 6 {
		return c[:3] + " " + c[3:]
	}
	return c
}

func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
