// Package textcut cuts text for results a model reads: never inside a
// UTF-8 sequence, with the one count every tool uses.
package textcut

import (
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
