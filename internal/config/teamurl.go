package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ErrTeamPublicURL: team.publicURL cannot be the address browsers and
// agents are told to use. The *PublicURLError wrapping it names the fix.
var ErrTeamPublicURL = errors.New("config: team.publicURL")

// PublicURLError is a team.publicURL refused at start, with the value that
// would work.
type PublicURLError struct {
	Value   string
	Problem string
	Fix     string
}

func (e *PublicURLError) Error() string {
	return fmt.Sprintf("%v %q %s\n  fix: %s", ErrTeamPublicURL, e.Value, e.Problem, e.Fix)
}

func (e *PublicURLError) Unwrap() error { return ErrTeamPublicURL }

// TeamURLs are where browsers and agents reach the gateway, derived from
// team.publicURL: what `serve --team` prints, what the user API hands a
// launch or a new token, and what a draining replica names.
type TeamURLs struct {
	URL string `json:"url"` // https://torii.example.com
	ACP string `json:"acp"` // wss://torii.example.com/acp, for browsers
	MCP string `json:"mcp"` // https://torii.example.com/mcp, for agents
}

// URLs derives the public endpoints; ok is false without a publicURL.
// PublicURL has been checked by checkPublicURL (TeamConfig).
func (t Team) URLs() (TeamURLs, bool) {
	if t.PublicURL == "" {
		return TeamURLs{}, false
	}
	ws := "wss" + strings.TrimPrefix(t.PublicURL, "https")
	if strings.HasPrefix(t.PublicURL, "http://") {
		ws = "ws" + strings.TrimPrefix(t.PublicURL, "http")
	}
	return TeamURLs{URL: t.PublicURL, ACP: ws + "/acp", MCP: t.PublicURL + "/mcp"}, true
}

// checkPublicURL accepts an https:// origin anywhere and http:// only for a
// loopback host (SECURITY I-92, I-99: browsers refuse ws:// off loopback and
// a token sent in plaintext off the machine is given away). It returns the
// URL without a trailing slash. The gateway serves /acp, /mcp, /admin and
// /v1 at the root of its address, so a path would name nothing.
func checkPublicURL(v string) (string, error) {
	bad := func(problem, fix string) (string, error) {
		return "", &PublicURLError{Value: v, Problem: problem, Fix: fix}
	}
	const example = `"publicURL": "https://torii.example.com"`
	u, err := url.Parse(strings.TrimSpace(v))
	if err != nil || u.Host == "" || u.Hostname() == "" {
		return bad("is not an address", "set the address browsers and agents use, e.g. "+example)
	}
	host := u.Host
	switch strings.ToLower(u.Scheme) {
	case "https":
	case "http":
		if !IsLoopbackHost(u.Hostname()) {
			return bad("is plaintext off loopback: tokens and browser links would cross the network unencrypted",
				`"publicURL": "https://`+host+`" (http:// is only for a loopback address)`)
		}
	case "ws", "wss":
		return bad("is a browser link's address; publicURL is the gateway's own (browsers get wss://…/acp from it)",
			`"publicURL": "https://`+host+`"`)
	default:
		return bad("is neither https:// nor http://", `"publicURL": "https://`+host+`"`)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return bad("carries credentials, a query or a fragment", `"publicURL": "`+strings.ToLower(u.Scheme)+`://`+host+`"`)
	}
	if p := strings.TrimRight(u.Path, "/"); p != "" {
		return bad("has a path; the gateway serves /acp, /mcp and /admin at the root of its address",
			`"publicURL": "`+strings.ToLower(u.Scheme)+`://`+host+`"`)
	}
	return strings.ToLower(u.Scheme) + "://" + host, nil
}
