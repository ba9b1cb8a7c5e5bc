package wire

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrLineTooLong ends a newline-delimited stream whose line passed its cap.
var ErrLineTooLong = errors.New("jsonrpc: line too long")

// LineFramer is newline-delimited JSON-RPC (the control socket, ACP's
// stdio): one message per line, blank lines skipped. A line over the cap is
// a FrameError that ends the stream: it cannot be resynchronised mid-line.
type LineFramer struct {
	r   *bufio.Reader
	w   io.Writer
	wmu sync.Mutex
	max int
}

// NewLineFramer reads lines of at most maxLine bytes from r and writes
// lines to w; writes are serialised, so a line is never interleaved.
func NewLineFramer(r io.Reader, w io.Writer, maxLine int) *LineFramer {
	return &LineFramer{r: bufio.NewReaderSize(r, 64<<10), w: w, max: maxLine}
}

// ReadFrame returns the next non-blank line without its newline. A final
// line without a newline still counts.
func (l *LineFramer) ReadFrame() ([]byte, error) {
	for {
		line, err := l.readLine()
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

func (l *LineFramer) readLine() ([]byte, error) {
	var buf []byte
	for {
		chunk, err := l.r.ReadSlice('\n')
		if len(buf)+len(chunk) > l.max+1 {
			return nil, &FrameError{Fatal: true, Err: fmt.Errorf("%w: over %d bytes", ErrLineTooLong, l.max),
				Reply: Errorf(CodeInvalidRequest, "request too large: a line is over %d bytes", l.max)}
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return buf[:len(buf)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return buf, nil
		default:
			return nil, err
		}
	}
}

// WriteFrame writes frame and a newline in one write.
func (l *LineFramer) WriteFrame(_ context.Context, frame []byte) error {
	b := make([]byte, 0, len(frame)+1)
	b = append(append(b, frame...), '\n')
	l.wmu.Lock()
	defer l.wmu.Unlock()
	_, err := l.w.Write(b)
	return err
}
