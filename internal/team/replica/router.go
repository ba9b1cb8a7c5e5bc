package replica

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/torii-browser/torii/internal/team/bus"
)

// router is the bus as the replica uses it; *bus.Bus is one.
type router interface {
	Ready(ctx context.Context) error
	ServeDevice(deviceID string, h bus.Handler, opts ...bus.ServeOption) (stop func(), err error)
	Call(ctx context.Context, r bus.CallRequest) (*mcp.CallToolResult, error)
	Serving(deviceID string) bool
	Online(ctx context.Context, fresh bool) (map[string]string, error)
	ClaimedSince(t time.Time) bool
	Publish(ctx context.Context, e bus.Event) error
	Subscribe(f func(bus.Event)) (stop func(), err error)
	Drain()
	Close()
}

var _ router = (*bus.Bus)(nil)

type (
	callRequest = bus.CallRequest
	event       = bus.Event
)

var (
	errNoHome   = bus.ErrNoHome
	errHomeLost = bus.ErrHomeLost
)

// Bus event kinds.
const (
	evTokenRevoked  = "token.revoked"
	evDeviceRevoked = "device.revoked"
	evUserDeleted   = "user.deleted"
	evPairDecided   = "pair.decided"
)
