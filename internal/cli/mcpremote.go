package cli

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/version"
)

// SessionHeader names the agent's session on a team gateway: calls that
// carry the same name share tabs, whichever replica takes each request.
const SessionHeader = "Torii-Session"

// bearerTransport adds the token and the session name to every request.
type bearerTransport struct {
	token, session string
	base           http.RoundTripper
}

func (b *bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	if b.session != "" {
		r.Header.Set(SessionHeader, b.session)
	}
	return b.base.RoundTrip(r)
}

// mcpRemote serves the agent's stdio MCP with the team gateway's tools:
// the tool list is the gateway's, and each call is made on the gateway's
// /mcp as the token's user, so the agent reaches only that user's browsers.
func mcpRemote(ctx context.Context, s Stdio, remote *remoteFlags, session, browser string) error {
	c, err := remote.client()
	if err != nil {
		return err
	}
	endpoint := c.base.JoinPath("mcp")
	if browser != "" {
		endpoint.RawQuery = url.Values{"browser": {browser}}.Encode()
	}
	hc := &http.Client{Transport: &bearerTransport{token: c.token, session: session, base: http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "torii-relay", Version: version.Version}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   endpoint.String(),
		HTTPClient: hc,
		// The gateway is stateless: there is no server-initiated stream to hold open.
		DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return fmt.Errorf("cannot start an MCP session with %s: %w\n  fix: check --server, --token (`torii pair --server …` works with the same token?) and the gateway's /readyz", endpoint.Redacted(), err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("listing the gateway's tools: %w", err)
	}
	init := cs.InitializeResult()
	srv := mcp.NewServer(&mcp.Implementation{Name: "torii", Version: version.Version}, &mcp.ServerOptions{Instructions: init.Instructions})
	for _, t := range tools.Tools {
		name := t.Name
		srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: req.Params.Arguments})
		})
	}
	fmt.Fprintf(s.Err, "torii: relaying MCP to %s (%d tools)\n", c.base.Host, len(tools.Tools))
	return srv.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(s.In), Writer: nopWriteCloser{s.Out}})
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
