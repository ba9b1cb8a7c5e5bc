package config

import (
	"errors"
	"strings"
	"testing"
)

func TestTeamConfig(t *testing.T) {
	t.Parallel()
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	base := func(listen string, tls TeamTLS) Config {
		return Config{Listen: listen, Team: &Team{Store: "postgres://db/torii", Bus: "nats://bus:4222", TLS: tls, Replica: "r1"}}
	}
	cases := []struct {
		name string
		cfg  Config
		env  map[string]string
		want error
	}{
		{"loopback plaintext", base("127.0.0.1:8443", TeamTLS{}), nil, nil},
		{"all interfaces plaintext refused", base("0.0.0.0:8443", TeamTLS{}), nil, ErrTeamPlaintext},
		{"empty host plaintext refused", base(":8443", TeamTLS{}), nil, ErrTeamPlaintext},
		{"public ip plaintext refused", base("10.1.2.3:8443", TeamTLS{}), nil, ErrTeamPlaintext},
		{"trusted ingress", base("0.0.0.0:8443", TeamTLS{Ingress: true}), nil, nil},
		{"cert and key", base("0.0.0.0:8443", TeamTLS{Cert: "c", Key: "k"}), nil, nil},
		{"half tls", base("0.0.0.0:8443", TeamTLS{Cert: "c"}), nil, ErrTeamTLS},
		{"no team object", Config{Listen: "127.0.0.1:1"}, nil, ErrTeamMissing},
		{"env supplies engines", Config{Listen: "127.0.0.1:1"}, map[string]string{EnvTeamStore: "sqlite:/x", EnvTeamBus: "nats://b"}, nil},
		{"bad listen", base("nope", TeamTLS{}), nil, ErrBadListen},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.cfg.TeamConfig(env(c.env))
			if !errors.Is(err, c.want) || (c.want == nil) != (err == nil) {
				t.Fatalf("TeamConfig = %v, want %v", err, c.want)
			}
		})
	}
}

// The refusal names the fix: TLS files, a trusted ingress, or loopback.
func TestTeamPlaintextNamesTheFix(t *testing.T) {
	t.Parallel()
	c := Config{Listen: "0.0.0.0:8443", Team: &Team{Store: "postgres://db", Bus: "nats://b"}}
	_, err := c.TeamConfig(func(string) string { return "" })
	for _, w := range []string{"team.tls.cert", `"ingress": true`, "127.0.0.1", "0.0.0.0:8443"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Fatalf("error %v does not say %q", err, w)
		}
	}
}

func TestTeamEnvOverrides(t *testing.T) {
	t.Parallel()
	c := Config{Listen: "127.0.0.1:1", TLSCert: "top.crt", TLSKey: "top.key",
		Team: &Team{Store: "postgres://file", Bus: "nats://file", AdminTokenFile: "/file"}}
	got, err := c.TeamConfig(func(k string) string {
		return map[string]string{EnvTeamStore: "postgres://env", EnvTeamBus: "nats://env", EnvTeamAdminTokenFile: "/env"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Store != "postgres://env" || got.Bus != "nats://env" || got.AdminTokenFile != "/env" {
		t.Fatalf("overrides not applied: %+v", got)
	}
	if got.TLS.Cert != "top.crt" || got.TLS.Key != "top.key" || got.Replica == "" {
		t.Fatalf("defaults not applied: %+v", got)
	}
}

// team.publicURL: https:// anywhere, http:// on loopback only; every
// refusal says which value would work.
func TestTeamPublicURL(t *testing.T) {
	t.Parallel()
	cfg := func(pub string) Config {
		return Config{Listen: "127.0.0.1:8443", Team: &Team{Store: "postgres://db", Bus: "nats://b", Replica: "r1", PublicURL: pub}}
	}
	none := func(string) string { return "" }
	for _, c := range []struct{ in, want string }{
		{"https://torii.example.com", "https://torii.example.com"},
		{"https://torii.example.com/", "https://torii.example.com"},
		{"HTTPS://torii.example.com:8443", "https://torii.example.com:8443"},
		{"http://127.0.0.1:8443", "http://127.0.0.1:8443"},
		{"http://localhost:1", "http://localhost:1"},
		{"http://[::1]:1", "http://[::1]:1"},
	} {
		got, err := cfg(c.in).TeamConfig(none)
		if err != nil || got.PublicURL != c.want {
			t.Errorf("%q: %q, %v; want %q", c.in, got.PublicURL, err, c.want)
		}
	}
	u, _ := cfg("https://torii.example.com").TeamConfig(none)
	if urls, ok := u.URLs(); !ok || urls.ACP != "wss://torii.example.com/acp" || urls.MCP != "https://torii.example.com/mcp" {
		t.Errorf("URLs: %+v %v", urls, ok)
	}
	l, _ := cfg("http://127.0.0.1:8443").TeamConfig(none)
	if urls, _ := l.URLs(); urls.ACP != "ws://127.0.0.1:8443/acp" {
		t.Errorf("loopback URLs: %+v", urls)
	}
	if _, ok := (Team{}).URLs(); ok {
		t.Error("URLs without a publicURL")
	}
	for _, c := range []struct{ in, fix string }{
		{"http://torii.example.com", `"https://torii.example.com"`},
		{"http://10.1.2.3:8443", `"https://10.1.2.3:8443"`},
		{"ws://torii.example.com/acp", `"https://torii.example.com"`},
		{"wss://torii.example.com/acp", `"https://torii.example.com"`},
		{"ftp://torii.example.com", `"https://torii.example.com"`},
		{"torii.example.com", "https://torii.example.com"},
		{"https://torii.example.com/gateway", `"https://torii.example.com"`},
		{"https://user:pw@torii.example.com", `"https://torii.example.com"`},
		{"https://torii.example.com?x=1", `"https://torii.example.com"`},
		{"https://", "https://torii.example.com"},
	} {
		_, err := cfg(c.in).TeamConfig(none)
		var pe *PublicURLError
		if !errors.Is(err, ErrTeamPublicURL) || !errors.As(err, &pe) {
			t.Errorf("%q: %v, want a *PublicURLError", c.in, err)
			continue
		}
		if !strings.Contains(err.Error(), "fix: ") || !strings.Contains(pe.Fix, c.fix) {
			t.Errorf("%q: the fix %q does not name %s", c.in, pe.Fix, c.fix)
		}
	}
}
