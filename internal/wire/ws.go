package wire

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/coder/websocket"
)

// WSOptions configure a WSFramer. Every field is optional.
type WSOptions struct {
	// WriteTimeout bounds one write once it has begun (0: only the
	// connection's lifetime bounds it).
	WriteTimeout time.Duration
	// Begin runs when a frame starts arriving; the func it returns runs once
	// the frame is read (a per-frame read deadline, keepalive bookkeeping).
	Begin func() (end func())
	// Binary sees a binary frame before it is refused with a parse error.
	Binary func(data []byte)
}

// WSFramer carries one JSON-RPC message per WebSocket text frame. A binary
// frame gets a parse error and the connection stays; a frame over the
// connection's read limit ends it, and the call whose id leads that frame
// learns why (SECURITY I-56).
type WSFramer struct {
	ws   *websocket.Conn
	ctx  context.Context
	opts WSOptions
}

// NewWSFramer frames ws; ctx is the connection's lifetime: reads and
// writes end with it.
func NewWSFramer(ctx context.Context, ws *websocket.Conn, opts WSOptions) *WSFramer {
	return &WSFramer{ws: ws, ctx: ctx, opts: opts}
}

// ReadFrame reads one text frame.
func (f *WSFramer) ReadFrame() ([]byte, error) {
	typ, r, err := f.ws.Reader(f.ctx)
	if err != nil {
		return nil, err
	}
	var end func()
	if f.opts.Begin != nil {
		end = f.opts.Begin()
	}
	data, err := io.ReadAll(r)
	if end != nil {
		end()
	}
	if errors.Is(err, websocket.ErrMessageTooBig) {
		return nil, &FrameError{Fatal: true, Err: err, ID: PeekID(data[:min(len(data), 512)])}
	}
	if err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		if f.opts.Binary != nil {
			f.opts.Binary(data)
		}
		return nil, &FrameError{Reply: Errorf(CodeParseError, "parse error: binary frames are not accepted; send JSON text frames")}
	}
	return data, nil
}

// WriteFrame writes one text frame. A write interrupted by cancellation
// makes coder/websocket close the whole connection without a close frame,
// so once begun a write is bounded only by WriteTimeout and the
// connection's lifetime, never by the caller's ctx.
func (f *WSFramer) WriteFrame(ctx context.Context, b []byte) error {
	var wctx context.Context
	var cancel context.CancelFunc
	if f.opts.WriteTimeout > 0 {
		wctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), f.opts.WriteTimeout)
	} else {
		wctx, cancel = context.WithCancel(context.WithoutCancel(ctx))
	}
	defer cancel()
	stop := context.AfterFunc(f.ctx, cancel)
	defer stop()
	return f.ws.Write(wctx, websocket.MessageText, b)
}
