// Package symbolplan works out an edit_symbol change in memory: given a
// definition the code graph located and its language's shapes (shapes.scm
// and language.json), it reads the file through the run's guard, finds the
// definition's body, doc comment and attributes by the shape query, and
// makes the new text (replaced whole or its body only, or inserted before
// or after it) indented as the file is, with the blank lines around it
// kept, refusing a change that parses worse than the file did or that
// touches a generated file unless forced. It writes nothing and knows
// nothing of the tool: package structural locates the definition, takes
// the file's lock, writes the plan and words its result.
package symbolplan

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/aymanbagabas/go-udiff"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/astgrep/indent"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Edit is one edit_symbol request, its definition already located.
type Edit struct {
	Op    string
	Text  string
	Force bool
}

// Plan is an edit_symbol change worked out and not yet written.
type Plan struct {
	Abs, Rel           string
	Def                graph.Located
	Before, After      []byte
	Diff               string
	StartLine, EndLine int // the definition (or the inserted text) in After
	Mode               fs.FileMode
}

// generatedLine is the convention generated files follow
// (https://go.dev/s/generatedcode), after the language's comment start.
var generatedLine = regexp.MustCompile(`^Code generated .*DO NOT EDIT\.?`)

// maxNewText bounds new_text: one definition, not a file's worth.
const maxNewText = 1 << 20

// span is a byte range.
type span struct{ start, end int }

// shapes is what the language's shape query (graph.Shapes) found in a
// file.
type shapes struct {
	bodies   map[span]span // definition -> its body
	wrappers map[span]span // inner -> outer
	docs     map[int]span  // block start -> its docstring statement
	errors   int           // ERROR and MISSING nodes in the file as it is
	indents  int           // its lines whose indentation Python refuses
}

func shapesOf(ctx context.Context, eng *astgrep.Engine, g *pathguard.Guard, abs string, rules *lang.Shapes) ([]byte, fs.FileInfo, *shapes, error) {
	language := rules.Grammar
	q, err := eng.CompileCaptureQuery(language, rules.Query)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("edit_symbol's %s shape query: %w", language, err)
	}
	var res *astgrep.CaptureResult
	err = eng.Capture(ctx, g, []astgrep.CaptureFile{{Path: abs, Query: q}}, func(r *astgrep.CaptureResult) {
		cp := *r
		cp.Src = slices.Clone(r.Src)
		res = &cp
	})
	if err != nil {
		return nil, nil, nil, err
	}
	if res == nil {
		return nil, nil, nil, fmt.Errorf("%s could not be read", g.Rel(abs))
	}
	if res.Err != nil {
		return nil, nil, nil, fmt.Errorf("%s: %w", g.Rel(abs), res.Err)
	}
	indents := len(indent.Faults(language, res.Src))
	sh := &shapes{bodies: map[span]span{}, wrappers: map[span]span{}, docs: map[int]span{}, errors: res.Errors, indents: indents}
	idx := func(name string) int { return q.Capture(name) }
	def, body, inner, outer, doc := idx("def"), idx("body"), idx("inner"), idx("outer"), idx("doc")
	for _, m := range res.Matches {
		got := map[int]span{}
		for _, c := range m.Captures {
			got[c.Index] = span{c.Start, c.End}
		}
		if d, ok := got[def]; ok {
			if b, ok := got[body]; ok {
				if _, seen := sh.bodies[d]; !seen {
					sh.bodies[d] = b
				}
			}
		}
		if i, ok := got[inner]; ok {
			if o, ok := got[outer]; ok && o != i {
				sh.wrappers[i] = o
			}
		}
		if d, ok := got[doc]; ok && doc >= 0 {
			sh.docs[d.start] = d
		}
	}
	return res.Src, res.Info, sh, nil
}

