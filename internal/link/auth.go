package link

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"

	"github.com/torii-browser/torii/internal/pairing"
	"github.com/torii-browser/torii/internal/wire"
)

// ProtocolVersion is the torii/hello protocol number.
const ProtocolVersion = 1

// HelloParams is torii/hello's params.
type HelloParams struct {
	Protocol    int    `json:"protocol"`
	DeviceID    string `json:"deviceId"`
	ClientNonce string `json:"clientNonce"`
}

// HelloResult is torii/hello's result.
type HelloResult struct {
	Protocol     int    `json:"protocol"`
	DaemonID     string `json:"daemonId"`
	DaemonKey    string `json:"daemonKey"`
	ServerNonce  string `json:"serverNonce"`
	ConnectionID string `json:"connectionId"`
	Paired       bool   `json:"paired"`
	DaemonSig    string `json:"daemonSig,omitempty"`
}

// PairParams is torii/pair's params.
type PairParams struct {
	RequestID  string `json:"requestId"`
	DeviceKey  string `json:"deviceKey"`
	DeviceName string `json:"deviceName"`
	OTPProof   string `json:"otpProof,omitempty"`
}

// PairResult is torii/pair's result.
type PairResult struct {
	DeviceID  string `json:"deviceId"`
	DaemonKey string `json:"daemonKey"`
	// DaemonSig proves the daemon's key on this connection for the new
	// device, so the client may go straight on to torii/auth.
	DaemonSig string `json:"daemonSig,omitempty"`
}

// AuthParams is torii/auth's params.
type AuthParams struct {
	DeviceID string `json:"deviceId"`
	Sig      string `json:"sig"`
}

// AuthResult is torii/auth's result.
type AuthResult struct {
	DeviceID   string `json:"deviceId"`
	DeviceName string `json:"deviceName"`
	// Ticket is offered on the next upgrade as TicketSubprotocolPrefix +
	// Ticket for a reserved way in (SECURITY I-57).
	Ticket string `json:"ticket,omitempty"`
}

// PingResult is torii/ping's result.
type PingResult struct {
	T int64 `json:"t"`
}

func (c *Conn) handleTorii(msg *wire.Message) {
	if msg.Method == "torii/ping" {
		if msg.HasID() {
			c.reply(msg.ID, PingResult{T: c.srv.now().UnixMilli()})
		}
		return
	}
	if !msg.HasID() {
		return // handshake methods are requests; a notification is ignored
	}
	if linkMethod(msg.Method) {
		if e := c.forbidden(msg.Method); e != nil {
			c.replyErr(msg.ID, e)
			return
		}
	}
	switch msg.Method {
	case "torii/hello":
		c.hello(msg)
	case "torii/pair":
		c.pair(msg)
	case "torii/auth":
		c.auth(msg)
	default:
		c.replyErr(msg.ID, wire.Errorf(wire.CodeMethodNotFound, "method %q not found", msg.Method))
	}
}

// forbidden is the -32600 a handshake method gets in a state that does not
// allow it. It is checked before the params, so whatever a message carries,
// the state decides first (docs/protocol.md).
func (c *Conn) forbidden(method string) *wire.Error {
	c.mu.Lock()
	st := c.state
	c.mu.Unlock()
	switch {
	case method == "torii/hello":
		if st != stateNew {
			return wire.Errorf(wire.CodeInvalidRequest, "torii/hello may be sent once per connection")
		}
	case st == stateNew:
		return wire.Errorf(wire.CodeInvalidRequest, "%s: send torii/hello first", method)
	case st == statePairing && method == "torii/pair":
		return wire.Errorf(wire.CodeInvalidRequest, "torii/pair: a pairing request is already pending on this connection")
	case st == statePairing:
		return wire.Errorf(wire.CodeInvalidRequest, "%s: wait for the torii/pair decision", method)
	case st == stateAuthed:
		return wire.Errorf(wire.CodeInvalidRequest, "%s: already authenticated", method)
	}
	return nil
}

func decodeParams(msg *wire.Message, v any) *wire.Error {
	if len(msg.Params) == 0 {
		return wire.Errorf(wire.CodeInvalidParams, "%s: params required", msg.Method)
	}
	if err := json.Unmarshal(msg.Params, v); err != nil {
		return wire.Errorf(wire.CodeInvalidParams, "%s: %v", msg.Method, err)
	}
	return nil
}

