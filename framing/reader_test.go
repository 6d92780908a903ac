package framing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// frame builds one well-formed frame with CRLF line ends.
func frame(body string) string {
	return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body)
}

// feeds are the ways a test stream is delivered to the Reader: whole, one
// byte per Read (FRM-2: one message split across many reads), half reads,
// and data returned together with io.EOF.
var feeds = []struct {
	name string
	wrap func(io.Reader) io.Reader
}{
	{"whole", func(r io.Reader) io.Reader { return r }},
	{"onebyte", iotest.OneByteReader},
	{"half", iotest.HalfReader},
	{"dataerr", iotest.DataErrReader},
}

// readAll reads frames until an error and returns the bodies and that error.
func readAll(r *Reader) ([]string, error) {
	var got []string
	for {
		body, err := r.Read()
		if err != nil {
			return got, err
		}
		got = append(got, string(body))
	}
}

// readFrames reads r to its end, failing t unless that end is io.EOF.
func readFrames(t *testing.T, r *Reader) []string {
	t.Helper()
	got, err := readAll(r)
	if err != io.EOF {
		t.Fatalf("ended with %v, want io.EOF (frames so far %q)", err, got)
	}
	return got
}

// TestReaderFrames covers FRM-2: what a real peer sends must decode.
func TestReaderFrames(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		opts   []Option
		want   []string
		banner []string
	}{
		{name: "empty stream", in: "", want: nil},
		{name: "one frame", in: frame(`{"a":1}`), want: []string{`{"a":1}`}},
		{name: "several frames in one read", in: frame("one") + frame("two") + frame("three"),
			want: []string{"one", "two", "three"}},
		{name: "zero-length body", in: frame("") + frame("x"), want: []string{"", "x"}},
		{name: "content-type ignored",
			in:   "Content-Length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}",
			want: []string{"{}"}},
		{name: "content-type after length in later frame",
			in:   frame("a") + "Content-Type: x\r\nContent-Length: 1\r\n\r\nb",
			want: []string{"a", "b"}},
		{name: "unknown header ignored", in: "Content-Length: 1\r\nX-Whatever: 7\r\n\r\nz", want: []string{"z"}},
		{name: "header name case-insensitive", in: "content-length: 3\r\n\r\nabc" + "CONTENT-LENGTH: 1\r\n\r\nd",
			want: []string{"abc", "d"}},
		{name: "whitespace around value and name", in: "Content-Length :\t 3 \r\n\r\nabc", want: []string{"abc"}},
		{name: "no space after colon", in: "Content-Length:3\r\n\r\nabc", want: []string{"abc"}},
		{name: "identical duplicate length", in: "Content-Length: 1\r\nContent-Length: 1\r\n\r\nq", want: []string{"q"}},
		{name: "body containing header-like text and CRLFs",
			in:   frame("Content-Length: 99\r\n\r\nnot a header"),
			want: []string{"Content-Length: 99\r\n\r\nnot a header"}},
		{name: "bare LF tolerated", in: "Content-Length: 2\n\nhi" + "Content-Length: 1\r\n\nx",
			want: []string{"hi", "x"}},
		{name: "banner lines skipped",
			in:     "Starting server v1.2\nlistening: stdio\r\n\n" + frame("{}"),
			want:   []string{"{}"},
			banner: []string{"Starting server v1.2", "listening: stdio"}},
		{name: "banner with colon and content-type before first length",
			in:     "INFO: ready\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}",
			want:   []string{"{}"},
			banner: []string{"INFO: ready", "Content-Type: application/json"}},
		{name: "banner then several frames", in: "hello\n" + frame("1") + frame("22"),
			want: []string{"1", "22"}, banner: []string{"hello"}},
		{name: "banner only, then clean end", in: "server crashed: no config\n",
			want: nil, banner: []string{"server crashed: no config"}},
		{name: "banner without final newline", in: "oops", want: nil, banner: []string{"oops"}},
		{name: "banner line mentioning content-length mid-line",
			in:     "expected a Content-Length: header\n" + frame("ok"),
			want:   []string{"ok"},
			banner: []string{"expected a Content-Length: header"}},
		{name: "strict CRLF accepts CRLF", opts: []Option{WithStrictCRLF()}, in: frame("s"), want: []string{"s"}},
		{name: "strict CRLF still skips LF banner", opts: []Option{WithStrictCRLF()}, in: "hi\n" + frame("s"),
			want: []string{"s"}, banner: []string{"hi"}},
		{name: "body exactly at cap", opts: []Option{WithMaxBody(4)}, in: frame("abcd"), want: []string{"abcd"}},
		// Frames after the first take the fast path when their header is
		// exactly "Content-Length: N\r\n\r\n"; these sit on its edges.
		{name: "later frame at cap", opts: []Option{WithMaxBody(4)}, in: frame("a") + frame("abcd"), want: []string{"a", "abcd"}},
		{name: "later frame with leading zeros past fast-path digits",
			in: frame("a") + "Content-Length: 0000000000005\r\n\r\nhello", want: []string{"a", "hello"}},
		{name: "later frame with two spaces", in: frame("a") + "Content-Length:  2\r\n\r\nhi", want: []string{"a", "hi"}},
		{name: "later frame with extra header", in: frame("a") + "Content-Length: 2\r\nContent-Type: t\r\n\r\nhi",
			want: []string{"a", "hi"}},
	}
	for _, tt := range tests {
		for _, feed := range feeds {
			t.Run(tt.name+"/"+feed.name, func(t *testing.T) {
				r := NewReader(feed.wrap(strings.NewReader(tt.in)), tt.opts...)
				if got := readFrames(t, r); !equalStrings(got, tt.want) {
					t.Errorf("frames = %q, want %q", got, tt.want)
				}
				if b := r.Banner(); !equalStrings(b, tt.banner) {
					t.Errorf("Banner() = %q, want %q", b, tt.banner)
				}
			})
		}
	}
}

