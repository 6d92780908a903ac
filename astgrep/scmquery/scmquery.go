// Package scmquery reads tree-sitter's query language (S-expression
// patterns with @captures, the format of a grammar's tags.scm, which the
// code graph's language folders hold) into plain data: the patterns,
// their captures and their predicates, with node types and fields
// resolved against a grammar's names (Grammar). Package astgrep matches
// the patterns over its trees; this package knows no tree and no
// runtime.
//
// Supported: (type child...), (_ ...), _, "token", (ERROR), field: child,
// !field, alternations [...], the quantifiers ? * +, the anchor .,
// captures, and the predicates #eq?, #match?, #any-of? and their #not-
// forms; directives (#set!, #strip!, ...) are read and ignored. Children
// match in order, not necessarily adjacent; a child pattern that is a
// type or (_) matches named children only, as in tree-sitter.
package scmquery

import (
	"fmt"
	"regexp"
	"strings"
)

// Grammar is what a query's names are resolved against.
type Grammar struct {
	Symbols []string         // symbol names by id
	Named   []bool           // by symbol id: a named node (else a token)
	Fields  map[string]uint8 // field ids by name
}

// Error says why a query did not parse, at which line and column
// (1-based) of its source.
type Error struct {
	Line, Column int
	Problem      string
	Near         string // the source from there to the end of its line, at most 40 bytes
}

func (e *Error) Error() string {
	return fmt.Sprintf("line %d column %d: %s near %q", e.Line, e.Column, e.Problem, e.Near)
}

// Parse reads src, a query, for g: its patterns in order, and the
// capture names (without the @) their Captures index. A query that does
// not parse gives an *Error.
func Parse(g Grammar, src string) (pats []Pattern, names []string, err error) {
	p := &qparser{src: src, fields: g.Fields, syms: map[string][]uint16{}, lits: map[string][]uint16{}}
	for i, name := range g.Symbols {
		if g.Named[i] {
			p.syms[name] = append(p.syms[name], uint16(i))
		} else {
			p.lits[name] = append(p.lits[name], uint16(i))
		}
	}
	defer func() {
		if r := recover(); r != nil {
			qe, ok := r.(*qerr)
			if !ok {
				panic(r)
			}
			pats, names, err = nil, nil, qe.at(src)
		}
	}()
	for p.peek() != 0 {
		var preds []Predicate
		root := p.item(&preds)
		pats = append(pats, Pattern{Root: root, Preds: preds})
	}
	return pats, p.names, nil
}

// Kind is what a Node matches.
type Kind uint8

const (
	KindType  Kind = iota // (type ...): one of Syms
	KindNamed             // (_ ...): any named node
	KindAny               // _: any node
	KindToken             // "token": an unnamed node of one of Syms
	KindAlt               // [a b]: any of Alts
	KindError             // (ERROR ...)
)

// Node is one node pattern: its kind, the captures it binds, and, for
// (type child...) and (_ child...), its child patterns and the fields it
// must not have.
type Node struct {
	Kind       Kind
	Syms       []uint16 // KindType, KindToken: the grammar's symbols of that name
	Alts       []*Node  // KindAlt
	Children   []*Child
	NegFields  []uint8 // !field: field ids no child may have
	Captures   []int   // capture indexes, into the names Parse returns
	AnchorLast bool    // a . after the last child: it must be the last named child
}

// Child is one child pattern of a Node: children match in order, not
// necessarily adjacent.
type Child struct {
	Field        uint8 // field: the child must be the parent's child by (0 any)
	Node         *Node
	Quant        byte // 0 exactly one, '?', '*', '+'
	AnchorBefore bool // a . before it: adjacent to the previous child (or first)
}

// Pattern is one top-level pattern and the predicates on its captures.
type Pattern struct {
	Root  *Node
	Preds []Predicate
}

type qparser struct {
	src    string
	pos    int
	fields map[string]uint8
	names  []string // capture names
	syms   map[string][]uint16
	lits   map[string][]uint16
}

// qerr is a parse failure at byte pos, panicked by fail and recovered
// by Parse.
type qerr struct {
	pos int
	msg string
}

