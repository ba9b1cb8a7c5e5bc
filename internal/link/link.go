// Package link is the daemon's /acp WebSocket endpoint: the checks before
// the upgrade, JSON-RPC framing and limits, the extension's authentication
// (torii/hello, torii/pair, torii/auth, torii/ping), and the hub of live
// connections. What runs after authentication (ACP) is a Handler.
package link

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"github.com/torii-browser/torii/extension"
	"github.com/torii-browser/torii/internal/pairing"
)

// ExtensionID is the built-in torii extension's ID (fixed by the manifest
// key); its origin is always allowed.
const ExtensionID = extension.ID

// Limits from docs/protocol.md.
const (
	// MaxFrame: any frame larger closes the connection with 1009 (SECURITY I-11).
	MaxFrame = 8 << 20
	// MaxRequest: a method-bearing frame larger gets -32600; only responses
	// (tool results, screenshots) may use the full MaxFrame.
	MaxRequest = 1 << 20
	// MaxUnauthenticated connections at once (SECURITY I-4). At the cap a
	// newcomer takes the slot of the oldest anonymous one (see Hub.reserve).
	MaxUnauthenticated = 128
	// MaxConnections caps live connections; a token client past it gets 503
	// (the paired extension is never refused by it). SECURITY I-51.
	MaxConnections = 256
	// pingInterval: a connection silent this long is sent a WebSocket ping;
	// no pong within pongTimeout closes it (1001). SECURITY I-51.
	pingInterval = 30 * time.Second
	pongTimeout  = 15 * time.Second
	// frameTimeout: once a frame has begun, all of it must arrive within
	// this, so a peer trickling a frame cannot hold the connection.
	frameTimeout = 30 * time.Second
	// AuthTimeout after the upgrade (or after a pairing decision) to finish torii/auth.
	AuthTimeout = 10 * time.Second
	// maxInFlight bounds concurrent handler calls per connection; the read
	// loop blocks when it is reached, which pushes back on the peer. With
	// MaxRequest this bounds a connection's retained request bytes to
	// maxInFlight MiB plus one MaxFrame being read.
	maxInFlight = 16
	// MaxPending bounds the daemon's own requests awaiting one peer's
	// answers (tool calls over mcp/message); past it Call fails with
	// ErrBusy and nothing is sent (SECURITY I-34).
	MaxPending = 32
	// writeTimeout: a peer that stops reading cannot pin a writer forever.
	writeTimeout = 10 * time.Second
)

// Subprotocol is echoed to clients that offer it (Chrome aborts otherwise).
const Subprotocol = "acp.v1"

// BearerSubprotocolPrefix carries a token for browser clients, which cannot
// set an Authorization header on a WebSocket.
const BearerSubprotocolPrefix = "openab.bearer."

// Devices is the paired-device store as the link needs it.
type Devices interface {
	Get(id string) (pairing.Device, bool)
	Touch(id string, t time.Time) error
}

// Tokens checks bearer tokens (SECURITY I-8: constant time, hashed).
type Tokens interface {
	Check(token string) (id string, ok bool)
}

// PairRequest is a torii/pair request as the daemon's pairing manager sees it.
type PairRequest struct {
	RequestID    string
	DeviceName   string
	Origin       string
	ConnectionID string
	DeviceKey    []byte
	Transcript   []byte // pairTranscript; the OTP proof is checked against it
	Code         string // the 6-digit code both sides show
	OTPProof     []byte // nil when the client sent none
}

// Pairer decides pairing requests. Pair blocks until the person (or a valid
// one-time secret) decides; it returns the new device's ID, or a
// *jsonrpc.Error (pairing_denied, pairing_timeout, rate_limited).
type Pairer interface {
	Pair(ctx context.Context, req PairRequest) (deviceID string, err error)
}

// Handler serves every method after authentication except torii/ping.
// Handle returns the result, or an error (a *jsonrpc.Error goes out as is).
// For notifications the result is dropped. Closed is called once per
// authenticated connection when it ends.
type Handler interface {
	Handle(ctx context.Context, c *Conn, method string, params json.RawMessage) (any, error)
	Closed(c *Conn)
}

// Options configure a Server.
type Options struct {
	Identity *pairing.Identity
	Devices  Devices
	Tokens   Tokens
	Pairer   Pairer
	Handler  Handler
	// LoopbackBind: the listener is on a loopback address, so the Host
	// header must be loopback too (SECURITY I-2).
	LoopbackBind bool
	// ExtensionIDs are extra extension IDs allowed as Origin.
	ExtensionIDs []string
	// TokenOrigins are browser origins allowed for token clients only.
	TokenOrigins []string
	Logger       *slog.Logger
	// Verbose logs every frame, with torii/* params and all results redacted (SECURITY I-10).
	Verbose bool
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
	// TicketFile keeps the hashes of reconnect tickets across restarts
	// (SECURITY I-57); "" keeps them in memory only.
	TicketFile string

	authTimeout  time.Duration // tests shorten AuthTimeout
	pingInterval time.Duration // tests shorten the keep-alive
	pongTimeout  time.Duration
	frameTimeout time.Duration
}