// Make works out the change without writing it, by the rules of the
// definition's language, parsing with eng. The caller holds the file's
// lock when it will write. ErrStale says the file is not the one loc's
// ranges were read from.
func Make(ctx context.Context, eng *astgrep.Engine, g *pathguard.Guard, loc graph.Located, abs string, rules *lang.Shapes, e Edit) (*Plan, error) {
	rel := g.Rel(abs)
	if len(e.Text) > maxNewText {
		return nil, fmt.Errorf("new_text is %d bytes; edit_symbol takes at most %d KiB for one definition, so nothing was written: write a file that large with write", len(e.Text), maxNewText>>10)
	}
	language := rules.Grammar
	src, info, sh, err := shapesOf(ctx, eng, g, abs, rules)
	if err != nil {
		return nil, err
	}
	content := string(src)
	if sha256.Sum256(src) != loc.Hash {
		return nil, ErrStale
	}
	if at := loc.NameAt; at < 0 || at+len(loc.Name) > len(content) || content[at:at+len(loc.Name)] != loc.Name || loc.Start < 0 || loc.Start > at || loc.End > len(content) {
		return nil, fmt.Errorf("%s: the code graph's ranges for %s do not fit the file; nothing was written, call edit_symbol again", rel, loc.Name)
	}
	if h := generatedHeader(head(content, 40), rules.Comments); h != "" {
		return nil, fmt.Errorf("%s is a generated file (%q): nothing was written. Change what it is generated from and generate it again",
			rel, h)
	}
	if info != nil && info.Mode().Perm()&0o222 == 0 && !e.Force {
		return nil, fmt.Errorf("%s is read-only (mode %04o): nothing was written. Set force to change it anyway (its mode is kept)", rel, info.Mode().Perm())
	}

	def := span{loc.Start, loc.End}
	ext := def
	for range 4 {
		o, ok := sh.wrappers[ext]
		if !ok {
			break
		}
		ext = o
	}
	crlf := strings.Contains(content, "\r\n")
	nl := "\n"
	if crlf {
		nl = "\r\n"
	}
	ls := lineStart(content, ext.start)
	atLineStart := strings.TrimSpace(content[ls:ext.start]) == ""
	indent := leadingSpace(content[ls:])
	unit := indentUnit(content, rules.Indent)
	text := strings.ReplaceAll(e.Text, "\r\n", "\n")

	var out strings.Builder
	var newStart, newEnd int // of the definition or the inserted text in the result
	switch e.Op {
	case "replace":
		// What stays above the signature depends on how new_text starts:
		// a comment replaces the doc comment and what follows it, a
		// decorator or attribute replaces those, else both stay.
		from := ext.start
		if atLineStart {
			doc, attrs, sig := leadingLines(content, ls, loc.NameAt, rules)
			switch {
			case hasPrefix(strings.TrimSpace(text), rules.Comments):
				from = doc
			case hasPrefix(strings.TrimSpace(text), rules.Attributes):
				from = attrs
			default:
				from = sig
			}
		}
		body := reindentAs(text, indent, unit, !atLineStart, nl)
		out.WriteString(content[:from])
		newStart = out.Len()
		if atLineStart && ls < from {
			newStart = ls // the decorators kept are the definition's
		}
		out.WriteString(body)
		newEnd = out.Len()
		end := ext.end
		// A C struct or C++ class ends before its ";": new text that
		// brings its own takes the old one's place.
		if rest := strings.TrimLeft(content[end:], " \t"); strings.HasPrefix(rest, ";") && strings.HasSuffix(strings.TrimSpace(text), ";") {
			end = len(content) - len(rest) + 1
		}
		out.WriteString(content[end:])
	case "replace_body":
		b, ok := sh.bodies[def]
		if !ok {
			return nil, fmt.Errorf("%s %s (%s:%d) has no body to replace; use operation replace for its whole text", loc.Kind, loc.Qualified, rel, loc.Line)
		}
		from, to, repl := bodyEdit(content, b, sh, text, indent, unit, rules, nl)
		out.WriteString(content[:from])
		out.WriteString(repl)
		out.WriteString(content[to:])
		newStart = ext.start
		newEnd = ext.end + len(repl) - (to - from)
	case "insert_before", "insert_after":
		body := reindentAs(text, indent, unit, false, nl)
		var at int
		var piece string
		if e.Op == "insert_before" {
			at, _, _ = leadingLines(content, ls, loc.NameAt, rules)
			blanks := blanksBefore(content, at)
			if at == 0 || opensBlock(content[lineStart(content, max(at-1, 0)):at]) {
				// First in its file or block: set off as the definition is
				// from what follows it.
				blanks = max(1, blanksAfter(content, lineEnd(content, ext.end)))
			}
			piece = body + nl + strings.Repeat(nl, blanks)
			newStart = at
		} else {
			at = lineEnd(content, ext.end)
			piece = body + nl
			lead := ""
			if at == len(content) && !strings.HasSuffix(content, "\n") {
				lead = nl
			}
			blanks := blanksAfter(content, at)
			if at == len(content) || closesBlock(content[at:lineEnd(content, at)]) {
				// Last in its file or block: set off as the definition is
				// from what precedes it.
				doc, _, _ := leadingLines(content, ls, loc.NameAt, rules)
				blanks = max(1, blanksBefore(content, doc))
			}
			lead += strings.Repeat(nl, blanks)
			piece = lead + piece
			newStart = at + len(lead)
		}
		out.WriteString(content[:at])
		out.WriteString(piece)
		out.WriteString(content[at:])
		newEnd = newStart + len(body)
	default:
		return nil, fmt.Errorf("operation must be replace, replace_body, insert_before or insert_after, not %q", e.Op)
	}
	after := out.String()
	if after == content {
		return nil, fmt.Errorf("the new text is what %s %s already is; nothing to change", loc.Kind, loc.Qualified)
	}
	if err := parseCheck(eng, language, rel, sh, []byte(after)); err != nil {
		return nil, err
	}
	p := &Plan{Abs: abs, Rel: rel, Def: loc, Before: src, After: []byte(after),
		Diff:      udiff.Unified("a/"+rel, "b/"+rel, content, after),
		StartLine: strings.Count(after[:newStart], "\n") + 1,
		EndLine:   strings.Count(after[:max(newEnd-1, newStart)], "\n") + 1}
	if info != nil {
		p.Mode = info.Mode()
	}
	return p, nil
}

