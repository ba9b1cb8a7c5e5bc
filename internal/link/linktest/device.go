package linktest

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/torii-browser/torii/internal/link"
	"github.com/torii-browser/torii/internal/pairing"
)

// Device is the extension's identity: a P-256 key plus what pairing gave it.
type Device struct {
	Key  *ecdsa.PrivateKey
	Name string
	// ID and DaemonKey are set by a successful Pair (or by the test).
	ID        string
	DaemonKey []byte
}

// NewDevice makes a device with a fresh P-256 key.
func NewDevice(name string) (*Device, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Device{Key: k, Name: name}, nil
}

// PublicKey is the 65-byte uncompressed point.
func (d *Device) PublicKey() []byte {
	b, err := d.Key.PublicKey.Bytes()
	if err != nil {
		panic(err) // a P-256 key always encodes
	}
	return b
}

// Sign signs msg as WebCrypto does: ECDSA-P256-SHA256, IEEE P1363 r||s.
func (d *Device) Sign(msg []byte) ([]byte, error) {
	return signP1363(d.Key, msg)
}

// ErrDaemonKeyMismatch: the daemon's key is not the one pinned at pairing.
var ErrDaemonKeyMismatch = errors.New("linktest: daemon key differs from the pinned key")

// ErrBadDaemonSig: the daemon's hello signature does not verify.
var ErrBadDaemonSig = errors.New("linktest: daemon signature does not verify")

// SayHello sends torii/hello with a fresh client nonce.
func (c *Client) SayHello(ctx context.Context, deviceID string) (*link.HelloResult, error) {
	c.clientNonce = pairing.NewNonce()
	var res link.HelloResult
	if err := c.Call(ctx, "torii/hello", link.HelloParams{Protocol: link.ProtocolVersion, DeviceID: deviceID,
		ClientNonce: pairing.EncodeB64(c.clientNonce)}, &res); err != nil {
		return nil, err
	}
	c.Hello = &res
	return &res, nil
}

func (c *Client) nonces() (daemonKey, cn, sn []byte, err error) {
	if c.Hello == nil {
		return nil, nil, nil, errors.New("linktest: call SayHello first")
	}
	if daemonKey, err = pairing.DecodeB64(c.Hello.DaemonKey); err != nil {
		return nil, nil, nil, err
	}
	if sn, err = pairing.DecodeB64(c.Hello.ServerNonce); err != nil {
		return nil, nil, nil, err
	}
	return daemonKey, c.clientNonce, sn, nil
}

// PairOptions tune Pair.
type PairOptions struct {
	// OTP, when set, sends otpProof = HMAC(otp, transcript) (managed launch).
	OTP string
	// RequestID; empty means a fresh UUID.
	RequestID string
	// OnCode receives the 6-digit code before the request is sent, as the
	// popup would show it.
	OnCode func(code string)
}

// PairCode computes the code for a pairing request on this connection.
func (c *Client) PairCode(d *Device, requestID string) (string, error) {
	dk, cn, sn, err := c.nonces()
	if err != nil {
		return "", err
	}
	return pairing.Code(pairing.PairTranscript(requestID, c.Origin, d.PublicKey(), dk, cn, sn)), nil
}

