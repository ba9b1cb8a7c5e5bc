package cli

import (
	"context"
	"fmt"
)

// pairRemote approves, as the token's user, the pairing request on a team
// gateway whose browser shows code. Only the code the person reads off
// their own browser can name it: users are never shown others' requests.
func pairRemote(ctx context.Context, s Stdio, remote *remoteFlags, code string) error {
	if code == "" {
		return &UsageError{Msg: "give the 6 digits the browser shows: torii pair --server URL --code 123456"}
	}
	c, err := remote.client()
	if err != nil {
		return err
	}
	var r struct {
		Pairing struct {
			DeviceName string `json:"deviceName"`
			DeviceID   string `json:"deviceId"`
		} `json:"pairing"`
	}
	if err := c.call(ctx, "POST", "/v1/pair", map[string]string{"code": code}, &r); err != nil {
		return err
	}
	fmt.Fprintf(s.Out, "Paired %q as your device %s on %s.\n", r.Pairing.DeviceName, r.Pairing.DeviceID, c.base.Host)
	return nil
}