// TestReaderErrors covers FRM-3: bad input gives a typed error, never a
// panic, hang or silent skip.
func TestReaderErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		opts []Option
		want error // matched with errors.Is
		// frames expected before the error
		frames []string
	}{
		{name: "missing content-length", in: frame("a") + "Content-Type: x\r\n\r\n{}", want: ErrMissingLength, frames: []string{"a"}},
		{name: "empty header block", in: frame("a") + "\r\n", want: ErrMissingLength, frames: []string{"a"}},
		{name: "negative length", in: "Content-Length: -5\r\n\r\nabc", want: ErrNegativeLength},
		{name: "negative zero", in: "Content-Length: -0\r\n\r\n", want: ErrNegativeLength},
		{name: "non-numeric length", in: "Content-Length: ten\r\n\r\n0123456789", want: ErrBadLength},
		{name: "empty length", in: "Content-Length: \r\n\r\n", want: ErrBadLength},
		{name: "lone minus", in: "Content-Length: -\r\n\r\n", want: ErrBadLength},
		{name: "plus sign", in: "Content-Length: +3\r\n\r\nabc", want: ErrBadLength},
		{name: "hex length", in: "Content-Length: 0x10\r\n\r\n", want: ErrBadLength},
		{name: "digits then junk", in: "Content-Length: 12abc\r\n\r\n", want: ErrBadLength},
		{name: "huge number then junk is non-numeric", in: "Content-Length: 99999999999999999999999x\r\n\r\n", want: ErrBadLength},
		{name: "space inside number", in: "Content-Length: 1 2\r\n\r\n", want: ErrBadLength},
		{name: "conflicting lengths", in: "Content-Length: 1\r\nContent-Length: 2\r\n\r\nab", want: ErrConflictingLength},
		{name: "no colon after first frame", in: frame("a") + "garbage line\r\n\r\n", want: ErrNoColon, frames: []string{"a"}},
		{name: "no colon inside header block", in: "Content-Length: 2\r\nnot a header\r\n\r\n{}", want: ErrNoColon},
		{name: "over cap", opts: []Option{WithMaxBody(4)}, in: frame("abcde"), want: ErrTooLarge},
		{name: "later frame over cap", opts: []Option{WithMaxBody(4)}, in: frame("a") + frame("abcde"), want: ErrTooLarge,
			frames: []string{"a"}},
		{name: "later frame length 10 digits over cap", in: frame("a") + "Content-Length: 1234567890\r\n\r\n", want: ErrTooLarge,
			frames: []string{"a"}},
		{name: "later frame non-numeric", in: frame("a") + "Content-Length: 12x\r\n\r\n", want: ErrBadLength, frames: []string{"a"}},
		{name: "over default cap", in: "Content-Length: 67108865\r\n\r\n", want: ErrTooLarge},
		{name: "length overflowing int64", in: "Content-Length: 99999999999999999999999999999\r\n\r\n", want: ErrTooLarge},
		{name: "header line too long", in: frame("a") + "X-Pad: " + strings.Repeat("p", 5000) + "\r\nContent-Length: 1\r\n\r\nb",
			want: ErrHeaderTooLong, frames: []string{"a"}},
		{name: "header line longer than buffer", in: frame("a") + "X-Pad: " + strings.Repeat("p", 100000) + "\r\n\r\n",
			want: ErrHeaderTooLong, frames: []string{"a"}},
		{name: "header block too long", in: frame("a") + strings.Repeat("X-Pad: "+strings.Repeat("p", 1000)+"\r\n", 70),
			want: ErrHeaderTooLong, frames: []string{"a"}},
		{name: "content-length line too long in preamble", in: "Content-Length: 1" + strings.Repeat(" ", 5000) + "\r\n\r\nx",
			want: ErrHeaderTooLong},
		{name: "strict rejects bare LF", opts: []Option{WithStrictCRLF()}, in: "Content-Length: 2\n\nhi", want: ErrBareLF},
		{name: "strict rejects bare LF on blank line", opts: []Option{WithStrictCRLF()}, in: frame("a") + "Content-Length: 1\r\n\nx",
			want: ErrBareLF, frames: []string{"a"}},
		{name: "endless banner", in: strings.Repeat("log line: nothing to see here\n", 40000), want: ErrNoFrame},
		{name: "endless banner in one line", in: strings.Repeat("x", 2<<20), want: ErrNoFrame},
		{name: "truncated body", in: "Content-Length: 10\r\n\r\n01234", want: io.ErrUnexpectedEOF},
		{name: "no body at all", in: "Content-Length: 10\r\n\r\n", want: io.ErrUnexpectedEOF},
		{name: "truncated header block", in: "Content-Length: 10\r\n", want: io.ErrUnexpectedEOF},
		{name: "truncated header line in preamble", in: "Content-Length: 10", want: io.ErrUnexpectedEOF},
		{name: "truncated header line after frame", in: frame("a") + "Content-Le", want: io.ErrUnexpectedEOF, frames: []string{"a"}},
	}
	for _, tt := range tests {
		for _, feed := range feeds {
			t.Run(tt.name+"/"+feed.name, func(t *testing.T) {
				r := NewReader(feed.wrap(strings.NewReader(tt.in)), tt.opts...)
				got, err := readAll(r)
				if !errors.Is(err, tt.want) {
					t.Fatalf("error = %v, want %v", err, tt.want)
				}
				if !equalStrings(got, tt.frames) {
					t.Errorf("frames before error = %q, want %q", got, tt.frames)
				}
				var he *HeaderError
				if isHeaderKind(tt.want) {
					if !errors.As(err, &he) {
						t.Fatalf("error %T is not a *HeaderError", err)
					}
					if he.Kind != tt.want {
						t.Errorf("Kind = %v, want %v", he.Kind, tt.want)
					}
					if len(he.Line) > 83 {
						t.Errorf("HeaderError.Line not bounded: %d bytes", len(he.Line))
					}
				} else if err != tt.want {
					// io sentinels are returned bare: jsonrpc2.Conn compares with ==.
					t.Errorf("error = %#v, want bare %v", err, tt.want)
				}
				// Sticky: the stream position is lost, so the error repeats.
				if _, err2 := r.Read(); err2 != err {
					t.Errorf("second Read = %v, want the same error %v", err2, err)
				}
			})
		}
	}
}

