package astedit

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep"
)

// template is a parsed rewrite: literal text and metavariable references.
type template struct {
	parts []tpart
}

type tpart struct {
	lit  string
	name string // "$X" or "$$$X"; empty for literal text
}

// parseTemplate splits a rewrite with the pattern language's metavariable
// rules (astgrep.ScanMetavariables): `$NAME` and `$$$NAME`, names upper
// case; anything else is text. Anonymous names cannot be substituted.
func parseTemplate(src string) (*template, error) {
	if len(src) > astgrep.MaxPatternBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the limit of %d bytes (as for a pattern); rewrite a smaller fragment, or make a large change with write",
			ErrRewriteTooLarge, len(src), astgrep.MaxPatternBytes)
	}
	t := &template{}
	toks := astgrep.ScanMetavariables(src)
	refs := 0
	for _, tok := range toks {
		if tok.Var {
			refs++
		}
	}
	if refs > astgrep.MaxPatternMetavariables {
		return nil, fmt.Errorf("%w: it uses metavariables %d times, over the limit of %d (as for a pattern)",
			ErrRewriteTooLarge, refs, astgrep.MaxPatternMetavariables)
	}
	for _, tok := range toks {
		switch {
		case !tok.Var:
			t.parts = append(t.parts, tpart{lit: tok.Text})
		case tok.Multi:
			if tok.Name == "" || tok.Name[0] == '_' {
				return nil, &TemplateError{Name: "$$$" + tok.Name}
			}
			t.parts = append(t.parts, tpart{name: "$$$" + tok.Name})
		default:
			if tok.Name[0] == '_' {
				return nil, &TemplateError{Name: "$" + tok.Name}
			}
			t.parts = append(t.parts, tpart{name: "$" + tok.Name})
		}
	}
	return t, nil
}

// names lists the metavariables the template uses, without repeats.
func (t *template) names() []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range t.parts {
		if p.name != "" && !seen[p.name] {
			seen[p.name] = true
			out = append(out, p.name)
		}
	}
	return out
}

// indentAt returns the blanks that start the line holding offset off.
func indentAt(src []byte, off int) string {
	start := off
	for start > 0 && src[start-1] != '\n' {
		start--
	}
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return string(src[start:end])
}

// currentIndent returns the blanks that start the last line of s.
func currentIndent(s string) string {
	line := s[strings.LastIndexByte(s, '\n')+1:]
	return line[:len(line)-len(strings.TrimLeft(line, " \t"))]
}

// lineEndAt returns the line end ("\r\n" or "\n") of the line holding
// offset off, or of the line before it when that line has none (the last
// line of a file without a final newline); "\n" when the file has no line
// end at all.
func lineEndAt(src []byte, off int) string {
	if i := bytes.IndexByte(src[off:], '\n'); i >= 0 {
		if j := off + i; j > 0 && src[j-1] == '\r' {
			return "\r\n"
		}
		return "\n"
	}
	if i := bytes.LastIndexByte(src[:off], '\n'); i > 0 && src[i-1] == '\r' {
		return "\r\n"
	}
	return "\n"
}

// render fills the template for one match of src. The template's line
// breaks take the line end of the line the match starts on, so a CRLF
// file stays CRLF (and a mixed file keeps each line's own ending). A
// result that would pass limit bytes is not built: ok is false.
func (t *template) render(src []byte, m astgrep.Match, limit int) (string, bool) {
	base := indentAt(src, m.StartByte)
	eol := lineEndAt(src, m.StartByte)
	lineStart := m.StartByte
	for lineStart > 0 && src[lineStart-1] != '\n' {
		lineStart--
	}
	// The code before the match on its line, for the indentation of a
	// capture that starts the template.
	prefix := string(src[lineStart:m.StartByte])
	var b strings.Builder
	for _, p := range t.parts {
		if b.Len() > limit {
			return "", false
		}
		if p.name == "" {
			// Template lines after the first sit at the match's indentation.
			lines := strings.Split(strings.ReplaceAll(p.lit, "\r\n", "\n"), "\n")
			for i, l := range lines {
				if i > 0 {
					b.WriteString(eol)
					if l != "" {
						b.WriteString(base)
					}
				}
				b.WriteString(l)
			}
			continue
		}
		name := strings.TrimLeft(p.name, "$")
		c := m.Captures[name]
		if b.Len()+c.EndByte-c.StartByte > limit {
			return "", false
		}
		text := string(src[c.StartByte:c.EndByte])
		if strings.Contains(text, "\n") {
			from := indentAt(src, c.StartByte)
			to := currentIndent(prefix + b.String())
			text = reindent(text, from, to)
		}
		b.WriteString(text)
	}
	if b.Len() > limit {
		return "", false
	}
	return b.String(), true
}

// reindent moves every line after the first from indentation from to
// indentation to. Lines that do not start with from (less indented, or
// blank) keep what they have beyond the common part.
func reindent(text, from, to string) string {
	if from == to {
		return text
	}
	lines := strings.Split(text, "\n")
	for i := 1; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.TrimSpace(l) == "":
			lines[i] = strings.TrimLeft(l, " \t")
		case strings.HasPrefix(l, from):
			lines[i] = to + l[len(from):]
		}
	}
	return strings.Join(lines, "\n")
}

// rewriteFile applies the template to one file's matches, outermost first;
// matches inside or overlapping a kept one are returned as dropped. A
// result that would pass limit bytes is refused before it is built.
func rewriteFile(fm astgrep.FileMatches, t *template, limit int) (FileChange, []Replacement, []Replacement, error) {
	ms := append([]astgrep.Match(nil), fm.Matches...)
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].StartByte != ms[j].StartByte {
			return ms[i].StartByte < ms[j].StartByte
		}
		return ms[i].EndByte > ms[j].EndByte
	})
	var kept, dropped []Replacement
	var out strings.Builder
	pos := 0
	fc := FileChange{File: fm.File, Path: fm.Path, before: fm.Source}
	for _, m := range ms {
		r := Replacement{File: fm.File, StartLine: m.StartLine, EndLine: m.EndLine, StartByte: m.StartByte, EndByte: m.EndByte,
			Old: string(fm.Source[m.StartByte:m.EndByte])}
		if m.StartByte < pos {
			dropped = append(dropped, r)
			continue
		}
		room := limit - out.Len() - (m.StartByte - pos)
		var ok bool
		if r.New, ok = t.render(fm.Source, m, room); !ok {
			return FileChange{}, nil, nil, &ResultTooLargeError{File: fm.File, Limit: limit}
		}
		out.Write(fm.Source[pos:m.StartByte])
		out.WriteString(r.New)
		pos = m.EndByte
		kept = append(kept, r)
		fc.Lines = append(fc.Lines, m.StartLine)
	}
	if out.Len()+len(fm.Source)-pos > limit {
		return FileChange{}, nil, nil, &ResultTooLargeError{File: fm.File, Limit: limit}
	}
	out.Write(fm.Source[pos:])
	fc.after = []byte(out.String())
	fc.Replacements = len(kept)
	return fc, kept, dropped, nil
}
