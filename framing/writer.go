package framing

import (
	"fmt"
	"io"
	"strconv"
	"sync"
)

// keepWriteBuf is the largest frame buffer a Writer keeps between writes;
// bigger ones are dropped so one huge message does not pin its memory.
const keepWriteBuf = 64 << 10

// Writer writes Content-Length frames. It is safe for concurrent use: frames
// are serialized, and each frame (header and body together) goes to the
// underlying writer in exactly one Write call, so a peer never sees two
// frames interleaved.
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte
	err error // sticky after a partial write
}

// NewWriter returns a Writer that frames bodies onto w.
func NewWriter(w io.Writer) *Writer {
	return &Writer{w: w}
}

// Write sends body as one frame with a Content-Length header and CRLF line
// ends. If the underlying writer fails after writing part of a frame the
// stream is corrupt, and this and every later Write return that error; a
// failure that wrote nothing is returned but does not stick.
func (w *Writer) Write(body []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	buf := append(w.buf[:0], "Content-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n\r\n"...)
	buf = append(buf, body...)
	n, err := w.w.Write(buf)
	if err == nil && n < len(buf) {
		err = io.ErrShortWrite
	}
	if cap(buf) <= keepWriteBuf {
		w.buf = buf[:0]
	} else {
		w.buf = nil
	}
	if err != nil {
		err = fmt.Errorf("framing: write frame of %d bytes: %w", len(body), err)
		if n > 0 {
			w.err = err
		}
		return err
	}
	return nil
}
