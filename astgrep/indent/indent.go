// Package indent checks indentation as the language does where its
// tree-sitter grammar does not (Python's), so ast_edit and edit_symbol
// can refuse a change that adds a line the language refuses. It knows
// only bytes.
package indent

// Python's blocks are its indentation, which tree-sitter-python reads
// leniently: a line indented past its block, a dedent to no outer level
// or tabs mixed with spaces parse without an ERROR node, and Python
// refuses each (IndentationError, TabError). Faults applies
// Python's own rules: its tokenizer's INDENT/DEDENT stack, with columns
// counted at tab size 8 and again at tab size 1 (they must agree), and
// the parser's rule that a block follows exactly a line ending in ":".

// Fault is one line whose indentation the language refuses.
type Fault struct {
	Line int    // 1-based
	Msg  string // as Python words it
}

// Python's messages.
const (
	indentUnexpected   = "unexpected indent"
	indentUnmatched    = "unindent does not match any outer indentation level"
	indentInconsistent = "inconsistent use of tabs and spaces in indentation"
	indentExpected     = "expected an indented block"
)

// Faults returns the lines of src whose indentation language
// refuses, one entry per fault: after each it goes on as Python would if
// it had taken the line, so a later fault is counted on its own. Only
// Python has such rules; other languages return nil.
func Faults(language string, src []byte) []Fault {
	if language != "python" {
		return nil
	}
	return pythonFaults(src)
}

type indentLevel struct{ col, alt int }

func pythonFaults(src []byte) []Fault {
	var errs []Fault
	stack := []indentLevel{{}}
	depth := 0         // open brackets
	wantBlock := false // the last logical line ended with ":"
	lastColon := false // the current logical line's last token is ":"
	line := 1
	i, n := 0, len(src)
	atLineStart := true
	for i < n {
		if atLineStart {
			atLineStart = false
			col, alt := 0, 0
			j := i
		indent:
			for ; j < n; j++ {
				switch src[j] {
				case ' ':
					col++
					alt++
				case '\t':
					col = (col/8 + 1) * 8
					alt++
				case '\f':
					col, alt = 0, 0
				default:
					break indent
				}
			}
			i = j
			blank := j >= n || src[j] == '#' || src[j] == '\n' || src[j] == '\r'
			if !blank && depth == 0 {
				top := stack[len(stack)-1]
				switch {
				case col == top.col:
					if alt != top.alt {
						errs = append(errs, Fault{line, indentInconsistent})
					}
					if wantBlock {
						errs = append(errs, Fault{line, indentExpected})
					}
				case col > top.col:
					if alt <= top.alt {
						errs = append(errs, Fault{line, indentInconsistent})
					} else if !wantBlock {
						errs = append(errs, Fault{line, indentUnexpected})
					}
					stack = append(stack, indentLevel{col, alt})
				default:
					for len(stack) > 1 && col < stack[len(stack)-1].col {
						stack = stack[:len(stack)-1]
					}
					top = stack[len(stack)-1]
					switch {
					case col != top.col:
						errs = append(errs, Fault{line, indentUnmatched})
						stack = append(stack, indentLevel{col, alt})
					case alt != top.alt:
						errs = append(errs, Fault{line, indentInconsistent})
					}
					if wantBlock {
						errs = append(errs, Fault{line, indentExpected})
					}
				}
				wantBlock = false
			}
			continue
		}
		c := src[i]
		switch {
		case c == '\n' || c == '\r':
			if c == '\r' && i+1 < n && src[i+1] == '\n' {
				i++
			}
			i++
			line++
			atLineStart = true
			if depth == 0 && lastColon {
				wantBlock = true
			}
			lastColon = false
		case c == ' ' || c == '\t' || c == '\f':
			i++
		case c == '#':
			for i < n && src[i] != '\n' && src[i] != '\r' {
				i++
			}
		case c == '\\':
			// A continued line joins the next: no indentation there.
			i++
			if i < n && (src[i] == '\n' || src[i] == '\r') {
				if src[i] == '\r' && i+1 < n && src[i+1] == '\n' {
					i++
				}
				i++
				line++
			}
		case c == '"' || c == '\'':
			i, line = skipPyString(src, i, line)
			lastColon = false
		case isPyNameByte(c):
			j := i
			for j < n && isPyNameByte(src[j]) {
				j++
			}
			if j < n && (src[j] == '"' || src[j] == '\'') && isPyStringPrefix(src[i:j]) {
				i, line = skipPyString(src, j, line)
			} else {
				i = j
			}
			lastColon = false
		default:
			switch c {
			case '(', '[', '{':
				depth++
			case ')', ']', '}':
				depth = max(depth-1, 0)
			}
			lastColon = c == ':' && depth == 0
			i++
		}
	}
	// A block still wanted at the end: Python names the last line.
	if lastColon && depth == 0 || wantBlock {
		if n > 0 && (src[n-1] == '\n' || src[n-1] == '\r') {
			line--
		}
		errs = append(errs, Fault{line, indentExpected})
	}
	return errs
}

func isPyNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// isPyStringPrefix: r, b, u, f, t (3.14) and their pairs, in any case.
func isPyStringPrefix(p []byte) bool {
	if len(p) == 0 || len(p) > 2 {
		return false
	}
	seen := map[byte]bool{}
	for _, c := range p {
		c |= 0x20
		if seen[c] || c != 'r' && c != 'b' && c != 'u' && c != 'f' && c != 't' {
			return false
		}
		seen[c] = true
	}
	return len(p) == 1 || seen['r']
}

// skipPyString returns the offset just past the string literal whose
// opening quote is at i, and the line it ends on. A backslash escapes
// what follows it (a quote does not end even a raw string); a one-quote
// string ends at a line end it does not escape (Python's error, which
// tree-sitter reports).
func skipPyString(src []byte, i, line int) (int, int) {
	q := src[i]
	n := len(src)
	triple := i+2 < n && src[i+1] == q && src[i+2] == q
	if triple {
		i += 3
	} else {
		i++
	}
	for i < n {
		c := src[i]
		switch {
		case c == '\\':
			i++
			if i < n && src[i] == '\r' && i+1 < n && src[i+1] == '\n' {
				i++
			}
			if i < n && (src[i] == '\n' || src[i] == '\r') {
				line++
			}
			i++
		case c == '\n' || c == '\r':
			if !triple {
				return i, line
			}
			if c == '\r' && i+1 < n && src[i+1] == '\n' {
				i++
			}
			line++
			i++
		case c == q:
			if !triple {
				return i + 1, line
			}
			if i+2 < n && src[i+1] == q && src[i+2] == q {
				return i + 3, line
			}
			i++
		default:
			i++
		}
	}
	return n, line
}
