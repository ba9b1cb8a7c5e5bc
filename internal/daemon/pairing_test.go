package daemon

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/wire"
)

// waitPending polls pair.pending until n requests are listed.
func (td *testDaemon) waitPending(n int) []PendingPair {
	td.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		var res PairPendingResult
		td.call("pair.pending", nil, &res)
		if len(res.Requests) >= n {
			return res.Requests
		}
		time.Sleep(10 * time.Millisecond) // the control socket offers no event for a new request
	}
	td.t.Fatalf("never saw %d pending pairing requests", n)
	return nil
}

func TestPairByCodeThenAuthThenACP(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	c, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	h, err := c.SayHello(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if h.Paired || h.DaemonSig != "" || h.ConnectionID == "" || h.Protocol != 1 {
		t.Fatalf("hello for an unknown device: %+v", h)
	}
	dev, _ := linktest.NewDevice("Chrome on test")
	codeCh := make(chan string, 1)
	pairErr := make(chan error, 1)
	go func() {
		pairErr <- c.Pair(ctx, dev, linktest.PairOptions{OnCode: func(code string) { codeCh <- code }})
	}()
	clientCode := <-codeCh
	reqs := td.waitPending(1)
	// The person compares the code the popup shows with the terminal's.
	if reqs[0].Code != clientCode || len(clientCode) != 6 {
		t.Fatalf("codes differ: client %q daemon %q", clientCode, reqs[0].Code)
	}
	if reqs[0].DeviceName != "Chrome on test" || reqs[0].Origin != linktest.ExtensionOrigin {
		t.Fatalf("pending: %+v", reqs[0])
	}
	// The link stays alive while the person decides.
	var ping struct{ T int64 }
	if err := c.Call(ctx, "torii/ping", struct{}{}, &ping); err != nil || ping.T == 0 {
		t.Fatalf("ping during pairing: %v", err)
	}
	var dec PairDecideResult
	td.call("pair.decide", map[string]any{"requestId": reqs[0].RequestID, "approve": true}, &dec)
	if err := <-pairErr; err != nil {
		t.Fatal(err)
	}
	if dev.ID == "" || dev.ID != dec.DeviceID {
		t.Fatalf("device id: client %q control %q", dev.ID, dec.DeviceID)
	}
	// Before auth, ACP is refused.
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1}, nil); rpcCode(err) != wire.CodeNotAuthenticated {
		t.Fatalf("initialize before auth: %v", err)
	}
	ar, err := c.Auth(ctx, dev)
	if err != nil {
		t.Fatal(err)
	}
	if ar.DeviceID != dev.ID || ar.DeviceName != "Chrome on test" {
		t.Fatalf("auth result %+v", ar)
	}
	acpHandshake(t, ctx, c)

	var devs DevicesListResult
	td.call("devices.list", nil, &devs)
	if len(devs.Devices) != 1 || !devs.Devices[0].Connected || devs.Devices[0].DeviceID != dev.ID {
		t.Fatalf("devices.list: %+v", devs)
	}
	var st StatusResult
	td.call("status", nil, &st)
	if !st.ExtensionConnected || st.Listen != td.addr || len(st.Connections) != 1 || st.Connections[0].Kind != "device" {
		t.Fatalf("status: %+v", st)
	}

	// A later connection: mutual signed challenge, daemon signature checked first.
	c.Close()
	c2, err := linktest.Connect(ctx, td.url, dev, nil)
	if err != nil {
		t.Fatalf("reconnect: %v", err)
	}
	defer c2.Close()
	if c2.Hello.DaemonSig == "" || !c2.Hello.Paired {
		t.Fatal("hello for a paired device carried no daemon signature")
	}
	acpHandshake(t, ctx, c2)
}

