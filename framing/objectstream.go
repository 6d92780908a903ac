package framing

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/sourcegraph/jsonrpc2"
)

// ObjectStream is a sourcegraph/jsonrpc2 ObjectStream over Content-Length
// framing: pass it to jsonrpc2.NewConn to talk to a language server. It
// replaces jsonrpc2.VSCodeObjectCodec, which tolerates no banner and no
// header-case or line-end variation, and caps nothing.
//
// As jsonrpc2.Conn requires, WriteObject may be called concurrently, while
// ReadObject is called by one goroutine.
type ObjectStream struct {
	rwc io.ReadWriteCloser
	r   *Reader
	w   *Writer
}

var _ jsonrpc2.ObjectStream = (*ObjectStream)(nil)

// NewObjectStream frames JSON-RPC objects over rwc (for a language server,
// its stdin and stdout joined). opts configure the reading side.
func NewObjectStream(rwc io.ReadWriteCloser, opts ...Option) *ObjectStream {
	return &ObjectStream{rwc: rwc, r: NewReader(rwc, opts...), w: NewWriter(rwc)}
}

// WriteObject marshals obj to JSON and writes it as one frame.
func (s *ObjectStream) WriteObject(obj any) error {
	body, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("framing: encode JSON-RPC message: %w", err)
	}
	return s.w.Write(body)
}

// ReadObject reads the next frame and unmarshals its body into v. At the end
// of the stream it returns io.EOF or io.ErrUnexpectedEOF unwrapped, which
// jsonrpc2.Conn treats as a disconnect rather than a protocol error.
func (s *ObjectStream) ReadObject(v any) error {
	body, err := s.r.Read()
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("framing: frame body is not a JSON-RPC message: %w", err)
	}
	return nil
}

// Close closes the underlying stream, which also ends a blocked ReadObject.
func (s *ObjectStream) Close() error { return s.rwc.Close() }

// Banner returns what the peer printed before its first frame; see
// [Reader.Banner]. It may be called from any goroutine at any time, e.g. to
// explain why a server never answered initialize.
func (s *ObjectStream) Banner() []string { return s.r.Banner() }