func isHeaderKind(err error) bool {
	switch err {
	case ErrMissingLength, ErrNegativeLength, ErrBadLength, ErrConflictingLength,
		ErrNoColon, ErrTooLarge, ErrHeaderTooLong, ErrBareLF, ErrNoFrame:
		return true
	}
	return false
}

// TestHeaderErrorMessages checks that error text names the problem and what
// to do (FRM-3).
func TestHeaderErrorMessages(t *testing.T) {
	r := NewReader(strings.NewReader(frame("abcdef")), WithMaxBody(5))
	_, err := r.Read()
	for _, want := range []string{"over the cap", "Content-Length: 6", "cap is 5 bytes", "WithMaxBody"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	r = NewReader(strings.NewReader(strings.Repeat("Usage: server [flags]\n", 60000)))
	_, err = r.Read()
	if !strings.Contains(err.Error(), "--stdio") || !strings.Contains(err.Error(), "Banner") {
		t.Errorf("no-frame error %q gives no hint", err)
	}
}

// TestReaderNoAllocationOfClaimedSize covers FRM-3: neither a length over the
// cap nor a large length under it that the peer never delivers may cost the
// claimed memory.
func TestReaderNoAllocationOfClaimedSize(t *testing.T) {
	measure := func(in string, opts ...Option) (uint64, error) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := NewReader(strings.NewReader(in), opts...).Read()
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, err
	}
	const limit = 4 << 20 // Reader buffer + first growth chunk, with slack

	alloc, err := measure("Content-Length: 1099511627776\r\n\r\nxx", WithMaxBody(math.MaxInt))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
	if alloc > limit {
		t.Errorf("rejecting a 1 TiB claim allocated %d bytes", alloc)
	}

	alloc, err = measure("Content-Length: 50000000\r\n\r\nonly a few bytes")
	if err != io.ErrUnexpectedEOF {
		t.Fatalf("err = %v, want io.ErrUnexpectedEOF", err)
	}
	if alloc > limit {
		t.Errorf("a 50 MB claim with 16 bytes delivered allocated %d bytes", alloc)
	}
}

