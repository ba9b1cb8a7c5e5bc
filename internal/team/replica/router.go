package replica

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// router is the bus as the replica uses it (internal/team/bus).
type router interface {
	Ready(ctx context.Context) error
	ServeDevice(deviceID string, h func(ctx context.Context, r callRequest) *mcp.CallToolResult) (stop func(), err error)
	Call(ctx context.Context, r callRequest) (*mcp.CallToolResult, error)
	Online(ctx context.Context) (map[string]string, error)
	Publish(ctx context.Context, e event) error
	Subscribe(f func(event)) (stop func(), err error)
	Drain()
	Close()
}

// Placeholders for the bus's types until its package lands.
type callRequest struct {
	CallID    string          `json:"callId"`
	UserID    string          `json:"userId"`
	TokenID   string          `json:"tokenId"`
	Session   string          `json:"session"`
	DeviceID  string          `json:"deviceId"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
	BudgetMs  int64           `json:"budgetMs"`
	From      string          `json:"from"`
}

type event struct {
	Kind   string
	ID     string
	UserID string
}

var (
	errNoHome   = errors.New("bus: no replica serves the device")
	errHomeLost = errors.New("bus: the device's replica stopped answering")
)

// Bus event kinds.
const (
	evTokenRevoked  = "token.revoked"
	evDeviceRevoked = "device.revoked"
	evUserDeleted   = "user.deleted"
	evPairDecided   = "pair.decided"
)

// storeOTP is the store's OTP until its package has it.
type storeOTP struct {
	Secret, UserID string
}