func (c *Conn) hello(msg *wire.Message) {
	var p HelloParams
	if e := decodeParams(msg, &p); e != nil {
		c.replyErr(msg.ID, e)
		return
	}
	if p.Protocol != ProtocolVersion {
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidParams, "torii/hello: protocol %d not supported; this daemon speaks %d", p.Protocol, ProtocolVersion))
		return
	}
	cn, err := pairing.DecodeB64(p.ClientNonce)
	if err != nil || len(cn) != 32 {
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidParams, "torii/hello: clientNonce must be 32 bytes, base64url"))
		return
	}
	c.mu.Lock()
	if c.state != stateNew {
		c.mu.Unlock()
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidRequest, "torii/hello may be sent once per connection"))
		return
	}
	sn := pairing.NewNonce()
	c.clientNonce, c.serverNonce, c.state = cn, sn, stateHello
	c.mu.Unlock()

	id := c.srv.opts.Identity
	res := HelloResult{Protocol: ProtocolVersion, DaemonID: id.ID(), DaemonKey: pairing.EncodeB64(id.PublicKey()),
		ServerNonce: pairing.EncodeB64(sn), ConnectionID: c.id}
	if p.DeviceID != "" {
		if dev, ok := c.srv.opts.Devices.Get(p.DeviceID); ok {
			// SECURITY I-6: the daemon proves its identity first, bound to
			// this connection and both nonces, so the client signs only
			// for the daemon it paired with.
			sig, err := id.Sign(pairing.AuthTranscript(pairing.RoleDaemon, c.id, dev.ID, c.origin,
				dev.PublicKey, id.PublicKey(), cn, sn))
			if err != nil {
				c.replyErr(msg.ID, wire.Errorf(wire.CodeInternalError, "sign: %v", err))
				return
			}
			res.Paired, res.DaemonSig = true, pairing.EncodeB64(sig)
			c.mu.Lock()
			c.helloDevice = dev.ID
			c.mu.Unlock()
		}
	}
	c.reply(msg.ID, res)
}

func (c *Conn) pair(msg *wire.Message) {
	var p PairParams
	if e := decodeParams(msg, &p); e != nil {
		c.replyErr(msg.ID, e)
		return
	}
	if _, err := uuid.Parse(p.RequestID); err != nil {
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidParams, "torii/pair: requestId must be a UUID"))
		return
	}
	key, err := pairing.DecodeB64(p.DeviceKey)
	if err != nil || !pairing.ValidPublicKey(key) {
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidParams, "torii/pair: deviceKey must be a 65-byte uncompressed P-256 point, base64url"))
		return
	}
	if !validDeviceName(p.DeviceName) {
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidParams, "torii/pair: deviceName must be 1-%d printable characters", pairing.MaxDeviceName))
		return
	}
	var proof []byte
	if p.OTPProof != "" {
		if proof, err = pairing.DecodeB64(p.OTPProof); err != nil || len(proof) != 32 {
			c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidParams, "torii/pair: otpProof must be 32 bytes, base64url"))
			return
		}
	}
	if !c.srv.isExtensionOrigin(c.origin) {
		// Only the extension pairs: its origin is bound into the transcript
		// and pinned on the device.
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidParams, "torii/pair: only the torii extension can pair (Origin %q); other clients use a token", c.origin))
		return
	}
	c.mu.Lock()
	switch c.state {
	case stateNew:
		c.mu.Unlock()
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidRequest, "torii/pair: send torii/hello first"))
		return
	case statePairing:
		c.mu.Unlock()
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidRequest, "torii/pair: a pairing request is already pending on this connection"))
		return
	case stateAuthed:
		// A token connection (or one already signed in) has nothing to pair:
		// letting it through would demote it and unbalance the slot count.
		c.mu.Unlock()
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidRequest, "torii/pair: already authenticated"))
		return
	}
	c.state = statePairing
	// A human is comparing codes: the pairing timeout (120 s) governs now,
	// not the 10 s authentication deadline.
	if c.authTimer != nil {
		c.authTimer.Stop()
	}
	cn, sn := c.clientNonce, c.serverNonce
	c.mu.Unlock()

	daemonKey := c.srv.opts.Identity.PublicKey()
	tr := pairing.PairTranscript(p.RequestID, c.origin, key, daemonKey, cn, sn)
	req := PairRequest{RequestID: p.RequestID, DeviceName: p.DeviceName, Origin: c.origin, ConnectionID: c.id,
		DeviceKey: key, Transcript: tr, Code: pairing.Code(tr), OTPProof: proof}
	// The decision may take minutes; the read loop must keep serving pings.
	go c.awaitPair(msg.ID, req, daemonKey, cn, sn)
}