// TestReaderLargeBody checks bodies above the growth chunk arrive intact.
func TestReaderLargeBody(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), (3*growChunk+7)/16+1)
	var stream bytes.Buffer
	w := NewWriter(&stream)
	for _, b := range [][]byte{big, []byte("after"), big[:growChunk+1]} {
		if err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	for _, feed := range feeds[:3] {
		t.Run(feed.name, func(t *testing.T) {
			r := NewReader(feed.wrap(bytes.NewReader(stream.Bytes())))
			for i, want := range [][]byte{big, []byte("after"), big[:growChunk+1]} {
				got, err := r.Read()
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("frame %d: %d bytes differ from the %d written", i, len(got), len(want))
				}
			}
			if _, err := r.Read(); err != io.EOF {
				t.Fatalf("after last frame: %v, want io.EOF", err)
			}
		})
	}
}

// TestWithMaxBody checks the documented clamping.
func TestWithMaxBody(t *testing.T) {
	for _, tt := range []struct{ in, want int }{
		{0, DefaultMaxBody}, {-1, DefaultMaxBody}, {1, 1}, {math.MaxInt, maxBodyLimit},
	} {
		if got := newConfig([]Option{WithMaxBody(tt.in)}).maxBody; got != tt.want {
			t.Errorf("WithMaxBody(%d) → %d, want %d", tt.in, got, tt.want)
		}
	}
}

// TestReaderBodiesAreFresh checks a returned body is not overwritten by later
// reads (the caller owns it).
func TestReaderBodiesAreFresh(t *testing.T) {
	r := NewReader(strings.NewReader(frame("first") + frame("SECOND") + frame("third")))
	a, _ := r.Read()
	b, _ := r.Read()
	c, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if string(a) != "first" || string(b) != "SECOND" || string(c) != "third" {
		t.Fatalf("bodies changed under the caller: %q %q %q", a, b, c)
	}
}

// TestBannerBounded checks Banner keeps a bounded, readable summary.
func TestBannerBounded(t *testing.T) {
	var in strings.Builder
	for i := range 100 {
		fmt.Fprintf(&in, "line %d: %s\n", i, strings.Repeat("x", 400))
	}
	in.WriteString("\xff\xfe invalid utf-8\n")
	in.WriteString(strings.Repeat("L", 200000) + "\n") // longer than the read buffer
	in.WriteString(frame("{}"))
	r := NewReader(strings.NewReader(in.String()))
	body, err := r.Read()
	if err != nil || string(body) != "{}" {
		t.Fatalf("Read = %q, %v", body, err)
	}
	b := r.Banner()
	if len(b) != maxBannerLines+1 {
		t.Fatalf("Banner has %d entries, want %d", len(b), maxBannerLines+1)
	}
	if !strings.HasPrefix(b[0], "line 0: xxx") || !strings.HasSuffix(b[0], "...") || len(b[0]) != maxBannerLine+3 {
		t.Errorf("first banner line not truncated as documented: %q", b[0])
	}
	if last := b[len(b)-1]; last != "... (70 more lines)" {
		t.Errorf("last banner entry = %q", last)
	}
	b[0] = "changed"
	if r.Banner()[0] == "changed" {
		t.Error("Banner returned its internal slice")
	}
}

// TestBannerWhileReading: Banner may be called from another goroutine while
// Read is still skipping banner lines (a status report about a server that
// has not answered yet). Run with -race.
func TestBannerWhileReading(t *testing.T) {
	pr, pw := io.Pipe()
	r := NewReader(pr)
	done := make(chan []byte)
	go func() {
		body, err := r.Read()
		if err != nil {
			t.Error(err)
		}
		done <- body
	}()
	for i := range 5 {
		fmt.Fprintf(pw, "starting step %d\n", i)
		if b := r.Banner(); len(b) > i+1 {
			t.Fatalf("Banner() = %q after %d lines", b, i+1)
		}
	}
	io.WriteString(pw, frame("{}"))
	if body := <-done; string(body) != "{}" {
		t.Fatalf("body = %q", body)
	}
	if b := r.Banner(); len(b) != 5 || b[4] != "starting step 4" {
		t.Fatalf("Banner() = %q", b)
	}
	pw.Close()
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
