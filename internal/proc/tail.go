//go:build unix

package proc

import (
	"bytes"
	"strings"
	"sync"
	"unicode/utf8"
)

// headBytes of a stream are kept besides its tail: a program that fails
// says why at the start, and its last words at the end.
const headBytes = 2 << 10

// Tail keeps the first 2 KiB and the last bytes written to it (a
// process's stderr), never split inside a UTF-8 sequence. Safe for
// concurrent use.
type Tail struct {
	mu   sync.Mutex
	max  int
	head []byte
	buf  []byte
	seen int64
}

// NewTail keeps the last max bytes (4 KiB when max <= 0).
func NewTail(max int) *Tail {
	if max <= 0 {
		max = 4 << 10
	}
	return &Tail{max: max}
}

// Write keeps p, dropping the oldest bytes past twice the bound down to
// the bound (so a flood costs one copy per bound written, not per write).
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.max == 0 {
		t.max = 4 << 10
	}
	if len(t.head) < headBytes {
		t.head = append(t.head, p[:min(len(p), headBytes-len(t.head))]...)
	}
	t.seen += int64(len(p))
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return len(p), nil
	}
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	return len(p), nil
}

// String is the kept end (at most the bound), trimmed, as valid UTF-8.
func (t *Tail) String() string { return t.Last(0) }

// Last is at most the last n bytes kept (n <= 0: the bound), starting at a
// character, trimmed, as valid UTF-8.
func (t *Tail) Last(n int) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n <= 0 || n > t.max {
		n = t.max
	}
	b := t.buf
	if len(b) > n {
		b = b[len(b)-n:]
		for i := 0; i < len(b) && i < utf8.UTFMax && !utf8.RuneStart(b[0]); i++ {
			b = b[1:]
		}
	}
	return strings.TrimSpace(string(bytes.ToValidUTF8(b, []byte("\uFFFD"))))
}

// Head is the first 2 KiB written, as valid UTF-8 (a cut last character
// dropped).
func (t *Tail) Head() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.head
	if len(b) == headBytes {
		if i := lastStart(b); !utf8.FullRune(b[i:]) {
			b = b[:i]
		}
	}
	return string(bytes.ToValidUTF8(b, []byte("\uFFFD")))
}

func lastStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return len(b)
}

// Seen is how many bytes were written in all.
func (t *Tail) Seen() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.seen
}
