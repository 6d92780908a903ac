package framing

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Reader yields the bodies of Content-Length frames from a byte stream.
// It is not safe for concurrent use: one goroutine reads. Only Banner may be
// called from other goroutines, also while Read is running.
type Reader struct {
	br      *bufio.Reader
	maxBody int
	strict  bool

	started     bool // the first frame's Content-Length line was seen
	bannerBytes int

	bannerMu   sync.Mutex // Banner is read while the reader is still skipping
	banner     []string
	bannerMore int // banner lines seen but not kept

	err error // sticky
}

// NewReader returns a Reader over r. It buffers r; nothing else may read
// from r afterwards.
func NewReader(r io.Reader, opts ...Option) *Reader {
	c := newConfig(opts)
	return &Reader{
		br:      bufio.NewReaderSize(r, readBufSize),
		maxBody: c.maxBody,
		strict:  c.strict,
	}
}

// Read returns the body of the next frame, in a new slice the caller owns.
// It returns io.EOF when the stream ends cleanly between frames (or before
// any frame), io.ErrUnexpectedEOF when it ends inside a frame, a
// [*HeaderError] for a malformed header, or the underlying reader's error.
// After an error every later call returns the same error.
func (r *Reader) Read() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	body, err := r.next()
	if err != nil {
		r.err = err
		return nil, err
	}
	return body, nil
}

// Banner returns the non-frame lines skipped before the first frame, without
// their line ends, for diagnostics. It keeps at most 32 lines of at most 256
// bytes each; a last entry says how many more lines were dropped.
func (r *Reader) Banner() []string {
	r.bannerMu.Lock()
	defer r.bannerMu.Unlock()
	out := make([]string, len(r.banner), len(r.banner)+1)
	copy(out, r.banner)
	if r.bannerMore > 0 {
		out = append(out, fmt.Sprintf("... (%d more lines)", r.bannerMore))
	}
	return out
}

// next reads one frame. The header is parsed in place in the bufio buffer,
// so the only allocation is the body.
func (r *Reader) next() ([]byte, error) {
	var (
		line    []byte
		err     error
		pending bool // line holds the first header line already
	)
	if r.started {
		if n, ok := r.fastHeader(); ok {
			return r.readBody(n)
		}
	} else {
		line, err = r.skipBanner()
		if err != nil {
			return nil, err
		}
		r.started = true
		pending = true
	}

	length := -1
	blockBytes := 0
	for first := true; ; first = false {
		if !pending {
			line, err = r.readHeaderLine(first)
			if err != nil {
				return nil, err
			}
		}
		pending = false
		if len(line) == 0 {
			break // blank line: end of header block
		}
		blockBytes += len(line)
		if blockBytes > maxHeaderBlock {
			return nil, newHeaderError(ErrHeaderTooLong, nil, 0)
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return nil, newHeaderError(ErrNoColon, line, 0)
		}
		if !bytes.EqualFold(trimSpace(line[:colon]), contentLength) {
			continue // Content-Type and others: ignored
		}
		n, kind := parseLength(line[colon+1:], r.maxBody)
		if kind != nil {
			return nil, newHeaderError(kind, line, r.maxBody)
		}
		if length >= 0 && n != length {
			return nil, newHeaderError(ErrConflictingLength, line, 0)
		}
		length = n
	}
	if length < 0 {
		return nil, newHeaderError(ErrMissingLength, nil, 0)
	}
	return r.readBody(length)
}

var contentLength = []byte("Content-Length")

// fastHeader consumes the header block if it is exactly the one Writer,
// go-dap and vscode-jsonrpc write, "Content-Length: N\r\n\r\n", already in
// the buffer, with N within the cap. Anything else, including every error
// case, is left to the general parser.
func (r *Reader) fastHeader() (int, bool) {
	const prefix = "Content-Length: "
	buf, _ := r.br.Peek(r.br.Buffered()) // no fill: Buffered bytes are there
	if len(buf) < len(prefix)+5 || string(buf[:len(prefix)]) != prefix {
		return 0, false
	}
	i, n := len(prefix), 0
	for ; i < len(buf) && i < len(prefix)+9 && '0' <= buf[i] && buf[i] <= '9'; i++ {
		n = n*10 + int(buf[i]-'0') // at most 9 digits: fits a 32-bit int
	}
	if i == len(prefix) || n > r.maxBody || len(buf) < i+4 || string(buf[i:i+4]) != "\r\n\r\n" {
		return 0, false
	}
	_, _ = r.br.Discard(i + 4)
	return n, true
}

// readHeaderLine returns one header line without its line end. The slice
// aliases the bufio buffer and is valid until the next read. atStart says
// whether a clean io.EOF is possible here (nothing of the frame read yet).
func (r *Reader) readHeaderLine(atStart bool) ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	switch {
	case err == nil:
	case err == bufio.ErrBufferFull:
		return nil, newHeaderError(ErrHeaderTooLong, line, 0)
	case err == io.EOF:
		if atStart && len(line) == 0 {
			return nil, io.EOF
		}
		return nil, io.ErrUnexpectedEOF
	default:
		return nil, err
	}
	if len(line) > maxHeaderLine+2 {
		return nil, newHeaderError(ErrHeaderTooLong, line, 0)
	}
	line, crlf := trimEOL(line)
	if !crlf && r.strict {
		return nil, newHeaderError(ErrBareLF, line, 0)
	}
	return line, nil
}

