package protocol

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// Position encodings a server may negotiate (LSP 3.17 PositionEncodingKind).
const (
	UTF8  = "utf-8"
	UTF16 = "utf-16"
	UTF32 = "utf-32"
)

// Document is a file's text split into lines for position work. Lines keep
// no line end; a trailing "\r" of a CRLF line is dropped from the line but
// counted in offsets.
type Document struct {
	text   string
	starts []int // byte offset where each line starts
}

func NewDocument(text string) *Document {
	d := &Document{text: text, starts: []int{0}}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			d.starts = append(d.starts, i+1)
		}
	}
	return d
}

// LineCount is the number of lines a person sees: a final newline does not
// start another line.
func (d *Document) LineCount() int {
	n := len(d.starts)
	if n > 1 && d.starts[n-1] == len(d.text) {
		n--
	}
	if len(d.text) == 0 {
		return 0
	}
	return n
}

// Line returns line i (0-based) without its line end; "" when out of range.
func (d *Document) Line(i int) string {
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

// Offset converts an LSP position in encoding enc to a byte offset in the
// text. Like the specification says, a character past the end of the line
// means the end of the line, and a line past the end means the end of text.
func (d *Document) Offset(p Position, enc string) (int, error) {
	if p.Line < 0 || p.Character < 0 {
		return 0, fmt.Errorf("negative position %d:%d", p.Line, p.Character)
	}
	if p.Line >= len(d.starts) {
		return len(d.text), nil
	}
	line := d.Line(p.Line)
	return d.starts[p.Line] + ByteColumn(line, p.Character, enc), nil
}

// ByteColumn converts a column in encoding enc to a byte offset in line,
// clamped to the line's length.
func ByteColumn(line string, col int, enc string) int {
	if enc == UTF8 {
		return min(col, len(line))
	}
	units := 0
	for i, r := range line {
		if units >= col {
			return i
		}
		if enc == UTF16 && r >= 0x10000 {
			units += 2
		} else {
			units++
		}
	}
	return len(line)
}

// EncodedColumn converts a byte offset in line to a column in encoding enc.
func EncodedColumn(line string, byteOff int, enc string) int {
	prefix := line[:min(byteOff, len(line))]
	switch enc {
	case UTF8:
		return len(prefix)
	case UTF32:
		return utf8.RuneCountInString(prefix)
	default:
		n := 0
		for _, r := range prefix {
			n += utf16.RuneLen(r) // invalid bytes decode as U+FFFD: one unit
		}
		return n
	}
}

// Place is what a position request points at: the text of a symbol on
// a 1-based line, and which of its occurrences on that line (1-based; 0
// means the first), since no column is ever asked for. A qualified symbol
// (pkg.Func, obj.method, Type::method, a->b) points at its last part.
type Place struct {
	Line       int
	Symbol     string
	Occurrence int
}

// PositionError is returned when a Place does not name a place in the
// file. Its text says what was wrong and quotes the line when there is one.
type PositionError struct {
	File       string // relative to the root
	Line       int    // 1-based, as given
	Symbol     string
	Occurrence int    // as given, when it was past the last one
	Count      int    // how many times Symbol is on the line, then
	Text       string // the line's text, when the line exists
	Lines      int    // lines in the file
}

func (e *PositionError) Error() string {
	switch {
	case e.Lines == 0:
		return fmt.Sprintf("%s is empty: there is no line %d to find %q on", e.File, e.Line, e.Symbol)
	case e.Line < 1 || e.Line > e.Lines:
		return fmt.Sprintf("line %d is out of range: %s has %d lines (lines are 1-based)", e.Line, e.File, e.Lines)
	case e.Symbol == "":
		return fmt.Sprintf("symbol is required: give a substring of %s:%d that names what you mean (the line is %q); the column is never guessed", e.File, e.Line, e.Text)
	case e.Occurrence < 0:
		return fmt.Sprintf("occurrence %d is not a count: occurrences are 1-based (1, the default, is the first %q on the line)", e.Occurrence, e.Symbol)
	case e.Count > 0:
		return fmt.Sprintf("occurrence %d of %q is past the last one: %s:%d, which reads %q, has %s; give occurrence 1 to %d",
			e.Occurrence, e.Symbol, e.File, e.Line, e.Text, times(e.Count), e.Count)
	default:
		return fmt.Sprintf("%q is not on %s:%d, which reads %q; pass a substring of that line (or the right line number)", e.Symbol, e.File, e.Line, e.Text)
	}
}

func times(n int) string {
	if n == 1 {
		return "it once"
	}
	return fmt.Sprintf("it %d times", n)
}

// qualifiedSymbol is a name with qualifiers: parts of identifier
// characters joined by ".", "?.", "::" or "->".
var qualifiedSymbol = regexp.MustCompile(`^[\p{L}\p{N}_$]+(?:(?:\?\.|\.|::|->)[\p{L}\p{N}_$]+)+$`)

// lastPart is the offset in a qualified symbol of its last part, and the
// part; (0, symbol) for any other symbol.
func lastPart(symbol string) (int, string) {
	if !qualifiedSymbol.MatchString(symbol) {
		return 0, symbol
	}
	i := strings.LastIndexAny(symbol, ".:>")
	return i + 1, symbol[i+1:]
}

// FindSymbol locates p on d and returns the 0-based line, the byte column
// where the symbol (for a qualified one, its last part) starts, and that
// text. The occurrences counted are the matches standing as whole words,
// or every match when none does ("x" in "max := x" is the second x's). A
// qualified symbol not on the line as written is looked for as its last
// part alone ("Cart.Total" on "func (c *Cart) Total()").
func FindSymbol(d *Document, rel string, p Place) (int, int, string, error) {
	n := d.LineCount()
	if p.Line < 1 || p.Line > n {
		return 0, 0, "", &PositionError{File: rel, Line: p.Line, Symbol: p.Symbol, Lines: n}
	}
	text := d.Line(p.Line - 1)
	fail := &PositionError{File: rel, Line: p.Line, Symbol: p.Symbol, Text: text, Lines: n}
	if p.Symbol == "" {
		return 0, 0, "", fail
	}
	if p.Occurrence < 0 {
		fail.Occurrence = p.Occurrence
		return 0, 0, "", fail
	}
	nth := max(p.Occurrence, 1)
	off, part := lastPart(p.Symbol)
	at := occurrences(text, p.Symbol)
	if len(at) == 0 && off > 0 {
		at, off = occurrences(text, part), 0
	}
	switch {
	case len(at) == 0:
		return 0, 0, "", fail
	case nth > len(at):
		fail.Occurrence, fail.Count = nth, len(at)
		return 0, 0, "", fail
	}
	return p.Line - 1, at[nth-1] + off, part, nil
}

// occurrences are the byte offsets of symbol in text that stand as whole
// words, or of every match when none does.
func occurrences(text, symbol string) []int {
	var all, words []int
	for from := 0; from <= len(text); {
		i := strings.Index(text[from:], symbol)
		if i < 0 {
			break
		}
		i += from
		all = append(all, i)
		if wordBoundary(text, i, i+len(symbol)) {
			words = append(words, i)
		}
		_, size := utf8.DecodeRuneInString(text[i:])
		from = i + max(size, 1)
	}
	if len(words) > 0 {
		return words
	}
	return all
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

// PlaceAt is the Place of the name that starts at byte col (0-based) of
// line (1-based), whose text is text: the occurrence counted as FindSymbol
// counts it. ok is false when name does not start there.
func PlaceAt(text string, line, col int, name string) (Place, bool) {
	if name == "" {
		return Place{}, false
	}
	for i, at := range occurrences(text, name) {
		if at == col {
			return Place{Line: line, Symbol: name, Occurrence: i + 1}, true
		}
	}
	return Place{}, false
}
