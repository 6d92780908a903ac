// Package textcut cuts text for results a model reads: never inside a
// UTF-8 sequence, with the one count every tool uses.
package textcut

import (
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Runes returns the first n characters of s.
func Runes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	for i := range s {
		if n == 0 {
			return s[:i]
		}
		n--
	}
	return s
}

// Bytes returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func Bytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut]
}

// Ellipsis returns s cut to n characters with "…" appended when it was
// cut, for quoting a value inside a sentence.
func Ellipsis(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return Runes(s, max(n-1, 0)) + "…"
}

// Count says n with the right form of its noun: "1 match", "3 matches".
func Count(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// BytesEllipsis returns s cut to at most n bytes on a character boundary,
// with "…" appended when it was cut.
func BytesEllipsis(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Bytes(s, n) + "…"
}

// Tail is a writer that keeps the last bytes written to it (a process's
// stderr, for an error message). Safe for concurrent use.
type Tail struct {
	mu sync.Mutex
	b  []byte
}

// Write keeps p, dropping the oldest bytes past 8 KiB down to 4 KiB.
func (t *Tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = append(t.b[:0:0], t.b[len(t.b)-4<<10:]...)
	}
	return len(p), nil
}

// String is what was kept, trimmed, as valid UTF-8.
func (t *Tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(t.b), "\uFFFD"))
}