func acpHandshake(t *testing.T, ctx context.Context, c *linktest.Client) {
	t.Helper()
	var ini struct {
		ProtocolVersion   int `json:"protocolVersion"`
		AgentCapabilities struct {
			LoadSession     bool            `json:"loadSession"`
			MCPCapabilities map[string]bool `json:"mcpCapabilities"`
		} `json:"agentCapabilities"`
		AgentInfo struct{ Name string } `json:"agentInfo"`
	}
	if err := c.Call(ctx, "initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "torii-extension", "version": "0"}}, &ini); err != nil {
		t.Fatal(err)
	}
	if ini.ProtocolVersion != 1 || !ini.AgentCapabilities.MCPCapabilities["acp"] || ini.AgentInfo.Name != "torii" {
		t.Fatalf("initialize: %+v", ini)
	}
	var sn struct{ SessionID string }
	if err := c.Call(ctx, "session/new", map[string]any{"cwd": "/", "mcpServers": []any{
		map[string]any{"type": "acp", "name": "torii", "id": "0b6f5c6e-2d0b-4f36-9a43-2f3f2d6f7f11"}}}, &sn); err != nil {
		t.Fatal(err)
	}
	if sn.SessionID == "" {
		t.Fatal("session/new without sessionId")
	}
}

func TestPairDeniedAndTimeout(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, func(o *Options) { o.pairTimeout = 300 * time.Millisecond })
	ctx := tctx(t)
	c, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SayHello(ctx, "")
	dev, _ := linktest.NewDevice("denied")
	errc := make(chan error, 1)
	go func() { errc <- c.Pair(ctx, dev, linktest.PairOptions{}) }()
	reqs := td.waitPending(1)
	td.call("pair.decide", map[string]any{"requestId": reqs[0].RequestID, "approve": false}, nil)
	if err := <-errc; rpcCode(err) != wire.CodePairingDenied {
		t.Fatalf("denied: %v", err)
	}
	// Deciding again: the request is gone.
	err = td.ctl.Call(ctx, "pair.decide", map[string]any{"requestId": reqs[0].RequestID, "approve": true}, nil)
	if rpcCode(err) != wire.CodeInvalidParams {
		t.Fatalf("second decide: %v", err)
	}
	// Nobody decides: pairing_timeout.
	if err := c.Pair(ctx, dev, linktest.PairOptions{}); rpcCode(err) != wire.CodePairingTimeout {
		t.Fatalf("timeout: %v", err)
	}
	var res PairPendingResult
	td.call("pair.pending", nil, &res)
	if len(res.Requests) != 0 {
		t.Fatalf("timed-out request still pending: %+v", res)
	}
}

func TestOTPAutoPairIsSingleUse(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	var otp LaunchOTPResult
	td.call("launch.otp", nil, &otp)
	u, err := url.Parse(otp.URL)
	if err != nil || u.Scheme != "chrome-extension" || !strings.HasSuffix(u.Path, "/connect.html") {
		t.Fatalf("launch url %q", otp.URL)
	}
	frag, _ := url.ParseQuery(u.Fragment)
	if frag.Get("otp") != otp.OTP || frag.Get("daemon") != td.url {
		t.Fatalf("fragment %q", u.Fragment)
	}
	if time.Until(otp.ExpiresAt) > 61*time.Second || time.Until(otp.ExpiresAt) < 50*time.Second {
		t.Fatalf("expiry %v", otp.ExpiresAt)
	}
	d1, _ := linktest.NewDevice("managed")
	c, err := linktest.PairAndConnect(ctx, td.url, d1, linktest.PairOptions{OTP: otp.OTP}, nil)
	if err != nil {
		t.Fatalf("auto-pair: %v", err)
	}
	defer c.Close()
	acpHandshake(t, ctx, c)
	// The same secret again, or a wrong one, approves nothing: the request
	// falls back to approval by code, and the person can deny it.
	var fresh LaunchOTPResult
	td.call("launch.otp", nil, &fresh)
	for i, secret := range []string{otp.OTP, "wrong-" + fresh.OTP} {
		d2, _ := linktest.NewDevice("stray")
		errc := make(chan error, 1)
		go func() {
			_, err := linktest.PairAndConnect(ctx, td.url, d2, linktest.PairOptions{OTP: secret}, nil)
			errc <- err
		}()
		reqs := td.waitPending(1)
		td.call("pair.decide", map[string]any{"requestId": reqs[0].RequestID, "approve": false}, nil)
		if err := <-errc; rpcCode(err) != wire.CodePairingDenied {
			t.Fatalf("case %d: %v", i, err)
		}
	}
	// The wrong proof did not burn the fresh secret.
	d3, _ := linktest.NewDevice("managed 2")
	c3, err := linktest.PairAndConnect(ctx, td.url, d3, linktest.PairOptions{OTP: fresh.OTP}, nil)
	if err != nil {
		t.Fatalf("otp after a wrong proof: %v", err)
	}
	c3.Close()
	var res PairPendingResult
	td.call("pair.pending", nil, &res)
	if len(res.Requests) != 0 {
		t.Fatalf("otp pairing left a pending request: %+v", res)
	}
}

