// Package textcut cuts text for results a model reads: never inside a
// UTF-8 sequence, with the one count every tool uses.
package textcut

import (
	"bytes"
	"strconv"
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

// HeadTail cuts s to at most n characters by leaving out its middle: the
// first two thirds of n and the last third, where a long output's start
// and its end (a failure, a summary) are. It returns what is kept of each
// end and how many characters were left out (0: s fits, head is s).
func HeadTail(s string, n int) (head, tail string, cut int) {
	total := utf8.RuneCountInString(s)
	if total <= n {
		return s, "", 0
	}
	n = max(n, 0)
	h, t := n*2/3, n-n*2/3
	head = Runes(s, h)
	i := len(s)
	for k := 0; k < t && i > len(head); k++ {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	tail = s[i:]
	return head, tail, total - utf8.RuneCountInString(head) - utf8.RuneCountInString(tail)
}

// sniffBytes is how much of a file decides whether it is binary, as git
// decides.
const sniffBytes = 8000

// Binary reports whether data (or its first 8000 bytes) holds a NUL byte:
// the test git uses, for the files no text tool reads or searches.
func Binary(data []byte) bool {
	if len(data) > sniffBytes {
		data = data[:sniffBytes]
	}
	return bytes.IndexByte(data, 0) >= 0
}
