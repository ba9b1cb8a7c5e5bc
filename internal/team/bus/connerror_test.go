package bus

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/torii-browser/torii/internal/team/teamtest"
)

// An unreachable server is typed bus_unreachable (retryable); a URL that
// cannot be used is ErrBadURL (a replica refuses to start), and neither
// message shows the password.
func TestConnectErrorsAreTyped(t *testing.T) {
	t.Parallel()
	url := "nats://user:secret@127.0.0.1:" + strconv.Itoa(teamtest.FreePort(t))
	_, err := Connect(ctxFor(t, 5*time.Second), url, "a", nil)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Code != "bus_unreachable" || errors.Is(err, ErrBadURL) {
		t.Fatalf("Connect to nothing = %v, want a bus_unreachable ConnError", err)
	}
	for _, bad := range []string{
		"http://user:secret@127.0.0.1:4222",
		"nats://user:secret@127.0.0.1:99999",
		"nats://user:secret@:4222",
		"nats://user:secret@127.0.0.1:42 22",
		" , ",
	} {
		_, err := Connect(ctxFor(t, 5*time.Second), bad, "a", nil)
		if !errors.Is(err, ErrBadURL) || errors.Is(err, ErrUnavailable) {
			t.Errorf("Connect(%q) = %v, want ErrBadURL only", bad, err)
		}
		if err != nil && (strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "TORII_TEAM_BUS")) {
			t.Errorf("error %q: must name the setting and hide the password", err)
		}
	}
	// A list of servers, and a bare host:port, as nats.go takes them.
	for _, good := range []string{"nats://a:4222,nats://b:4222", "127.0.0.1:4222", "tls://u:p@h", "wss://h:443"} {
		if err := checkURL(good); err != nil {
			t.Errorf("checkURL(%q) = %v", good, err)
		}
	}
}

// A server that refuses the URL's credentials is typed bus_auth, naming
// where to fix them and never the password; the right ones connect.
func TestConnectWrongCredentialsIsTyped(t *testing.T) {
	t.Parallel()
	srv := teamtest.NATSWithPassword(t, "gw", "right-pass-1")
	wrong := strings.Replace(srv.URL, "nats://", "nats://gw:wrong-pass-9@", 1)
	_, err := Connect(ctxFor(t, 10*time.Second), wrong, "a", nil)
	var ce *ConnError
	if !errors.As(err, &ce) || ce.Code != "bus_auth" || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Connect with a wrong password = %v, want a bus_auth ConnError", err)
	}
	if strings.Contains(err.Error(), "wrong-pass-9") || !strings.Contains(ce.Fix, "TORII_TEAM_BUS") {
		t.Fatalf("error %q: must name the setting and hide the password", err)
	}
	b, err := Connect(ctxFor(t, 10*time.Second), strings.Replace(srv.URL, "nats://", "nats://gw:right-pass-1@", 1), "a", nil)
	if err != nil {
		t.Fatalf("Connect with the right password: %v", err)
	}
	b.Close()
}
