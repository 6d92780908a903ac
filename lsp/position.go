package lsp

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Position encodings a server may negotiate (LSP 3.17 PositionEncodingKind).
const (
	encUTF8  = "utf-8"
	encUTF16 = "utf-16"
	encUTF32 = "utf-32"
)

// document is a file's text split into lines for position work. Lines keep
// no line end; a trailing "\r" of a CRLF line is dropped from the line but
// counted in offsets.
type document struct {
	text   string
	starts []int // byte offset where each line starts
}

func newDocument(text string) *document {
	d := &document{text: text, starts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			d.starts = append(d.starts, i+1)
		}
	}
	return d
}

// lineCount is the number of lines a person sees: a final newline does not
// start another line.
func (d *document) lineCount() int {
	n := len(d.starts)
	if n > 1 && d.starts[n-1] == len(d.text) {
		n--
	}
	if len(d.text) == 0 {
		return 0
	}
	return n
}

// line returns line i (0-based) without its line end; "" when out of range.
func (d *document) line(i int) string {
	if i < 0 || i >= len(d.starts) {
		return ""
	}
	start := d.starts[i]
	end := len(d.text)
	if i+1 < len(d.starts) {
		end = d.starts[i+1] - 1
	}
	return strings.TrimSuffix(d.text[start:end], "\r")
}

// offset converts an LSP position in encoding enc to a byte offset in the
// text. Like the specification says, a character past the end of the line
// means the end of the line, and a line past the end means the end of text.
func (d *document) offset(p position, enc string) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("negative position %d:%d", p.Line, p.Character)
	}
	if p.Line >= len(d.starts) {
		return len(d.text), nil
	}
	line := d.line(p.Line)
	return d.starts[p.Line] + byteColumn(line, p.Character, enc), nil
}

// byteColumn converts a column in encoding enc to a byte offset in line,
// clamped to the line's length.
func byteColumn(line string, col int, enc string) int {
	if enc == encUTF8 {
		return min(col, len(line))
	}
	units := 0
	for i, r := range line {
		if units >= col {
			return i
		}
		if enc == encUTF16 && r >= 0x10000 {
			units += 2
		} else {
			units++
		}
	}
	return len(line)
}

// encodedColumn converts a byte offset in line to a column in encoding enc.
func encodedColumn(line string, byteOff int, enc string) int {
	prefix := line[:min(byteOff, len(line))]
	switch enc {
	case encUTF8:
		return len(prefix)
	case encUTF32:
		return utf8.RuneCountInString(prefix)
	default:
		n := 0
		for _, r := range prefix {
			n += utf16.RuneLen(r) // invalid bytes decode as U+FFFD: one unit
		}
		return n
	}
}

// PositionError is returned when line + symbol do not name a place in the
// file. Its text says what was wrong and quotes the line when there is one.
type PositionError struct {
	File   string // relative to the root
	Line   int    // 1-based, as given
	Symbol string
	Text   string // the line's text, when the line exists
	Lines  int    // lines in the file
	Reason string
}

func (e *PositionError) Error() string {
	switch {
	case e.Lines == 0:
		return fmt.Sprintf("%s is empty: there is no line %d to find %q on", e.File, e.Line, e.Symbol)
	case e.Line < 1 || e.Line > e.Lines:
		return fmt.Sprintf("line %d is out of range: %s has %d lines (lines are 1-based)", e.Line, e.File, e.Lines)
	case e.Symbol == "":
		return fmt.Sprintf("symbol is required: give a substring of %s:%d that names what you mean (the line is %q); the column is never guessed", e.File, e.Line, e.Text)
	default:
		return fmt.Sprintf("%q is not on %s:%d, which reads %q; pass a substring of that line (or the right line number)", e.Symbol, e.File, e.Line, e.Text)
	}
}

// findSymbol locates symbol on 1-based line of d and returns the 0-based
// line and the byte column where it starts. A match standing as a whole
// word wins over an earlier match inside a longer name ("x" in "max := x").
func findSymbol(d *document, rel string, line int, symbol string) (int, int, error) {
	n := d.lineCount()
	if line < 1 || line > n {
		return 0, 0, &PositionError{File: rel, Line: line, Symbol: symbol, Lines: n}
	}
	text := d.line(line - 1)
	if symbol == "" {
		return 0, 0, &PositionError{File: rel, Line: line, Text: text, Lines: n}
	}
	first := -1
	for from := 0; from <= len(text); {
		i := strings.Index(text[from:], symbol)
		if i < 0 {
			break
		}
		i += from
		if first < 0 {
			first = i
		}
		if wordBoundary(text, i, i+len(symbol)) {
			return line - 1, i, nil
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		from = i + max(size, 1)
	}
	if first < 0 {
		return 0, 0, &PositionError{File: rel, Line: line, Symbol: symbol, Text: text, Lines: n}
	}
	return line - 1, first, nil
}

// wordBoundary reports whether text[i:j] is not glued to identifier
// characters on either side.
func wordBoundary(text string, i, j int) bool {
	if i > 0 {
		r, _ := utf8.DecodeLastRuneInString(text[:i])
		if isIdentRune(r) {
			return false
		}
	}
	if j < len(text) {
		r, _ := utf8.DecodeRuneInString(text[j:])
		if isIdentRune(r) {
			return false
		}
	}
	return true
}

func isIdentRune(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}