// skipBanner reads lines until the first Content-Length line, keeping the
// others for Banner. It returns that line without its line end, aliasing the
// bufio buffer.
func (r *Reader) skipBanner() ([]byte, error) {
	inLong := false // inside a line longer than the buffer
	for {
		line, err := r.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			if !inLong {
				r.keepBanner(line)
			}
			inLong = true
		case err == io.EOF:
			if len(line) == 0 {
				return nil, io.EOF
			}
			if !inLong && isContentLengthLine(line) {
				return nil, io.ErrUnexpectedEOF
			}
			if !inLong {
				r.keepBanner(line)
			}
			return nil, io.EOF
		case err != nil:
			return nil, err
		case inLong:
			inLong = false // tail of a long line
		default:
			stripped, crlf := trimEOL(line)
			if isContentLengthLine(stripped) {
				if !crlf && r.strict {
					return nil, newHeaderError(ErrBareLF, stripped, 0)
				}
				if len(line) > maxHeaderLine+2 {
					return nil, newHeaderError(ErrHeaderTooLong, stripped, 0)
				}
				return stripped, nil
			}
			r.keepBanner(stripped)
		}
		r.bannerBytes += len(line)
		if r.bannerBytes > maxBannerBytes {
			return nil, newHeaderError(ErrNoFrame, nil, 0)
		}
	}
}

// keepBanner records a banner line within the bounds Banner documents.
// Blank lines are not kept.
func (r *Reader) keepBanner(line []byte) {
	line, _ = trimEOL(line)
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	r.bannerMu.Lock()
	defer r.bannerMu.Unlock()
	if len(r.banner) >= maxBannerLines {
		r.bannerMore++
		return
	}
	suffix := ""
	if len(line) > maxBannerLine {
		line, suffix = line[:maxBannerLine], "..."
	}
	r.banner = append(r.banner, strings.ToValidUTF8(string(line), "\uFFFD")+suffix)
}

// readBody reads exactly n body bytes into a new slice.
//
// A body that fits the read buffer is copied out of it with append, which
// (unlike make) does not first zero memory it is about to overwrite. A bigger
// body is read mostly straight from the source by bufio; above growChunk it
// grows as bytes arrive, so a peer that claims a large length and then stops
// costs memory for what it sent, not for what it claimed.
func (r *Reader) readBody(n int) ([]byte, error) {
	if n == 0 {
		return []byte{}, nil
	}
	if n <= readBufSize {
		p, err := r.br.Peek(n)
		if err != nil {
			return nil, bodyErr(err)
		}
		body := append([]byte(nil), p...)
		_, _ = r.br.Discard(n) // cannot fail: n bytes are buffered
		return body, nil
	}
	body := make([]byte, 0, min(n, growChunk))
	for len(body) < n {
		if len(body) == cap(body) {
			grown := make([]byte, len(body), min(2*cap(body), n))
			copy(grown, body)
			body = grown
		}
		m, err := io.ReadFull(r.br, body[len(body):cap(body)])
		body = body[:len(body)+m]
		if err != nil {
			return nil, bodyErr(err)
		}
	}
	return body, nil
}

// bodyErr maps io.ReadFull's io.EOF (nothing read) to io.ErrUnexpectedEOF:
// inside a body any end of stream is unexpected.
func bodyErr(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// isContentLengthLine reports whether line's name part is Content-Length.
func isContentLengthLine(line []byte) bool {
	colon := bytes.IndexByte(line, ':')
	return colon >= 0 && bytes.EqualFold(trimSpace(line[:colon]), contentLength)
}

// trimEOL strips a trailing LF or CRLF; crlf reports whether a CR was there.
func trimEOL(line []byte) (out []byte, crlf bool) {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		return line[:n-1], true
	}
	return line, false
}

// trimSpace trims spaces and tabs (header whitespace), without allocating.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// parseLength parses a Content-Length value. It never overflows: once the
// value passes limit it only checks that the rest are digits.
func parseLength(v []byte, limit int) (int, error) {
	v = trimSpace(v)
	if len(v) == 0 {
		return 0, ErrBadLength
	}
	negative := v[0] == '-'
	if negative {
		v = v[1:]
		if len(v) == 0 {
			return 0, ErrBadLength
		}
	}
	n, over := 0, false
	for _, c := range v {
		if c < '0' || c > '9' {
			return 0, ErrBadLength
		}
		d := int(c - '0')
		if !over && (n > limit/10 || n*10 > limit-d) {
			over = true
		}
		if !over {
			n = n*10 + d
		}
	}
	switch {
	case negative:
		return 0, ErrNegativeLength
	case over:
		return 0, ErrTooLarge
	}
	return n, nil
}
