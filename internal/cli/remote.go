package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Environment defaults for --server and --token, so a token need not sit
// in shell history.
const (
	EnvServer = "TORII_SERVER"
	EnvToken  = "TORII_TOKEN"
)

// remoteFlags are --server and --token, for commands that talk to a team
// gateway.
type remoteFlags struct {
	server, token string
}

func (f *remoteFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.server, "server", "", "the team gateway's URL, https://… (default $"+EnvServer+")")
	fs.StringVar(&f.token, "token", "", "your bearer token for the gateway (default $"+EnvToken+")")
}

// set reports whether a gateway was named, by flag or environment.
func (f *remoteFlags) set() bool { return f.server != "" || os.Getenv(EnvServer) != "" }

// client checks the flags and returns a client for the gateway.
func (f *remoteFlags) client() (*remoteClient, error) {
	server, token := f.server, f.token
	if server == "" {
		server = os.Getenv(EnvServer)
	}
	if token == "" {
		token = os.Getenv(EnvToken)
	}
	if server == "" {
		return nil, &UsageError{Msg: "no gateway: give --server https://… or set $" + EnvServer}
	}
	u, err := checkServerURL(server)
	if err != nil {
		return nil, err
	}
	if token == "" {
		return nil, &UsageError{Msg: "no token: give --token or set $" + EnvToken + " (an admin creates one with `torii admin token new --user NAME`)"}
	}
	return &remoteClient{base: u, token: token, http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// ServerURLError is a --server (or $TORII_SERVER) address the CLI will not
// use; Fix is what to give instead.
type ServerURLError struct {
	Server  string
	Problem string
	Fix     string
}

func (e *ServerURLError) Error() string {
	return fmt.Sprintf("--server %q %s\n  fix: %s", e.Server, e.Problem, e.Fix)
}

// checkServerURL accepts https:// anywhere and http:// only to a loopback
// host: a token sent in plaintext off this machine is a token given away
// (SECURITY I-97). A ws:// or wss:// address is the browsers' endpoint; the
// fix names the gateway's own.
func checkServerURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimRight(s, "/"))
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return nil, &ServerURLError{Server: s, Problem: "is not a gateway URL", Fix: "give its https:// address, e.g. --server https://torii.example.com"}
	}
	secure := "https://" + u.Host
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !isLoopbackHost(u.Hostname()) {
			return nil, &ServerURLError{Server: s, Problem: "is plaintext http:// off this machine: the token would cross the network unencrypted",
				Fix: "use https://" + u.Host + u.Path}
		}
	case "ws", "wss":
		fix := secure
		if u.Scheme == "ws" && isLoopbackHost(u.Hostname()) {
			fix = "http://" + u.Host
		}
		problem := "is a browser link's address (the gateway's /acp), not the gateway's"
		if u.Scheme == "ws" && !isLoopbackHost(u.Hostname()) {
			problem += ", and plaintext off this machine"
		}
		return nil, &ServerURLError{Server: s, Problem: problem, Fix: "give the gateway's address: --server " + fix}
	default:
		return nil, &ServerURLError{Server: s, Problem: "is neither https:// nor http://", Fix: "give its https:// address: --server " + secure}
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, &ServerURLError{Server: s, Problem: "has credentials, a query or a fragment",
			Fix: "give only the gateway's address, e.g. " + u.Scheme + "://" + u.Host + " (the token goes in --token)"}
	}
	return u, nil
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

type remoteClient struct {
	base  *url.URL
	token string
	http  *http.Client
}

// ServerError is the gateway's refusal, as it said it.
type ServerError struct {
	Status  int
	Code    string
	Message string
	Hint    string
}

func (e *ServerError) Error() string {
	s := e.Message
	if e.Hint != "" {
		s += "\n  hint: " + e.Hint
	}
	return s
}

// call sends method path with body as JSON and decodes the reply into out
// (a *json.RawMessage keeps it as is). A refusal is a *ServerError.
func (c *remoteClient) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.String()+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the gateway at %s: %w\n  fix: check the URL and that the gateway is up (its /readyz)", c.base, unwrapURLError(err))
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("reading the gateway's reply: %w", err)
	}
	if res.StatusCode >= 400 {
		var eb struct {
			Error *ServerError `json:"error"`
		}
		if json.Unmarshal(b, &eb) == nil && eb.Error != nil && eb.Error.Message != "" {
			eb.Error.Status = res.StatusCode
			return eb.Error
		}
		return &ServerError{Status: res.StatusCode, Message: fmt.Sprintf("the gateway answered %s", res.Status),
			Hint: "is " + c.base.String() + " a Torii gateway?"}
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("the gateway's reply is not what torii expects (%v); is %s a Torii gateway of this version?", err, c.base)
	}
	return nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// printJSON prints raw indented.
func printJSON(s Stdio, raw json.RawMessage) error {
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err := s.Out.Write(b.Bytes())
	return err
}
