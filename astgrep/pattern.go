package astgrep

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/astgrep/langtable"
	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

type pkind uint8

const (
	pTerm     pkind = iota // a leaf: compared by kind, and by text when named
	pInternal              // a node with children: kind, then children in order
	pMeta                  // $NAME or $_: any one named node
	pMulti                 // $$$NAME or $$$: a run of zero or more siblings
)

// pnode is one node of a compiled pattern.
type pnode struct {
	kind     pkind
	sym      uint16
	named    bool
	text     []byte
	mv       int // metavariable index; -1 binds nothing
	children []*pnode
	// gaps are the non-blank texts between children that no child covers
	// (string contents held by hidden tokens); a candidate must have the
	// same ones.
	gaps []string
	// optional marks an unnamed separator next to a $$$ run: `f($$$A, b)`
	// also matches `f(b)`.
	optional bool
}

// pattern is a compiled pattern for one language.
type pattern struct {
	lang    *language
	source  string
	context string // the scaffold that read it
	root    *pnode // nil for a sequence pattern
	// seq is set when the fragment is a run of siblings inside a larger
	// node rather than one node (Dart's `dispose(x)` is an identifier
	// followed by an argument selector).
	seq      []*pnode
	vars     []string // names by index; "" for anonymous
	multi    []bool   // by index
	literals [][]byte // texts every matching file must contain
	// lenient marks a reading whose only syntax errors are metavariables
	// standing where the grammar wants something else.
	lenient bool
}

// token of a lexed pattern: literal text or a metavariable.
type mvRef struct {
	name  string // "" anonymous
	multi bool
	index int
}

type lexed struct {
	parts []any // string or mvRef
	vars  []mvRef
}

// Token is a piece of pattern or rewrite text: literal text, or a
// metavariable reference (Name without the dollars; Multi for $$$).
type Token struct {
	Text  string // literal text; empty for a metavariable
	Name  string
	Multi bool
	Var   bool
}