// Pair sends torii/pair and waits for the decision; on approval it sets
// d.ID and d.DaemonKey.
func (c *Client) Pair(ctx context.Context, d *Device, opts PairOptions) error {
	dk, cn, sn, err := c.nonces()
	if err != nil {
		return err
	}
	rid := opts.RequestID
	if rid == "" {
		rid = uuid.NewString()
	}
	tr := pairing.PairTranscript(rid, c.Origin, d.PublicKey(), dk, cn, sn)
	if opts.OnCode != nil {
		opts.OnCode(pairing.Code(tr))
	}
	p := link.PairParams{RequestID: rid, DeviceKey: pairing.EncodeB64(d.PublicKey()), DeviceName: d.Name}
	if opts.OTP != "" {
		p.OTPProof = pairing.EncodeB64(pairing.OTPProof(opts.OTP, tr))
	}
	var res link.PairResult
	if err := c.Call(ctx, "torii/pair", p, &res); err != nil {
		return err
	}
	got, err := pairing.DecodeB64(res.DaemonKey)
	if err != nil || !bytes.Equal(got, dk) {
		return ErrDaemonKeyMismatch
	}
	d.ID, d.DaemonKey = res.DeviceID, got
	if res.DaemonSig != "" {
		// Verify the daemon on this connection before signing anything.
		sig, err := pairing.DecodeB64(res.DaemonSig)
		if err != nil || !pairing.Verify(dk, pairing.AuthTranscript(pairing.RoleDaemon, c.Hello.ConnectionID, d.ID,
			c.Origin, d.PublicKey(), dk, cn, sn), sig) {
			return ErrBadDaemonSig
		}
		c.pairSig = res.DaemonSig
	}
	return nil
}

// AuthParams computes torii/auth params for this connection without
// sending them (replay tests record them).
func (c *Client) AuthParams(d *Device) (link.AuthParams, error) {
	dk, cn, sn, err := c.nonces()
	if err != nil {
		return link.AuthParams{}, err
	}
	sig, err := d.Sign(pairing.AuthTranscript(pairing.RoleDevice, c.Hello.ConnectionID, d.ID, c.Origin,
		d.PublicKey(), dk, cn, sn))
	if err != nil {
		return link.AuthParams{}, err
	}
	return link.AuthParams{DeviceID: d.ID, Sig: pairing.EncodeB64(sig)}, nil
}

// Auth checks the daemon's identity (when hello was for a paired device)
// and then sends torii/auth, as the extension does.
func (c *Client) Auth(ctx context.Context, d *Device) (*link.AuthResult, error) {
	dk, cn, sn, err := c.nonces()
	if err != nil {
		return nil, err
	}
	if d.DaemonKey != nil && !bytes.Equal(dk, d.DaemonKey) {
		return nil, ErrDaemonKeyMismatch
	}
	daemonSig := c.Hello.DaemonSig
	if daemonSig == "" {
		daemonSig = c.pairSig
	}
	if daemonSig == "" {
		// SECURITY I-6: never sign for a daemon that has not proved its key.
		return nil, ErrBadDaemonSig
	}
	{
		sig, err := pairing.DecodeB64(daemonSig)
		if err != nil || !pairing.Verify(dk, pairing.AuthTranscript(pairing.RoleDaemon, c.Hello.ConnectionID, d.ID,
			c.Origin, d.PublicKey(), dk, cn, sn), sig) {
			return nil, ErrBadDaemonSig
		}
	}
	p, err := c.AuthParams(d)
	if err != nil {
		return nil, err
	}
	var res link.AuthResult
	if err := c.Call(ctx, "torii/auth", p, &res); err != nil {
		return nil, err
	}
	return &res, nil
}

// Connect dials and authenticates a device that is already paired
// (d.ID set), verifying the daemon's signature first.
func Connect(ctx context.Context, url string, d *Device, opts *Options) (*Client, error) {
	if d.ID == "" {
		return nil, errors.New("linktest: Connect needs a paired device; use PairAndConnect")
	}
	c, err := Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	h, err := c.SayHello(ctx, d.ID)
	if err == nil && !h.Paired {
		err = fmt.Errorf("linktest: daemon does not know device %s", d.ID)
	}
	if err == nil {
		_, err = c.Auth(ctx, d)
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// PairAndConnect dials, pairs d (with pair.OTP, or waiting for a human
// decision that the test makes elsewhere) and authenticates.
func PairAndConnect(ctx context.Context, url string, d *Device, pair PairOptions, opts *Options) (*Client, error) {
	c, err := Dial(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if _, err = c.SayHello(ctx, ""); err == nil {
		if err = c.Pair(ctx, d, pair); err == nil {
			_, err = c.Auth(ctx, d)
		}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}
