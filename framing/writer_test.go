package framing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
)

// TestWriterFormat checks the exact bytes: CRLF as the base protocol says.
func TestWriterFormat(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, b := range []string{"abc", "", `{"jsonrpc":"2.0"}`} {
		if err := w.Write([]byte(b)); err != nil {
			t.Fatal(err)
		}
	}
	want := "Content-Length: 3\r\n\r\nabc" + "Content-Length: 0\r\n\r\n" + "Content-Length: 17\r\n\r\n{\"jsonrpc\":\"2.0\"}"
	if buf.String() != want {
		t.Fatalf("wrote %q\nwant  %q", buf.String(), want)
	}
}

// callRecorder keeps every Write call separately.
type callRecorder struct {
	mu    sync.Mutex
	calls [][]byte
}

func (c *callRecorder) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, bytes.Clone(p))
	return len(p), nil
}

// TestWriterOneWritePerFrame: each frame reaches the underlying writer in a
// single Write call, even under concurrent use (FRM-1, Writer contract).
func TestWriterOneWritePerFrame(t *testing.T) {
	rec := &callRecorder{}
	w := NewWriter(rec)
	const goroutines, each = 8, 50
	writeAll(t, w, goroutines, each).Wait()
	if len(rec.calls) != goroutines*each {
		t.Fatalf("%d Write calls for %d frames", len(rec.calls), goroutines*each)
	}
	for i, call := range rec.calls {
		r := NewReader(bytes.NewReader(call), WithStrictCRLF())
		if _, err := r.Read(); err != nil {
			t.Fatalf("call %d is not a frame: %v (%q)", i, err, call)
		}
		if _, err := r.Read(); err != io.EOF {
			t.Fatalf("call %d holds more than one frame: %v", i, err)
		}
	}
}

// writeAll writes each payload(g, i) through w, from one goroutine per g;
// the group ends when all have.
func writeAll(t *testing.T, w *Writer, goroutines, each int) *sync.WaitGroup {
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if err := w.Write(payload(g, i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	return &wg
}

// payload is a distinct body per goroutine and index, of varying size.
func payload(g, i int) []byte {
	return fmt.Appendf(nil, `{"g":%d,"i":%d,"pad":%q}`, g, i, bytes.Repeat([]byte{'a' + byte(i%26)}, (g*37+i*11)%3000))
}

// TestWriterConcurrentPipe: many goroutines write through a pipe while a
// Reader decodes the other end; every frame arrives intact and each
// goroutine's frames keep their order. Run with -race.
func TestWriterConcurrentPipe(t *testing.T) {
	pr, pw := io.Pipe()
	w := NewWriter(pw)
	const goroutines, each = 16, 200
	wg := writeAll(t, w, goroutines, each)
	go func() {
		wg.Wait()
		pw.Close()
	}()

	r := NewReader(pr, WithStrictCRLF())
	next := make([]int, goroutines) // next index expected per goroutine
	n := 0
	for {
		body, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", n, err)
		}
		var g, i int
		if _, err := fmt.Sscanf(string(body), `{"g":%d,"i":%d,`, &g, &i); err != nil || g < 0 || g >= goroutines {
			t.Fatalf("frame %d is corrupt: %.80q", n, body)
		}
		if i != next[g] {
			t.Fatalf("goroutine %d: got frame %d, want %d", g, i, next[g])
		}
		if !bytes.Equal(body, payload(g, i)) {
			t.Fatalf("frame g=%d i=%d corrupted", g, i)
		}
		next[g]++
		n++
	}
	if n != goroutines*each {
		t.Fatalf("read %d frames, want %d", n, goroutines*each)
	}
}

// shortWriter writes at most limit bytes per call and fails with err then.
type shortWriter struct {
	limit int
	err   error
	calls int
}

func (s *shortWriter) Write(p []byte) (int, error) {
	s.calls++
	if len(p) <= s.limit {
		return len(p), nil
	}
	return s.limit, s.err
}

// TestWriterErrors: a partial frame corrupts the stream, so the error sticks;
// a write that wrote nothing can be retried.
func TestWriterErrors(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name   string
		sw     *shortWriter
		want   error
		sticky bool
	}{
		{"short write without error", &shortWriter{limit: 5}, io.ErrShortWrite, true},
		{"partial write with error", &shortWriter{limit: 5, err: boom}, boom, true},
		{"nothing written", &shortWriter{limit: 0, err: boom}, boom, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := NewWriter(tt.sw)
			err := w.Write([]byte("hello world"))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Write = %v, want %v", err, tt.want)
			}
			calls := tt.sw.calls
			err2 := w.Write([]byte("x"))
			if tt.sticky {
				if err2 != err || tt.sw.calls != calls {
					t.Fatalf("after a partial frame: Write = %v (calls %d→%d), want the sticky error and no write", err2, calls, tt.sw.calls)
				}
			} else if tt.sw.calls != calls+1 {
				t.Fatalf("a failed write that wrote nothing stopped later writes")
			}
		})
	}
}