// parseCheck refuses a change that adds syntax errors, as ast_edit does:
// was counts those of the file as it is (the shape query's parse), and
// Python's indentation faults (tree-sitter takes what Python refuses).
func parseCheck(eng *astgrep.Engine, language, rel string, was *shapes, after []byte) error {
	now, err := eng.ParseErrorLines(language, after)
	if err != nil {
		return err
	}
	// ParseErrorLines counts both kinds; each is checked on its own.
	ind := indent.Faults(language, after)
	for _, ie := range ind {
		if i := slices.Index(now, ie.Line); i >= 0 {
			now = slices.Delete(now, i, i+1)
		}
	}
	e := &ParseRefusal{File: rel}
	if len(ind) > was.indents {
		e.Indent = ind[:min(len(ind), 3)]
	}
	if len(now) > was.errors {
		e.Lines = slices.Compact(slices.Sorted(slices.Values(now)))
		if len(e.Lines) > 5 {
			e.Lines = e.Lines[:5]
		}
	}
	if e.Indent == nil && e.Lines == nil {
		return nil
	}
	return e
}

// ParseRefusal is a change edit_symbol would not write: the file would
// no longer parse, or Python would refuse its indentation.
type ParseRefusal struct {
	File   string
	Lines  []int          // lines with syntax errors
	Indent []indent.Fault // lines whose indentation Python refuses
}

func (e *ParseRefusal) Error() string {
	var why []string
	if len(e.Indent) > 0 {
		var faults []string
		for _, ie := range e.Indent {
			faults = append(faults, fmt.Sprintf("line %d: %s", ie.Line, ie.Msg))
		}
		why = append(why, fmt.Sprintf("indentation Python refuses (in the changed file, %s). Indent new_text's lines as one block in spaces or in tabs, not both, each nested line deeper than the line that opens its block and a dedent back to a level used above", strings.Join(faults, "; ")))
	}
	if len(e.Lines) > 0 {
		why = append(why, fmt.Sprintf("syntax errors (at line %s of the changed file). Check its brackets and separators, and that it is a whole definition (replace, insert_*) or a body (replace_body)", lineList(e.Lines)))
	}
	return fmt.Sprintf("nothing was written: the new text would leave %s with %s", e.File, strings.Join(why, "; and with "))
}