func TestReplayedAndWrongSignaturesClose1008(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	dev, c1 := td.otpPairedDevice(ctx, "victim")
	// c1 authenticated with params signed for its own connection; record
	// an equivalent valid auth from a fresh connection 1 and replay it on 2.
	conn1, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn1.Close()
	conn1.SayHello(ctx, dev.ID)
	recorded, err := conn1.AuthParams(dev)
	if err != nil {
		t.Fatal(err)
	}
	if err := conn1.Call(ctx, "torii/auth", recorded, nil); err != nil {
		t.Fatalf("valid auth on conn1: %v", err)
	}
	_ = c1

	cases := map[string]func(c *linktest.Client) any{
		"replayed": func(*linktest.Client) any { return recorded },
		"garbage":  func(*linktest.Client) any { return map[string]string{"deviceId": dev.ID, "sig": "AAAA"} },
		"other key": func(c *linktest.Client) any {
			other, _ := linktest.NewDevice("other")
			other.ID = dev.ID
			p, _ := c.AuthParams(other)
			return p
		},
		"daemon role": func(c *linktest.Client) any {
			// A daemon signature reflected back must not pass as the device's.
			return map[string]string{"deviceId": dev.ID, "sig": c.Hello.DaemonSig}
		},
		"unknown device": func(c *linktest.Client) any {
			p, _ := c.AuthParams(&linktest.Device{Key: dev.Key, ID: "nosuchdevice"})
			return p
		},
	}
	for name, params := range cases {
		t.Run(name, func(t *testing.T) {
			c2, err := linktest.Dial(ctx, td.url, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer c2.Close()
			if _, err := c2.SayHello(ctx, dev.ID); err != nil {
				t.Fatal(err)
			}
			_ = c2.Call(ctx, "torii/auth", params(c2), nil)
			code, err := c2.WaitClosed(ctx)
			if err != nil || code != websocket.StatusPolicyViolation {
				t.Fatalf("close code %v (%v), want 1008", code, err)
			}
		})
	}
}

func TestRevokeClosesLiveConnectionAndRefuses(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	dev, c := td.otpPairedDevice(ctx, "to revoke")
	var res DevicesRevokeResult
	td.call("devices.revoke", map[string]string{"deviceId": dev.ID}, &res)
	if res.Closed != 1 {
		t.Fatalf("closed %d", res.Closed)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second) // "at once"
	defer cancel()
	if code, err := c.WaitClosed(wctx); err != nil || code != websocket.StatusPolicyViolation {
		t.Fatalf("live connection: close %v (%v), want 1008", code, err)
	}
	// The revoked device is refused: no daemon signature, auth closes 1008.
	c2, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	h, _ := c2.SayHello(ctx, dev.ID)
	if h.Paired || h.DaemonSig != "" {
		t.Fatalf("hello for a revoked device: %+v", h)
	}
	p, _ := c2.AuthParams(dev)
	_ = c2.Call(ctx, "torii/auth", p, nil)
	if code, _ := c2.WaitClosed(ctx); code != websocket.StatusPolicyViolation {
		t.Fatalf("revoked auth: close %v", code)
	}
	// Revoking an unknown device is a typed error.
	if err := td.ctl.Call(ctx, "devices.revoke", map[string]string{"deviceId": dev.ID}, nil); rpcCode(err) != wire.CodeInvalidParams {
		t.Fatalf("revoke unknown: %v", err)
	}
}

func TestPairFloodIsRateLimited(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	pairOn := func() (*linktest.Client, chan error) {
		c, err := linktest.Dial(ctx, td.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		c.SayHello(ctx, "")
		d, _ := linktest.NewDevice("flood")
		errc := make(chan error, 1)
		go func() { errc <- c.Pair(ctx, d, linktest.PairOptions{}) }()
		return c, errc
	}
	// Four pending requests are the most a person is asked about at once.
	var errs []chan error
	for i := 0; i < 4; i++ {
		_, e := pairOn()
		errs = append(errs, e)
		td.waitPending(i + 1)
	}
	c5, e5 := pairOn()
	if err := <-e5; rpcCode(err) != wire.CodeRateLimited {
		t.Fatalf("5th pending: %v", err)
	}
	if code, _ := c5.WaitClosed(ctx); code != websocket.StatusPolicyViolation {
		t.Fatalf("rate-limited connection: close %v", code)
	}
	// Deny them all; the per-minute budget (5) is now spent as well.
	for _, r := range td.waitPending(4) {
		td.call("pair.decide", map[string]any{"requestId": r.RequestID, "approve": false}, nil)
	}
	for _, e := range errs {
		if err := <-e; rpcCode(err) != wire.CodePairingDenied {
			t.Fatalf("denied: %v", err)
		}
	}
	_, e6 := pairOn()
	if err := <-e6; rpcCode(err) != wire.CodeRateLimited {
		t.Fatalf("6th in a minute: %v", err)
	}
}

func TestPairInputValidation(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	c, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Order matters: pair before hello is refused.
	if err := c.Call(ctx, "torii/pair", map[string]string{}, nil); rpcCode(err) != wire.CodeInvalidParams && rpcCode(err) != wire.CodeInvalidRequest {
		t.Fatalf("pair before hello: %v", err)
	}
	if err := c.Call(ctx, "torii/auth", map[string]string{"deviceId": "x", "sig": "x"}, nil); rpcCode(err) != wire.CodeInvalidRequest {
		t.Fatalf("auth before hello: %v", err)
	}
	for name, p := range map[string]any{
		"no protocol":  map[string]any{"clientNonce": strings.Repeat("A", 43)},
		"short nonce":  map[string]any{"protocol": 1, "clientNonce": "AAAA"},
		"bad protocol": map[string]any{"protocol": 2, "clientNonce": strings.Repeat("A", 43)},
	} {
		if err := c.Call(ctx, "torii/hello", p, nil); rpcCode(err) != wire.CodeInvalidParams {
			t.Fatalf("hello %s: %v", name, err)
		}
	}
	if _, err := c.SayHello(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SayHello(ctx, ""); rpcCode(err) != wire.CodeInvalidRequest {
		t.Fatalf("second hello: %v", err)
	}
	dev, _ := linktest.NewDevice("ok")
	good := map[string]any{"requestId": "0b6f5c6e-2d0b-4f36-9a43-2f3f2d6f7f11", "deviceKey": b64(dev.PublicKey()), "deviceName": "n"}
	for name, mut := range map[string]func(m map[string]any){
		"bad request id":  func(m map[string]any) { m["requestId"] = "nope" },
		"bad key":         func(m map[string]any) { m["deviceKey"] = "AAAA" },
		"key off curve":   func(m map[string]any) { k := dev.PublicKey(); k[10] ^= 1; m["deviceKey"] = b64(k) },
		"empty name":      func(m map[string]any) { m["deviceName"] = "" },
		"control in name": func(m map[string]any) { m["deviceName"] = "a\x1b[2Jb" },
		"bad otp proof":   func(m map[string]any) { m["otpProof"] = "AAAA" },
	} {
		p := map[string]any{}
		for k, v := range good {
			p[k] = v
		}
		mut(p)
		if err := c.Call(ctx, "torii/pair", p, nil); rpcCode(err) != wire.CodeInvalidParams {
			t.Fatalf("pair %s: %v", name, err)
		}
	}
	// A non-browser client (no Origin) cannot pair: it must use a token.
	nc, err := linktest.Dial(ctx, td.url, &linktest.Options{NoOrigin: true})
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SayHello(ctx, "")
	raw, _ := json.Marshal(good)
	if err := nc.Call(ctx, "torii/pair", json.RawMessage(raw), nil); rpcCode(err) != wire.CodeInvalidParams {
		t.Fatalf("pair without origin: %v", err)
	}
}
