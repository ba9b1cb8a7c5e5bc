package link_test

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/link/linktest"
)

// abuseServer is a link server with a paired device and, optionally,
// shortened deadlines.
func abuseServer(t *testing.T, mutate func(*link.Options)) (*link.Server, string, *linktest.Device) {
	t.Helper()
	dir := t.TempDir()
	id, devs := linktest.Stores(t, dir)
	dev, _ := linktest.NewDevice("real extension")
	stored, err := devs.Add(dev.Name, linktest.ExtensionOrigin, dev.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	dev.ID, dev.DaemonKey = stored.ID, id.PublicKey()
	opts := link.Options{Identity: id, Devices: devs, Pairer: slowApprover{devs, 0}, LoopbackBind: true}
	if mutate != nil {
		mutate(&opts)
	}
	srv := link.NewServer(opts)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Hub().CloseAll(websocket.StatusGoingAway, "test over")
		srv.Hub().Wait()
		hs.Close()
	})
	return srv, "ws" + strings.TrimPrefix(hs.URL, "http") + "/acp", dev
}

// Any local process can forge the extension's Origin and hold the 32
// unauthenticated slots; the paired extension must still get in, because a
// newcomer takes the slot of the oldest anonymous connection and the
// extension names its paired device at once.
func TestUnauthenticatedFloodCannotLockOutTheExtension(t *testing.T) {
	t.Parallel()
	srv, url, dev := abuseServer(t, nil)
	c := ctx(t)
	var flood []*linktest.Client
	var fmu sync.Mutex
	defer func() {
		fmu.Lock()
		defer fmu.Unlock()
		for _, f := range flood {
			f.Close()
		}
	}()
	for i := 0; i < link.MaxUnauthenticated; i++ {
		f, err := linktest.Dial(c, url, nil)
		if err != nil {
			t.Fatalf("flood connection %d: %v", i, err)
		}
		flood = append(flood, f)
	}
	// Keep refilling from four goroutines while the extension reconnects.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var opened atomic.Int64
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				f, err := linktest.Dial(c, url, nil)
				if err != nil {
					continue
				}
				opened.Add(1)
				fmu.Lock()
				flood = append(flood, f)
				fmu.Unlock()
			}
		}()
	}
	const tries = 20
	for i := 0; i < tries; i++ {
		ec, err := linktest.Connect(c, url, dev, nil)
		if err != nil {
			close(stop)
			wg.Wait()
			t.Fatalf("extension connection %d of %d during the flood: %v", i+1, tries, err)
		}
		ec.Close()
	}
	close(stop)
	wg.Wait()
	if opened.Load() == 0 {
		t.Fatal("the flood opened no connection: the test proved nothing")
	}
	if n := srv.Hub().Unauthenticated(); n > link.MaxUnauthenticated {
		t.Fatalf("unauthenticated count %d over the cap", n)
	}
}

// A connection that named a paired device is not evicted by newcomers.
func TestNamedDeviceIsNotEvicted(t *testing.T) {
	t.Parallel()
	_, url, dev := abuseServer(t, nil)
	c := ctx(t)
	ec, err := linktest.Dial(c, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	if _, err := ec.SayHello(c, dev.ID); err != nil {
		t.Fatal(err)
	}
	var flood []*linktest.Client
	defer func() {
		for _, f := range flood {
			f.Close()
		}
	}()
	for i := 0; i < 2*link.MaxUnauthenticated; i++ {
		f, err := linktest.Dial(c, url, nil)
		if err != nil {
			t.Fatalf("flood %d: %v", i, err)
		}
		flood = append(flood, f)
	}
	// The first flood connections were evicted (wait for that event)…
	if code, err := flood[0].WaitClosed(c); err != nil || code != websocket.StatusTryAgainLater {
		t.Fatalf("evicted flood connection: %v %v", code, err)
	}
	// …and the named one still authenticates.
	if _, err := ec.Auth(c, dev); err != nil {
		t.Fatalf("auth after the flood: %v", err)
	}
}

// rawWS opens a WebSocket by hand, so the test can write partial frames.
func rawWS(t *testing.T, url string) (net.Conn, *bufio.Reader) {
	t.Helper()
	host := strings.TrimPrefix(strings.TrimSuffix(url, "/acp"), "ws://")
	nc, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	key := make([]byte, 16)
	rand.Read(key)
	fmt.Fprintf(nc, "GET /acp HTTP/1.1\r\nHost: %s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\nOrigin: %s\r\n\r\n",
		host, base64.StdEncoding.EncodeToString(key), linktest.ExtensionOrigin)
	br := bufio.NewReader(nc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	return nc, br
}

// maskedHeader is a client text frame header announcing n payload bytes.
func maskedHeader(n int) []byte {
	h := []byte{0x81, 0x80 | 126, byte(n >> 8), byte(n)}
	return append(h, 1, 2, 3, 4) // mask key
}

// waitClosed waits until the server closes the connection: a close frame
// or the end of the TCP stream, whichever comes first.
func waitClosed(t *testing.T, nc net.Conn, br *bufio.Reader, within time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	nc.SetReadDeadline(start.Add(within))
	fail := func(err error) time.Duration {
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("connection still open after %s", within)
		}
		return time.Since(start)
	}
	for {
		var h [2]byte
		if _, err := io.ReadFull(br, h[:]); err != nil {
			return fail(err)
		}
		n := int64(h[1] & 0x7f)
		switch n {
		case 126:
			var b [2]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return fail(err)
			}
			n = int64(binary.BigEndian.Uint16(b[:]))
		case 127:
			var b [8]byte
			if _, err := io.ReadFull(br, b[:]); err != nil {
				return fail(err)
			}
			n = int64(binary.BigEndian.Uint64(b[:]))
		}
		if h[0]&0x0f == 0x8 {
			return time.Since(start)
		}
		if _, err := io.CopyN(io.Discard, br, n); err != nil {
			return fail(err)
		}
	}
}

// A frame trickled one byte at a time must not hold the connection: once a
// frame has begun it must finish within the frame deadline.
func TestTrickledFrameIsCut(t *testing.T) {
	t.Parallel()
	_, url, _ := abuseServer(t, func(o *link.Options) {
		link.SetDeadlines(o, 0, 0, 300*time.Millisecond)
		link.SetAuthTimeout(o, time.Minute)
	})
	nc, br := rawWS(t, url)
	nc.Write(maskedHeader(1000))
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := nc.Write([]byte{byte(i)}); err != nil {
				return
			}
		}
	}()
	if el := waitClosed(t, nc, br, 5*time.Second); el > 3*time.Second {
		t.Fatalf("closed after %s, want ~300ms", el)
	}
}

// A peer that stops answering pings is closed after the pong deadline,
// even when it is authenticated (so no auth deadline applies).
func TestSilentPeerIsClosed(t *testing.T) {
	t.Parallel()
	_, url, dev := abuseServer(t, func(o *link.Options) {
		link.SetDeadlines(o, 200*time.Millisecond, 200*time.Millisecond, 0)
	})
	c := ctx(t)
	ec, err := linktest.Connect(c, url, dev, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	// A live client answers pings (its read loop does) and stays open past
	// several ping intervals.
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-ec.Done():
			t.Fatal("a client that answers pings was closed")
		case <-time.After(50 * time.Millisecond):
		}
	}
	// A raw connection never reads, so never answers: closed.
	nc, br := rawWS(t, url)
	if el := waitClosed(t, nc, br, 5*time.Second); el > 3*time.Second {
		t.Fatalf("silent peer closed after %s", el)
	}
}