// lineList is "3, 7, 9".
func lineList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// bodyEdit is replace_body's range and text. A body in braces keeps its
// braces (new text wrapped in braces is taken as the whole block); a
// block with a docstring (Python's) keeps it unless the new text starts
// with one.
func bodyEdit(content string, b span, sh *shapes, text, indent, unit string, rules *lang.Shapes, nl string) (from, to int, repl string) {
	btext := content[b.start:b.end]
	open, close := strings.IndexByte(btext, '{'), strings.LastIndexByte(btext, '}')
	if !rules.BracedBodies || open < 0 || close < open {
		to = b.end
		if d, ok := sh.docs[b.start]; ok && (rules.Docstring == nil || !rules.Docstring.MatchString(strings.TrimSpace(text))) {
			// The docstring stays: the new text goes after its line.
			bodyIndent := leadingSpace(content[lineStart(content, d.start):])
			if from = lineEnd(content, d.end); from > to {
				return to, to, nl + reindentAs(text, bodyIndent, unit, false, nl)
			}
			return from, to, reindentAs(text, bodyIndent, unit, false, nl)
		}
		ls := lineStart(content, b.start)
		if strings.TrimSpace(content[ls:b.start]) == "" {
			// The block starts a line: its first line keeps its place.
			return b.start, to, reindentAs(text, leadingSpace(content[ls:]), unit, true, nl)
		}
		// A one-line body (def f(): return 1) becomes an indented block.
		from = b.start - (len(content[ls:b.start]) - len(strings.TrimRight(content[ls:b.start], " \t")))
		return from, to, nl + reindentAs(text, indent+unit, unit, false, nl)
	}
	if t := strings.TrimSpace(text); strings.HasPrefix(t, "{") && strings.HasSuffix(t, "}") {
		text = t[1 : len(t)-1]
	}
	from, to = b.start+open+1, b.start+close
	inner := content[from:to]
	closeIndent := indent
	if cl := lineStart(content, to); strings.TrimSpace(content[cl:to]) == "" && cl > from {
		closeIndent = content[cl:to]
	}
	bodyIndent := indent + unit
	if first := strings.IndexByte(inner, '\n'); first >= 0 {
		for l := range strings.Lines(inner[first+1:]) {
			if strings.TrimSpace(l) != "" {
				bodyIndent = leadingSpace(l)
				break
			}
		}
	}
	if strings.TrimSpace(text) == "" {
		return from, to, ""
	}
	return from, to, nl + reindentAs(text, bodyIndent, unit, false, nl) + nl + closeIndent
}

// reindentAs trims the text's blank first and last lines and its common
// indentation, writes each further level of its indentation as fileUnit
// (tabs for four spaces, or the reverse), and indents each line with
// indent (the first one too unless skipFirst: it goes where the old text
// began).
func reindentAs(text, indent, fileUnit string, skipFirst bool, nl string) string {
	lines := strings.Split(strings.TrimRight(text, " \t\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	common := ""
	first := true
	unit := ""
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ws := leadingSpace(l)
		if first {
			common, first = ws, false
			continue
		}
		for !strings.HasPrefix(ws, common) {
			common = common[:len(common)-1]
		}
	}
	if fileUnit != "" {
		unit = textUnit(lines, common, fileUnit)
	}
	for i, l := range lines {
		l = restyle(strings.TrimRight(strings.TrimPrefix(l, common), " \t"), fileUnit, unit)
		switch {
		case l == "":
		case i == 0 && skipFirst:
		default:
			l = indent + l
		}
		lines[i] = l
	}
	return strings.Join(lines, nl)
}

// textUnit is one level of the text's indentation (below common) when it
// is written unlike fileUnit, "" when it is alike or has no levels.
func textUnit(lines []string, common, fileUnit string) string {
	narrowest := 0
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ws := leadingSpace(strings.TrimPrefix(l, common))
		switch {
		case ws == "":
		case ws[0] == '\t':
			if fileUnit == "\t" {
				return ""
			}
			return "\t"
		case narrowest == 0 || len(ws) < narrowest:
			narrowest = len(ws)
		}
	}
	if narrowest == 0 || strings.Repeat(" ", narrowest) == fileUnit {
		return ""
	}
	return strings.Repeat(" ", narrowest)
}

// restyle rewrites the levels of unit at the start of l as fileUnit.
func restyle(l, fileUnit, unit string) string {
	if unit == "" {
		return l
	}
	n := 0
	for strings.HasPrefix(l[n:], unit) {
		n += len(unit)
	}
	return strings.Repeat(fileUnit, n/len(unit)) + l[n:]
}

func leadingSpace(s string) string {
	return s[:len(s)-len(strings.TrimLeft(s, " \t"))]
}

func lineStart(s string, off int) int { return strings.LastIndexByte(s[:off], '\n') + 1 }