// at is e as an *Error, its position as line and column of src.
func (e *qerr) at(src string) *Error {
	off := min(e.pos, len(src))
	line, col := 1, 1
	for _, r := range src[:off] {
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	near := src[off:]
	if i := strings.IndexByte(near, '\n'); i >= 0 {
		near = near[:i]
	}
	if len(near) > 40 {
		near = near[:40]
	}
	return &Error{Line: line, Column: col, Problem: e.msg, Near: near}
}

func (p *qparser) fail(format string, args ...any) {
	panic(&qerr{p.pos, fmt.Sprintf(format, args...)})
}

func (p *qparser) skip() {
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		switch {
		case c == ';':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *qparser) peek() byte {
	p.skip()
	if p.pos >= len(p.src) {
		return 0
	}
	return p.src[p.pos]
}

// isIdent says whether c may be in a capture name (definition.function)
// or a bare predicate argument.
func isIdent(c byte) bool {
	return c == '_' || c == '-' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func (p *qparser) ident() string {
	p.skip()
	start := p.pos
	for p.pos < len(p.src) && isIdent(p.src[p.pos]) {
		p.pos++
	}
	if start == p.pos {
		p.fail("expected a name")
	}
	return p.src[start:p.pos]
}

// word reads a node type or field name (letters, digits, _).
func (p *qparser) word() string {
	p.skip()
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			p.pos++
			continue
		}
		break
	}
	if start == p.pos {
		p.fail("expected a node type or field name")
	}
	return p.src[start:p.pos]
}

func (p *qparser) str() string {
	p.skip()
	if p.peek() != '"' {
		p.fail("expected a string")
	}
	p.pos++
	var b strings.Builder
	for p.pos < len(p.src) && p.src[p.pos] != '"' {
		c := p.src[p.pos]
		if c == '\\' && p.pos+1 < len(p.src) {
			p.pos++
			switch p.src[p.pos] {
			case 'n':
				c = '\n'
			case 't':
				c = '\t'
			default:
				c = p.src[p.pos]
			}
		}
		b.WriteByte(c)
		p.pos++
	}
	if p.pos >= len(p.src) {
		p.fail("unterminated string")
	}
	p.pos++
	return b.String()
}

func (p *qparser) capture() int {
	p.pos++ // @
	name := p.ident()
	for i, n := range p.names {
		if n == name {
			return i
		}
	}
	p.names = append(p.names, name)
	return len(p.names) - 1
}

func (p *qparser) captures(n *Node) {
	for p.peek() == '@' {
		n.Captures = append(n.Captures, p.capture())
	}
}

func (p *qparser) field(name string) uint8 {
	id, ok := p.fields[name]
	if !ok {
		p.fail("unknown field %q", name)
	}
	return id
}

// item reads one pattern: a node, an alternation, _ or a string, with its
// captures; predicates met inside nodes go to preds.
func (p *qparser) item(preds *[]Predicate) *Node {
	var n *Node
	switch c := p.peek(); {
	case c == '(':
		n = p.node(preds)
	case c == '[':
		p.pos++
		n = &Node{Kind: KindAlt}
		for p.peek() != ']' {
			if p.peek() == 0 {
				p.fail("unclosed [")
			}
			n.Alts = append(n.Alts, p.item(preds))
		}
		p.pos++
		if len(n.Alts) == 0 {
			p.fail("empty alternation")
		}
	case c == '"':
		lit := p.str()
		syms := p.lits[lit]
		if len(syms) == 0 {
			p.fail("the grammar has no token %q", lit)
		}
		n = &Node{Kind: KindToken, Syms: syms}
	case c == '_':
		p.pos++
		n = &Node{Kind: KindAny}
	default:
		p.fail("expected (, [, _ or a string")
	}
	p.captures(n)
	return n
}

func (p *qparser) node(preds *[]Predicate) *Node {
	p.pos++ // (
	switch c := p.peek(); {
	case c == '(' || c == '[' || c == '"':
		// A group: one pattern and predicates, ((identifier) @x (#eq? @x "y")).
		var inner *Node
		for p.peek() != ')' {
			if p.peek() == 0 {
				p.fail("unclosed (")
			}
			if p.peek() == '(' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '#' {
				p.predicate(preds)
				continue
			}
			if inner != nil {
				p.fail("sibling sequences are not supported; write one pattern per group")
			}
			inner = p.item(preds)
		}
		p.pos++
		if inner == nil {
			p.fail("empty group")
		}
		return inner
	}
	var n *Node
	if p.peek() == '_' && p.pos+1 < len(p.src) && !isIdent(p.src[p.pos+1]) {
		p.pos++
		n = &Node{Kind: KindNamed}
	} else {
		typ := p.word()
		if typ == "ERROR" {
			n = &Node{Kind: KindError}
		} else {
			syms := p.syms[typ]
			if len(syms) == 0 {
				p.fail("unknown node type %q", typ)
			}
			n = &Node{Kind: KindType, Syms: syms}
		}
	}
	anchor := false
	for {
		switch c := p.peek(); {
		case c == ')':
			p.pos++
			if anchor {
				n.AnchorLast = true
			}
			return n
		case c == 0:
			p.fail("unclosed (")
		case c == '.':
			p.pos++
			anchor = true
		case c == '!':
			p.pos++
			n.NegFields = append(n.NegFields, p.field(p.word()))
		case c == '(' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '#':
			p.predicate(preds)
		default:
			ch := &Child{AnchorBefore: anchor}
			anchor = false
			// field: child
			save := p.pos
			if c != '(' && c != '[' && c != '"' && c != '_' || c == '_' && p.pos+1 < len(p.src) && isIdent(p.src[p.pos+1]) {
				name := p.word()
				if p.peek() != ':' {
					p.pos = save
					p.fail("expected field: or a child pattern")
				}
				p.pos++
				ch.Field = p.field(name)
			}
			ch.Node = p.item(preds)
			if q := p.peek(); q == '?' || q == '*' || q == '+' {
				ch.Quant = q
				p.pos++
				p.captures(ch.Node)
			}
			n.Children = append(n.Children, ch)
		}
	}
}

func (p *qparser) predicate(preds *[]Predicate) {
	p.pos += 2 // (#
	start := p.pos
	for p.pos < len(p.src) && !strings.ContainsRune(" \t\n\r()", rune(p.src[p.pos])) {
		p.pos++
	}
	name := p.src[start:p.pos]
	var args []predArg
	for p.peek() != ')' {
		switch p.peek() {
		case 0:
			p.fail("unclosed predicate")
		case '@':
			p.pos++
			cn := p.ident()
			idx := -1
			for i, n := range p.names {
				if n == cn {
					idx = i
				}
			}
			if idx < 0 {
				p.fail("predicate names capture @%s, which the pattern does not define before it", cn)
			}
			args = append(args, predArg{capture: idx})
		case '"':
			args = append(args, predArg{capture: -1, text: p.str()})
		default:
			args = append(args, predArg{capture: -1, text: p.ident()})
		}
	}
	p.pos++
	pr, err := newPredicate(name, args)
	if err != nil {
		p.fail("%v", err)
	}
	if pr != nil {
		*preds = append(*preds, *pr)
	}
}

type predArg struct {
	capture int
	text    string
}

// Predicate is one #eq?, #match? or #any-of? condition of a pattern (or
// its #not- form) on the text of capture Capture.
type Predicate struct {
	Capture int
	// Other is, for #eq? between two captures, the capture whose text
	// must equal Capture's; else -1.
	Other  int
	Negate bool
	op     string // eq, match, any-of
	values []string
	re     *regexp.Regexp
}

// Test says whether text, capture Capture's, passes a predicate that
// compares it with values (Other < 0), before Negate.
func (p *Predicate) Test(text []byte) bool {
	switch p.op {
	case "eq":
		return string(text) == p.values[0]
	case "match":
		return p.re.Match(text)
	case "any-of":
		for _, v := range p.values {
			if string(text) == v {
				return true
			}
		}
	}
	return false
}

// newPredicate is the predicate name (without the #) with args, or nil
// for a directive.
func newPredicate(name string, args []predArg) (*Predicate, error) {
	if strings.HasSuffix(name, "!") {
		return nil, nil // a directive: nothing to check
	}
	p := Predicate{Other: -1}
	op := strings.TrimSuffix(name, "?")
	if rest, ok := strings.CutPrefix(op, "not-"); ok {
		p.Negate, op = true, rest
	}
	p.op = op
	if len(args) < 2 || args[0].capture < 0 {
		return nil, fmt.Errorf("#%s needs a capture and a value", name)
	}
	p.Capture = args[0].capture
	switch op {
	case "eq":
		if len(args) != 2 {
			return nil, fmt.Errorf("#%s takes two arguments", name)
		}
		if args[1].capture >= 0 {
			p.Other = args[1].capture
		} else {
			p.values = []string{args[1].text}
		}
	case "match":
		if len(args) != 2 || args[1].capture >= 0 {
			return nil, fmt.Errorf("#%s takes a capture and a regular expression", name)
		}
		re, err := regexp.Compile(args[1].text)
		if err != nil {
			return nil, fmt.Errorf("#%s: %w", name, err)
		}
		p.re = re
	case "any-of":
		for _, a := range args[1:] {
			if a.capture >= 0 {
				return nil, fmt.Errorf("#%s takes strings after its capture", name)
			}
			p.values = append(p.values, a.text)
		}
	default:
		return nil, fmt.Errorf("unknown predicate #%s (known: #eq?, #match?, #any-of? and their #not- forms)", name)
	}
	return &p, nil
}