// ScanMetavariables splits src into literal text and metavariable
// references by the pattern language's rules: `$NAME` (upper case, digits,
// _) is one node, `$$$NAME` or `$$$` a run; `$Foo` (a lower-case letter
// after the name) and other dollars are text. Rewrite templates use the
// same rules, so astedit scans them with this too.
func ScanMetavariables(src string) []Token {
	var out []Token
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			out = append(out, Token{Text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(src); {
		if src[i] != '$' {
			lit.WriteByte(src[i])
			i++
			continue
		}
		k := 0
		for i+k < len(src) && src[i+k] == '$' {
			k++
		}
		if k >= 3 {
			lit.WriteString(strings.Repeat("$", k-3))
			j := i + k
			for j < len(src) && rule.IsMetaChar(src[j]) {
				j++
			}
			flush()
			out = append(out, Token{Name: src[i+k : j], Multi: true, Var: true})
			i = j
			continue
		}
		if k == 1 && i+1 < len(src) && rule.IsMetaStart(src[i+1]) {
			j := i + 1
			for j < len(src) && rule.IsMetaChar(src[j]) {
				j++
			}
			if j < len(src) && src[j] >= 'a' && src[j] <= 'z' {
				// `$Foo`: not a metavariable (names are upper case).
				lit.WriteString(src[i:j])
				i = j
				continue
			}
			flush()
			out = append(out, Token{Name: src[i+1 : j], Var: true})
			i = j
			continue
		}
		lit.WriteString(src[i : i+k])
		i += k
	}
	flush()
	return out
}

// Limits on a pattern. Real patterns are a statement or a few, well under
// 1 KiB with a handful of metavariables. Every pattern is parsed in each
// scaffold context and placeholder style, and tree-sitter's error recovery
// takes time quadratic in the tokens of one syntax error, so an invalid
// pattern at these limits still takes up to about a second to read (one of
// 4,000 metavariables took 7.6 s; 100,000 did not finish).
const (
	MaxPatternBytes         = 8 << 10
	MaxPatternMetavariables = 200
)

// ErrPatternTooLarge is wrapped by the error for a pattern over
// MaxPatternBytes or with more than MaxPatternMetavariables metavariables.
var ErrPatternTooLarge = errors.New("the pattern is too large")

// lexPattern splits a pattern into literal text and metavariables; names
// starting with `_` bind nothing. A pattern over the limits is refused.
func lexPattern(src string) (*lexed, error) {
	if len(src) > MaxPatternBytes {
		return nil, fmt.Errorf("%w: %d bytes, over the limit of %d bytes; search for a smaller fragment (one statement or expression) and narrow the search with path instead",
			ErrPatternTooLarge, len(src), MaxPatternBytes)
	}
	lx := &lexed{}
	index := map[string]int{}
	kinds := map[string]bool{}
	toks := ScanMetavariables(src)
	n := 0
	for _, tok := range toks {
		if tok.Var {
			n++
		}
	}
	if n > MaxPatternMetavariables {
		return nil, fmt.Errorf("%w: %d metavariables, over the limit of %d; use $$$NAME for a run of nodes rather than one $NAME per node, or search for a smaller fragment",
			ErrPatternTooLarge, n, MaxPatternMetavariables)
	}
	for _, tok := range toks {
		if !tok.Var {
			lx.parts = append(lx.parts, tok.Text)
			continue
		}
		if tok.Multi && tok.Name != "" && !rule.IsMetaStart(tok.Name[0]) {
			return nil, fmt.Errorf("metavariable $$$%s: a name starts with an upper-case letter or _", tok.Name)
		}
		if err := lx.add(tok.Name, tok.Multi, index, kinds); err != nil {
			return nil, err
		}
	}
	return lx, nil
}

func (lx *lexed) add(name string, multi bool, index map[string]int, kinds map[string]bool) error {
	anon := name == "" || name[0] == '_'
	if !anon {
		if m, seen := kinds[name]; seen && m != multi {
			return fmt.Errorf("metavariable %s is used both as $%s and $$$%s; use two names", name, name, name)
		}
		kinds[name] = multi
		if i, ok := index[name]; ok {
			lx.parts = append(lx.parts, lx.vars[i])
			return nil
		}
	}
	ref := mvRef{multi: multi, index: len(lx.vars)}
	if !anon {
		ref.name = name
		index[name] = ref.index
	}
	lx.vars = append(lx.vars, ref)
	lx.parts = append(lx.parts, ref)
	return nil
}

// onlyMetavariable reports whether the pattern is a single metavariable.
func (lx *lexed) onlyMetavariable() bool {
	n := 0
	for _, p := range lx.parts {
		switch v := p.(type) {
		case string:
			if strings.TrimSpace(v) != "" {
				return false
			}
		case mvRef:
			n++
		}
	}
	return n == 1
}

// render spells the fragment with placeholders in the given style.
func (lx *lexed) render(style langtable.Style) (string, map[string]int) {
	var b strings.Builder
	ph := map[string]int{}
	for _, p := range lx.parts {
		switch v := p.(type) {
		case string:
			b.WriteString(v)
		case mvRef:
			s := style.Spell(v.index)
			ph[s] = v.index
			b.WriteString(s)
		}
	}
	return strings.TrimSpace(b.String()), ph
}

// parseFunc parses src as one language's code.
type parseFunc func(src []byte) (*tree, error)

// errVarNotNode marks a context where a metavariable did not become a
// whole node.
type errVarNotNode struct{ name string }

// Error implements error.
func (e errVarNotNode) Error() string {
	return fmt.Sprintf("metavariable %s does not stand for a whole syntax node (is it inside a string or comment, or glued to other characters?)", e.name)
}

// compilePattern reads src as l's code. It tries each scaffold context of
// the language in order, in each placeholder style, and keeps the first
// reading with no ERROR or MISSING node that the context does not reject;
// failing that, the first reading whose only errors are placeholders; and
// failing that, the first rejected reading. It stops with ctx's error when
// ctx ends (parse is expected to stop too).
func compilePattern(ctx context.Context, l *language, src string, parse parseFunc) (*pattern, error) {
	if strings.TrimSpace(src) == "" {
		return nil, ErrEmptyPattern
	}
	lx, err := lexPattern(src)
	if err != nil {
		return nil, err
	}
	if !utf8.ValidString(src) {
		return nil, errors.New("the pattern is not valid UTF-8")
	}
	if lx.onlyMetavariable() {
		return nil, ErrOnlyMetavariable
	}
	// Readings in order of preference: the first clean one; else the
	// first whose only errors are placeholders; else the first a context
	// rejected (a trap kind, or a keyword read as an identifier), clean
	// before lenient.
	var (
		tried    []string
		detail   string
		lenient  *pattern
		fallback *pattern
		varErr   error
	)
	for _, sc := range l.spec.Contexts {
		tried = append(tried, sc.Name)
		var frags []string
		for _, style := range l.spec.PlaceholderStyles() {
			frag, ph := lx.render(style)
			// Styles differ only in placeholders: without metavariables
			// every style reads the same text, and the same text reads the
			// same way.
			if slices.Contains(frags, frag) {
				continue
			}
			frags = append(frags, frag)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			p, rejected, err := readInContext(l, sc, frag, ph, lx, parse)
			if cerr := ctx.Err(); cerr != nil {
				return nil, cerr
			}
			if err != nil {
				var ve errVarNotNode
				if errors.As(err, &ve) {
					varErr = err
				} else if errors.Is(err, ErrOnlyMetavariable) {
					return nil, err
				} else if detail == "" {
					detail = err.Error()
				}
				continue
			}
			if rejected {
				if fallback == nil || fallback.lenient && !p.lenient {
					fallback = p
				}
				continue
			}
			if p.lenient {
				if lenient == nil {
					lenient = p
				}
				continue
			}
			p.source = src
			return p, nil
		}
	}
	if lenient != nil {
		lenient.source = src
		return lenient, nil
	}
	if fallback != nil {
		fallback.source = src
		return fallback, nil
	}
	if varErr != nil {
		return nil, varErr
	}
	return nil, &UnparsablePatternError{Pattern: src, Language: l.id, Contexts: tried, Detail: detail}
}

// readInContext parses frag inside ctx and converts the fragment's node.
func readInContext(l *language, ctx langtable.Scaffold, frag string, ph map[string]int, lx *lexed, parse parseFunc) (*pattern, bool, error) {
	body := frag
	if ctx.Indent != "" {
		body = strings.ReplaceAll(frag, "\n", "\n"+ctx.Indent)
	}
	full := ctx.Prefix + body + ctx.Suffix
	fs, fe := len(ctx.Prefix), len(ctx.Prefix)+len(body)
	t, err := parse([]byte(full))
	if err != nil {
		return nil, false, err
	}
	lenient := false
	if t.errorCount() > 0 {
		// A metavariable in a place where an identifier is not valid (an
		// item list, a parameter list) leaves an ERROR node holding just
		// its placeholder. Such a reading is kept as a last resort.
		if !errorsArePlaceholders(t, ph) {
			return nil, false, fmt.Errorf("as %s: syntax error at %s", ctx.Name, describeError(t, fs))
		}
		lenient = true
	}
	// The deepest node that covers the whole fragment.
	cur := 0
	var kids []int
	for {
		kids = t.children(cur, kids[:0])
		next := -1
		for _, c := range kids {
			n := t.nodes[c]
			if int(n.Start) <= fs && int(n.End) >= fe && n.End > n.Start {
				next = c
				break
			}
		}
		if next < 0 {
			break
		}
		cur = next
	}
	p := &pattern{lang: l, context: ctx.Name, lenient: lenient}
	for _, v := range lx.vars {
		p.vars = append(p.vars, v.name)
		p.multi = append(p.multi, v.multi)
	}
	cv := converter{t: t, ph: ph, multi: p.multi, seen: map[int]bool{}}
	n := t.nodes[cur]
	if int(n.Start) == fs && int(n.End) == fe && cur != 0 {
		p.root = cv.convert(cur)
	} else {
		// The node is larger than the fragment: either the fragment is a run
		// of its children, or the scaffold's own tokens (a ';') are inside a
		// child that also holds fragment code.
		kids = t.children(cur, kids[:0])
		var inside []int
		straddle := false
		for _, c := range kids {
			cn := t.nodes[c]
			switch {
			case int(cn.Start) >= fs && int(cn.End) <= fe:
				if cn.End > cn.Start {
					inside = append(inside, c)
				}
			case int(cn.End) <= fs || int(cn.Start) >= fe:
			default:
				straddle = true
			}
		}
		if straddle || len(inside) == 0 {
			p.root = cv.convert(cur)
		} else {
			for _, c := range inside {
				if t.extra(c) {
					continue
				}
				p.seq = append(p.seq, cv.convert(c))
			}
			markOptional(p.seq)
			if len(p.seq) == 1 {
				p.root, p.seq = p.seq[0], nil
			}
		}
	}
	for _, v := range lx.vars {
		if !cv.seen[v.index] {
			name := "$" + v.name
			if v.multi {
				name = "$$$" + v.name
			}
			return nil, false, errVarNotNode{name: name}
		}
	}
	if p.root != nil && (p.root.kind == pMeta || p.root.kind == pMulti) {
		return nil, false, ErrOnlyMetavariable
	}
	rejected := false
	if p.root != nil {
		for _, k := range ctx.Reject {
			if l.symbolName(p.root.sym) == k {
				rejected = true
			}
		}
	}
	if keywordAsIdentifier(l, p) {
		rejected = true
	}
	p.literals = collectLiterals(p)
	return p, rejected, nil
}

// keywordAsIdentifier reports whether the reading turned one of the
// grammar's keywords into an identifier (Go's `var _ = select {...}` reads
// `select` as a type name): a sign the context misread the fragment.
func keywordAsIdentifier(l *language, p *pattern) bool {
	var walk func(n *pnode) bool
	walk = func(n *pnode) bool {
		switch n.kind {
		case pTerm:
			return n.named && strings.Contains(l.symbolName(n.sym), "identifier") && l.isKeyword(string(n.text))
		case pInternal:
			for _, c := range n.children {
				if walk(c) {
					return true
				}
			}
		}
		return false
	}
	if p.root != nil {
		return walk(p.root)
	}
	for _, n := range p.seq {
		if walk(n) {
			return true
		}
	}
	return false
}

// errorsArePlaceholders reports whether every ERROR node is exactly one
// metavariable placeholder and nothing is MISSING.
func errorsArePlaceholders(t *tree, ph map[string]int) bool {
	for i := range t.nodes {
		f := t.nodes[i].Flags
		if f&tsnative.FlagMissing != 0 {
			return false
		}
		if f&tsnative.FlagError == 0 {
			continue
		}
		if _, ok := ph[string(bytes.TrimSpace(t.text(i)))]; !ok {
			return false
		}
	}
	return true
}

func describeError(t *tree, fragStart int) string {
	for i := range t.nodes {
		n := t.nodes[i]
		if n.Flags&(tsnative.FlagError|tsnative.FlagMissing) == 0 {
			continue
		}
		off := int(n.Start) - fragStart
		if off < 0 {
			off = 0
		}
		what := "unexpected text"
		if n.Flags&tsnative.FlagMissing != 0 {
			what = "missing token"
		}
		return fmt.Sprintf("%s near offset %d of the pattern", what, off)
	}
	return "unknown position"
}

type converter struct {
	t     *tree
	ph    map[string]int
	multi []bool // by metavariable index
	seen  map[int]bool
}

func (cv *converter) convert(i int) *pnode {
	t := cv.t
	n := t.nodes[i]
	text := t.text(i)
	if n.Flags&tsnative.FlagError != 0 {
		text = bytes.TrimSpace(text)
	}
	if idx, ok := cv.ph[string(text)]; ok {
		cv.seen[idx] = true
		k := pMeta
		if cv.multi[idx] {
			k = pMulti
		}
		return &pnode{kind: k, mv: idx, sym: n.Sym, named: true}
	}
	if t.leaf(i) {
		return &pnode{kind: pTerm, sym: n.Sym, named: n.Flags&tsnative.FlagNamed != 0, text: append([]byte(nil), t.text(i)...), mv: -1}
	}
	p := &pnode{kind: pInternal, sym: n.Sym, named: n.Flags&tsnative.FlagNamed != 0, mv: -1}
	for _, c := range t.children(i, nil) {
		cn := t.nodes[c]
		// Skip comments and zero-width tokens; keep ERROR nodes even when
		// marked extra, since a lenient reading's placeholder sits in one.
		if cn.Flags&tsnative.FlagMissing != 0 || cn.Start == cn.End || cn.Flags&(tsnative.FlagExtra|tsnative.FlagError) == tsnative.FlagExtra {
			continue
		}
		p.children = append(p.children, cv.convert(c))
	}
	p.gaps = gapsOf(t, i)
	markOptional(p.children)
	return p
}

// gapsOf lists the non-blank texts inside node i that no child covers.
func gapsOf(t *tree, i int) []string {
	n := t.nodes[i]
	pos := int(n.Start)
	var gaps []string
	check := func(from, to int) {
		if to <= from {
			return
		}
		g := bytes.TrimSpace(t.src[from:to])
		if len(g) > 0 {
			gaps = append(gaps, string(g))
		}
	}
	end := int(n.Last)
	for c := i + 1; c < end; c = int(t.nodes[c].Last) {
		check(pos, int(t.nodes[c].Start))
		if int(t.nodes[c].End) > pos {
			pos = int(t.nodes[c].End)
		}
	}
	check(pos, int(n.End))
	return gaps
}

// markOptional marks the list separators (',' and ';') next to a $$$ run
// as optional, so `f($$$A, b)` matches `f(b)` and `f(a, $$$B)` matches
// `f(a)`. Brackets stay required.
func markOptional(kids []*pnode) {
	for i, k := range kids {
		if k.kind != pTerm || k.named || string(k.text) != "," && string(k.text) != ";" {
			continue
		}
		if i > 0 && kids[i-1].kind == pMulti || i+1 < len(kids) && kids[i+1].kind == pMulti {
			k.optional = true
		}
	}
}

// collectLiterals gathers texts that every matching file contains: named
// leaves (compared by exact text), keywords and multi-character operators
// that are not optional, and gap texts. Only the longest few are kept.
func collectLiterals(p *pattern) [][]byte {
	set := map[string]bool{}
	var walk func(n *pnode)
	walk = func(n *pnode) {
		switch n.kind {
		case pTerm:
			if n.optional {
				return
			}
			s := string(n.text)
			if n.named {
				set[s] = true
			} else if !p.lang.spec.CaseFolds && (len(s) >= 2 || isWord(s)) && s == p.lang.symbolName(n.sym) {
				// Unnamed tokens are compared by kind; their text is a
				// literal only when it is the token's own spelling (some
				// grammars give a token a span with stray blanks).
				set[s] = true
			}
		case pInternal:
			for _, g := range n.gaps {
				set[g] = true
			}
			for _, c := range n.children {
				walk(c)
			}
		}
	}
	if p.root != nil {
		walk(p.root)
	}
	for _, n := range p.seq {
		walk(n)
	}
	delete(set, "")
	return topLiterals(set)
}

func isWord(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !unicode.IsLetter(r) && r != '_' {
			return false
		}
	}
	return true
}