func (c *Conn) awaitPair(id json.RawMessage, req PairRequest, daemonKey, cn, sn []byte) {
	devID, err := c.srv.opts.Pairer.Pair(c.ctx, req)
	c.mu.Lock()
	c.state = stateHello
	if err == nil {
		c.pairedDevice = devID
	}
	c.mu.Unlock()
	c.armAuthTimer()
	if err != nil {
		var e *wire.Error
		if !errors.As(err, &e) {
			if c.ctx.Err() != nil {
				return
			}
			e = wire.Errorf(wire.CodeInternalError, "pairing failed: %v", err)
		}
		c.replyErr(id, e)
		if e.Code == wire.CodeRateLimited {
			// SECURITY I-12: a flooding client is cut off, not just refused.
			c.Close(websocket.StatusPolicyViolation, "rate limited")
		}
		return
	}
	res := PairResult{DeviceID: devID, DaemonKey: pairing.EncodeB64(daemonKey)}
	// SECURITY I-6: same transcript as hello's daemonSig, for the new device.
	if sig, err := c.srv.opts.Identity.Sign(pairing.AuthTranscript(pairing.RoleDaemon, c.id, devID, c.origin,
		req.DeviceKey, daemonKey, cn, sn)); err == nil {
		res.DaemonSig = pairing.EncodeB64(sig)
	}
	c.reply(id, res)
}

func (c *Conn) auth(msg *wire.Message) {
	var p AuthParams
	if e := decodeParams(msg, &p); e != nil {
		c.replyErr(msg.ID, e)
		return
	}
	c.mu.Lock()
	state, cn, sn := c.state, c.clientNonce, c.serverNonce
	allowed := p.DeviceID != "" && (p.DeviceID == c.helloDevice || p.DeviceID == c.pairedDevice)
	c.mu.Unlock()
	switch state {
	case stateNew:
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidRequest, "torii/auth: send torii/hello first"))
		return
	case statePairing:
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidRequest, "torii/auth: wait for the torii/pair decision"))
		return
	case stateAuthed:
		c.replyErr(msg.ID, wire.Errorf(wire.CodeInvalidRequest, "torii/auth: already authenticated"))
		return
	}
	fail := func(why string) {
		c.srv.log.Info("link: authentication failed", "conn", c.id, "why", why)
		c.Close(websocket.StatusPolicyViolation, "authentication failed")
	}
	if !allowed {
		fail("device not named in hello or paired on this connection")
		return
	}
	if r := c.srv.hub.reservedDevice(c); r != "" && r != p.DeviceID {
		// SECURITY I-57: a reserved slot is its device's only.
		fail("a ticket's connection authenticates as the ticket's device")
		return
	}
	dev, ok := c.srv.opts.Devices.Get(p.DeviceID)
	if !ok {
		fail("unknown or revoked device")
		return
	}
	if dev.Origin != c.origin {
		fail("origin differs from the device's paired origin")
		return
	}
	sig, err := pairing.DecodeB64(p.Sig)
	daemonKey := c.srv.opts.Identity.PublicKey()
	// SECURITY I-6: the signature covers this connection's ID and fresh
	// server nonce, so one recorded from another connection never verifies.
	if err != nil || !pairing.Verify(dev.PublicKey, pairing.AuthTranscript(pairing.RoleDevice, c.id, dev.ID,
		c.origin, dev.PublicKey, daemonKey, cn, sn), sig) {
		fail("bad signature")
		return
	}
	if !c.srv.promote(c, func() bool {
		// SECURITY I-7: re-checked under the hub lock, so a revocation
		// that lands during verification still wins.
		_, still := c.srv.opts.Devices.Get(dev.ID)
		if still {
			c.state, c.kind, c.deviceID, c.deviceName = stateAuthed, KindDevice, dev.ID, dev.Name
		}
		return still
	}) {
		fail("revoked during authentication")
		return
	}
	_ = c.srv.opts.Devices.Touch(dev.ID, c.srv.now())
	c.srv.log.Info("link: device authenticated", "conn", c.id, "device", dev.ID, "name", dev.Name)
	c.reply(msg.ID, AuthResult{DeviceID: dev.ID, DeviceName: dev.Name, Ticket: c.srv.hub.tickets.issue(dev.ID)})
}

// armAuthTimer (re)starts the authentication deadline. SECURITY I-4.
func (c *Conn) armAuthTimer() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == stateAuthed || c.closing {
		return
	}
	if c.authTimer != nil {
		c.authTimer.Stop()
	}
	c.authTimer = time.AfterFunc(c.srv.authTimeout(), func() {
		c.mu.Lock()
		expired := c.state == stateNew || c.state == stateHello
		c.mu.Unlock()
		if expired {
			c.Close(websocket.StatusPolicyViolation, "authentication timeout")
		}
	})
}
