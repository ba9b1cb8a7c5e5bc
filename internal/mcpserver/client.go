package mcpserver

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/control"
)

// ConnectMCP is a go-sdk MCP client session on the daemon's MCP socket,
// greeted with hello first as `torii mcp` greets it: the one path by which
// `torii exec` (and tests that act as it) call tools.
func ConnectMCP(ctx context.Context, socket string, hello RelayHelloParams, impl *mcp.Implementation) (*mcp.ClientSession, error) {
	c, err := control.DialSocket(ctx, socket)
	if err != nil {
		return nil, err
	}
	if _, err := c.Write(hello.Line()); err != nil {
		c.Close()
		return nil, fmt.Errorf("mcp socket: %w", err)
	}
	cs, err := mcp.NewClient(impl, nil).Connect(ctx, &mcp.IOTransport{Reader: c, Writer: c}, nil)
	if err != nil {
		c.Close()
		return nil, err
	}
	return cs, nil
}
