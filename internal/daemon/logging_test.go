package daemon

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/torii-browser/torii/internal/link/linktest"
)

// SECURITY I-10: even at debug level (--verbose) no secret reaches the log.
func TestVerboseLogsCarryNoSecrets(t *testing.T) {
	t.Parallel()
	var buf linktest.LogBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	td := startDaemon(t, func(o *Options) { o.Logger = logger })
	ctx := tctx(t)
	var otp LaunchOTPResult
	td.call("launch.otp", nil, &otp)
	dev, _ := linktest.NewDevice("logged")
	c, err := linktest.PairAndConnect(ctx, td.url, dev, linktest.PairOptions{OTP: otp.OTP}, nil)
	if err != nil {
		t.Fatal(err)
	}
	acpHandshake(t, ctx, c)
	var tok TokensCreateResult
	td.call("tokens.create", map[string]string{"label": "log"}, &tok)
	tc, err := linktest.Dial(ctx, td.url, &linktest.Options{NoOrigin: true, Header: bearer(tok.Token)})
	if err != nil {
		t.Fatal(err)
	}
	tc.Close()
	c.Close()
	td.stop()

	logs := buf.String()
	if !strings.Contains(logs, "session/new") {
		t.Fatalf("verbose log has no frames:\n%s", logs)
	}
	for name, secret := range map[string]string{
		"otp": otp.OTP, "token": tok.Token, "server nonce": c.Hello.ServerNonce,
		"device key": b64(dev.PublicKey()), "client nonce": "clientNonce",
	} {
		if secret != "" && strings.Contains(logs, secret) {
			t.Errorf("log contains the %s", name)
		}
	}
	if !strings.Contains(logs, "[redacted]") {
		t.Error("torii/* frames were not marked redacted")
	}
}

// SECURITY I-50: a peer's values are cut before they reach the log, even
// an 8 MiB method name sent before authentication, with --verbose.
func TestVerboseLogIsBoundedAgainstHugeFields(t *testing.T) {
	var buf linktest.LogBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	td := startDaemon(t, func(o *Options) { o.Logger = logger })
	ctx := tctx(t)
	c, err := linktest.Dial(ctx, td.url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	huge := strings.Repeat("m", 8<<20-8192)
	c.SendRaw(ctx, []byte(`{"jsonrpc":"2.0","id":"`+strings.Repeat("i", 4096)+`","method":"`+huge+`"}`))
	if m := nextError(t, ctx, c); m.Error == nil {
		t.Fatal("no error reply")
	}
	mustPing(t, ctx, c)
	td.stop()
	if n := len(buf.String()); n > 64<<10 {
		t.Fatalf("the log grew by %d bytes for one frame", n)
	}
	if !strings.Contains(buf.String(), "bytes)") {
		t.Fatal("the cut value does not say it was cut")
	}
}