// lineEnd is the offset just past the line end of the line holding off
// (the text's end on its last line).
func lineEnd(s string, off int) int {
	if i := strings.IndexByte(s[off:], '\n'); i >= 0 {
		return off + i + 1
	}
	return len(s)
}

func head(s string, lines int) string {
	off := 0
	for range lines {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return s
		}
		off += i + 1
	}
	return s[:off]
}

// indentUnit is one level of the file's indentation: a tab if its
// indented lines start with one, else the narrowest run of spaces; the
// language's (unit) when the file has none.
func indentUnit(content, unit string) string {
	narrowest := 0
	for l := range strings.Lines(content) {
		if strings.TrimSpace(l) == "" {
			continue
		}
		ws := leadingSpace(l)
		switch {
		case ws == "":
		case ws[0] == '\t':
			return "\t"
		case narrowest == 0 || len(ws) < narrowest:
			narrowest = len(ws)
		}
	}
	if narrowest > 0 && narrowest <= 8 {
		return strings.Repeat(" ", narrowest)
	}
	return unit
}

// generatedHeader is the line of head that says its file is generated,
// "" if none does.
func generatedHeader(head string, comments []string) string {
	for l := range strings.Lines(head) {
		l = strings.TrimSpace(l)
		rest := l
		for {
			p := prefixOf(rest, comments)
			if p == "" {
				break
			}
			rest = rest[len(p):]
		}
		if rest == l {
			continue
		}
		rest = strings.TrimLeft(rest, " \t")
		if m := generatedLine.FindStringIndex(rest); m != nil {
			return l[:len(l)-len(rest)+m[1]]
		}
	}
	return ""
}

func hasPrefix(s string, prefixes []string) bool { return prefixOf(s, prefixes) != "" }

// prefixOf is the first of prefixes s starts with.
func prefixOf(s string, prefixes []string) string {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return p
		}
	}
	return ""
}

func hasSuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

// leadingLines splits what comes before a definition's name, from the
// line at ls: its doc comment starts at doc, its decorators or attributes
// at attrs (above the definition's node, as in Rust, or inside it, as in
// Python and Java), its signature's line at sig; doc <= attrs <= sig.
func leadingLines(content string, ls, nameAt int, rules *lang.Shapes) (doc, attrs, sig int) {
	isAttr := func(l string) bool { return hasPrefix(strings.TrimSpace(l), rules.Attributes) }
	sig = ls
	for sig < len(content) {
		end := lineEnd(content, sig)
		if end > nameAt || !isAttr(content[sig:end]) {
			break
		}
		sig = end
	}
	attrs = ls
	for attrs > 0 {
		prev := lineStart(content, attrs-1)
		if !isAttr(content[prev:attrs]) {
			break
		}
		attrs = prev
	}
	doc = attrs
	for doc > 0 {
		prev := lineStart(content, doc-1)
		l := strings.TrimSpace(content[prev:doc])
		if l == "" || !hasPrefix(l, rules.Comments) && !hasSuffix(l, rules.CommentEnds) && !isAttr(l) {
			break
		}
		doc = prev
	}
	return doc, attrs, sig
}

// blanksBefore counts the blank lines right above the line at ls: the
// separation an insert before a definition repeats.
func blanksBefore(content string, ls int) int {
	n := 0
	for ls > 0 {
		prev := lineStart(content, ls-1)
		if strings.TrimSpace(content[prev:ls]) != "" {
			break
		}
		n, ls = n+1, prev
	}
	return n
}

// closesBlock says whether a line only closes brackets (}, };, ).
func closesBlock(line string) bool {
	t := strings.TrimSpace(line)
	return t != "" && strings.Trim(t, "})];,") == ""
}

// opensBlock says whether a line ends by opening a block ({ or a colon).
func opensBlock(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasSuffix(t, "{") || strings.HasSuffix(t, ":")
}

// blanksAfter counts the blank lines from off on.
func blanksAfter(content string, off int) int {
	n := 0
	for off < len(content) {
		end := lineEnd(content, off)
		if strings.TrimSpace(content[off:end]) != "" {
			break
		}
		n, off = n+1, end
	}
	return n
}

// ErrStale says the file is not the one the definition's ranges were read
// from (the caller locates it again).
var ErrStale = errors.New("the file changed since the code graph read it")
