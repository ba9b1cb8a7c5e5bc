package daemon

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/config"
	"github.com/torii-browser/torii/internal/control"
	"github.com/torii-browser/torii/internal/link/linktest"
	"github.com/torii-browser/torii/internal/tokens"
)

func TestSecondDaemonFailsAndFirstKeepsServing(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	err := Run(ctx, td.opts)
	var are *AlreadyRunningError
	if !errors.As(err, &are) {
		t.Fatalf("second Run: %v", err)
	}
	if are.PID != os.Getpid() || are.StateDir != td.opts.Paths.StateDir {
		t.Fatalf("error fields: %+v", are)
	}
	if !strings.Contains(err.Error(), "another torii daemon (pid ") || !strings.Contains(err.Error(), "TORII_STATE_DIR") {
		t.Fatalf("message: %q", err)
	}
	// The first one still answers on both its endpoints.
	resp, err := http.Get("http://" + td.addr + "/healthz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("first daemon /healthz: %v", err)
	}
	resp.Body.Close()
	var st StatusResult
	td.call("status", nil, &st)
	if st.PID != os.Getpid() {
		t.Fatalf("status pid %d", st.PID)
	}
}

func TestShutdownClosesLinksWith1001AndReleasesLock(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	ctx := tctx(t)
	_, c := td.otpPairedDevice(ctx, "bye")
	td.stop()
	if code, err := c.WaitClosed(ctx); err != nil || code != websocket.StatusGoingAway {
		t.Fatalf("close %v (%v), want 1001", code, err)
	}
	if _, err := os.Stat(td.opts.Paths.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("control socket left behind: %v", err)
	}
	if _, err := control.Dial(ctx, td.opts.Paths.Socket()); !errors.Is(err, control.ErrDaemonNotRunning) {
		t.Fatalf("dial after stop: %v", err)
	}
	// The lock is free again: a new daemon starts on the same state dir.
	td2 := runDaemon(t, td.opts)
	td2.stop()
}

func TestShutdownOverControl(t *testing.T) {
	t.Parallel()
	td := startDaemon(t, nil)
	td.call("shutdown", nil, nil)
	select {
	case err := <-td.done:
		if err != nil {
			t.Fatal(err)
		}
		td.cancel = nil
	case <-time.After(10 * time.Second):
		t.Fatal("daemon kept running after shutdown")
	}
}

func TestNonLoopbackNeedsTLSAndToken(t *testing.T) {
	t.Parallel()
	paths := testPaths(t)
	cfg := config.Default()
	cfg.Listen = "0.0.0.0:0"
	if err := Run(tctx(t), Options{Paths: paths, Config: cfg}); !errors.Is(err, config.ErrNonLoopbackNeedsTLS) {
		t.Fatalf("no TLS: %v", err)
	}
	cfg.TLSCert, cfg.TLSKey = writeCert(t, t.TempDir())
	if err := Run(tctx(t), Options{Paths: paths, Config: cfg}); !errors.Is(err, ErrNonLoopbackNeedsToken) {
		t.Fatalf("no token: %v", err)
	}
	if err := paths.Ensure(); err != nil {
		t.Fatal(err)
	}
	ts, err := tokens.Open(paths.Tokens())
	if err != nil {
		t.Fatal(err)
	}
	_, tok, err := ts.Create("remote gateway")
	if err != nil {
		t.Fatal(err)
	}
	td := runDaemon(t, Options{Paths: paths, Config: cfg, Version: "test"})
	_, port, _ := net.SplitHostPort(td.addr)
	url := "wss://127.0.0.1:" + port + "/acp"
	insecure := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	ctx := tctx(t)
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: insecure, HTTPHeader: bearer(tok)})
	if err != nil {
		t.Fatalf("wss token client: %v", err)
	}
	ws.Close(websocket.StatusNormalClosure, "")
	if _, resp, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPClient: insecure, HTTPHeader: bearer("torii_wrong")}); err == nil || resp == nil || resp.StatusCode != 401 {
		t.Fatalf("wrong token over wss: %v", err)
	}
	// Plain HTTP on the TLS port does not work.
	if _, err := linktest.Dial(ctx, "ws://127.0.0.1:"+port+"/acp", &linktest.Options{Header: bearer(tok)}); err == nil {
		t.Fatal("plain ws accepted on a TLS listener")
	}
}

func writeCert(t *testing.T, dir string) (certPath, keyPath string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "torii test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kd, _ := x509.MarshalPKCS8PrivateKey(k)
	certPath, keyPath = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kd}), 0o600)
	return certPath, keyPath
}
