package framing

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"testing"
	"testing/iotest"
)

// countingReader counts the bytes handed to the Reader's buffer.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

const fuzzMaxBody = 1 << 16

// FuzzReader (FRM-4, FRM-3): arbitrary bytes never panic and end in a
// documented error; every frame returned is the bytes right after a header
// block whose Content-Length equals its size; and bodies written by Writer
// read back identically.
func FuzzReader(f *testing.F) {
	for _, s := range []string{
		"",
		frame(`{"jsonrpc":"2.0","id":1}`) + frame(""),
		"banner: hi\n" + frame("x"),
		"Content-Length: 2\r\nContent-Type: a\r\n\r\n{}",
		"content-length:1\n\nz",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 18446744073709551617\r\n\r\n",
		"Content-Length: 1\r\nContent-Length: 2\r\n\r\nab",
		frame("a") + "no colon\r\n\r\n",
		frame("a") + "no colon\r\nContent-Length: 1\r\n\r\nb",
		frame("a") + "X: 1\nCONTENT-LENGTH :  2\r\n\nhi" + frame("c"),
		"Content-Length: 5\r\n\r\nab",
		"Content-Length: 3\r\n\r\nabc\x00second body\x00",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFrames(t, data, false)
		checkFrames(t, data, true)
		checkRoundTrip(t, data)
	})
}

func checkFrames(t *testing.T, data []byte, strict bool) {
	opts := []Option{WithMaxBody(fuzzMaxBody)}
	if strict {
		opts = append(opts, WithStrictCRLF())
	}
	cr := &countingReader{r: bytes.NewReader(data)}
	r := NewReader(cr, opts...)
	prevEnd := 0
	for frames := 0; ; frames++ {
		body, err := r.Read()
		if err != nil {
			var he *HeaderError
			if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.As(err, &he) {
				t.Fatalf("undocumented error %T: %v", err, err)
			}
			if he != nil && !isHeaderKind(he.Kind) {
				t.Fatalf("HeaderError with unknown kind %v", he.Kind)
			}
			if len(r.Banner()) > maxBannerLines+1 {
				t.Fatalf("Banner grew to %d entries", len(r.Banner()))
			}
			return
		}
		if len(body) > fuzzMaxBody {
			t.Fatalf("body of %d bytes over the cap", len(body))
		}
		end := cr.n - r.br.Buffered()
		start := end - len(body)
		if start < prevEnd || !bytes.Equal(data[start:end], body) {
			t.Fatalf("frame %d: body is not the %d bytes before offset %d", frames, len(body), end)
		}
		checkHeaderBlock(t, data[prevEnd:start], len(body), frames == 0, strict)
		prevEnd = end
	}
}

// checkHeaderBlock is an independent, simple reading of the header text
// that preceded a body (with the banner, for the first frame).
func checkHeaderBlock(t *testing.T, block []byte, length int, first, strict bool) {
	lines := bytes.Split(block, []byte("\n"))
	// block ends "...\n" + blank line + "\n": the last two pieces are
	// "" and "" (or "\r").
	if len(lines) < 3 || len(lines[len(lines)-1]) != 0 || len(bytes.TrimSuffix(lines[len(lines)-2], []byte("\r"))) != 0 {
		t.Fatalf("header block %q does not end in a blank line", block)
	}
	found := false
	for i, line := range lines[:len(lines)-2] {
		if strict && !first && !bytes.HasSuffix(line, []byte("\r")) {
			t.Fatalf("strict mode accepted header line %q without CR", line)
		}
		name, value, ok := bytes.Cut(bytes.TrimSuffix(line, []byte("\r")), []byte(":"))
		if !ok {
			if !first {
				t.Fatalf("header line %d %q has no colon", i, line)
			}
			continue
		}
		if !bytes.EqualFold(bytes.Trim(name, " \t"), []byte("content-length")) {
			continue
		}
		v := bytes.Trim(value, " \t")
		if n, err := strconv.Atoi(string(v)); err == nil && n == length && v[0] != '+' {
			found = true
		}
	}
	if !found {
		t.Fatalf("no Content-Length: %d in header block %q", length, block)
	}
}

// checkRoundTrip writes pieces of data (split at NUL bytes) as frames and
// reads them back, whole and one byte at a time.
func checkRoundTrip(t *testing.T, data []byte) {
	bodies := bytes.SplitN(data, []byte{0}, 8)
	var stream bytes.Buffer
	w := NewWriter(&stream)
	var want []string
	for _, b := range bodies {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
		want = append(want, string(b))
	}
	for _, src := range []io.Reader{bytes.NewReader(stream.Bytes()), iotest.OneByteReader(bytes.NewReader(stream.Bytes()))} {
		r := NewReader(src, WithStrictCRLF())
		if got := readFrames(t, r); !equalStrings(got, want) {
			t.Fatalf("round trip: frames %q, want %q", got, want)
		}
		if len(r.Banner()) != 0 {
			t.Fatalf("round trip produced a banner %q", r.Banner())
		}
	}
}
