package astgrep

import (
	"fmt"
	"strings"
)

// A capture query is tree-sitter's query language (S-expression patterns
// with @captures, the format of a grammar's tags.scm), compiled here and
// run over flattened trees, so it reads the parse cache's trees and needs
// no C cursor. Supported: (type child...), (_ ...), _, "token", (ERROR),
// field: child, !field, alternations [...], the quantifiers ? * +, the
// anchor ., captures, and predicates. Children match in order, not
// necessarily adjacent; a child pattern that is a type or (_) matches
// named children only, as in tree-sitter.

type qkind uint8

const (
	qType  qkind = iota // (type ...): one of syms
	qNamed              // (_ ...): any named node
	qAny                // _: any node
	qLit                // "token": an unnamed node
	qAlt                // [a b]: any alternative
	qErr                // (ERROR ...)
)

type qnode struct {
	kind       qkind
	syms       []uint16
	alts       []*qnode
	children   []*qchild
	negFields  []uint8
	captures   []int
	anchorLast bool // a . after the last child: it must be the last named child
}

type qchild struct {
	field        uint8
	n            *qnode
	quant        byte // 0 exactly one, '?', '*', '+'
	anchorBefore bool // a . before it: adjacent to the previous child (or first)
}

// qpattern is one top-level pattern.
type qpattern struct {
	root  *qnode
	preds []predicate
}

type qparser struct {
	src   string
	pos   int
	l     *language
	names []string // capture names
	syms  map[string][]uint16
	lits  map[string][]uint16
}

type qerr struct {
	pos int
	msg string
}

func (e *qerr) Error() string { return e.msg }

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

func (p *qparser) captures(n *qnode) {
	for p.peek() == '@' {
		n.captures = append(n.captures, p.capture())
	}
}

func (p *qparser) field(name string) uint8 {
	id, ok := p.l.g.fields[name]
	if !ok {
		p.fail("unknown field %q", name)
	}
	return id
}

// item reads one pattern: a node, an alternation, _ or a string, with its
// captures; predicates met inside nodes go to preds.
func (p *qparser) item(preds *[]predicate) *qnode {
	var n *qnode
	switch c := p.peek(); {
	case c == '(':
		n = p.node(preds)
	case c == '[':
		p.pos++
		n = &qnode{kind: qAlt}
		for p.peek() != ']' {
			if p.peek() == 0 {
				p.fail("unclosed [")
			}
			n.alts = append(n.alts, p.item(preds))
		}
		p.pos++
		if len(n.alts) == 0 {
			p.fail("empty alternation")
		}
	case c == '"':
		lit := p.str()
		syms := p.lits[lit]
		if len(syms) == 0 {
			p.fail("the grammar has no token %q", lit)
		}
		n = &qnode{kind: qLit, syms: syms}
	case c == '_':
		p.pos++
		n = &qnode{kind: qAny}
	default:
		p.fail("expected (, [, _ or a string")
	}
	p.captures(n)
	return n
}

func (p *qparser) node(preds *[]predicate) *qnode {
	p.pos++ // (
	switch c := p.peek(); {
	case c == '(' || c == '[' || c == '"':
		// A group: one pattern and predicates, ((identifier) @x (#eq? @x "y")).
		var inner *qnode
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
	var n *qnode
	if p.peek() == '_' && p.pos+1 < len(p.src) && !isIdent(p.src[p.pos+1]) {
		p.pos++
		n = &qnode{kind: qNamed}
	} else {
		typ := p.word()
		if typ == "ERROR" {
			n = &qnode{kind: qErr}
		} else {
			syms := p.syms[typ]
			if len(syms) == 0 {
				p.fail("unknown node type %q", typ)
			}
			n = &qnode{kind: qType, syms: syms}
		}
	}
	anchor := false
	for {
		switch c := p.peek(); {
		case c == ')':
			p.pos++
			if anchor {
				n.anchorLast = true
			}
			return n
		case c == 0:
			p.fail("unclosed (")
		case c == '.':
			p.pos++
			anchor = true
		case c == '!':
			p.pos++
			n.negFields = append(n.negFields, p.field(p.word()))
		case c == '(' && p.pos+1 < len(p.src) && p.src[p.pos+1] == '#':
			p.predicate(preds)
		default:
			ch := &qchild{anchorBefore: anchor}
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
				ch.field = p.field(name)
			}
			ch.n = p.item(preds)
			if q := p.peek(); q == '?' || q == '*' || q == '+' {
				ch.quant = q
				p.pos++
				p.captures(ch.n)
			}
			n.children = append(n.children, ch)
		}
	}
}

func (p *qparser) predicate(preds *[]predicate) {
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
	pr, err := makePredicate(name, args)
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

// compileQuery parses src for l.
func compileQuery(l *language, src string) (pats []qpattern, names []string, err error) {
	p := &qparser{src: src, l: l, syms: map[string][]uint16{}, lits: map[string][]uint16{}}
	n := symbolCount(l.ts)
	for i := 0; i < n; i++ {
		name := l.symbolName(uint16(i))
		if l.g.named[i] == 1 {
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
			err = qe
		}
	}()
	for p.peek() != 0 {
		var preds []predicate
		root := p.item(&preds)
		pats = append(pats, qpattern{root: root, preds: preds})
	}
	return pats, p.names, nil
}

// capPair is one capture of a match in progress.
type capPair struct {
	capture int
	node    int
}

// qmatcher runs a compiled query over one tree. Matching allocates
// little once warm: children lists live on kids, a stack (each match
// call gives back what it took), and capture lists on caps, cleared
// before each pattern is tried at a node (a list may outlive the call
// that made it, as a quantifier's first match does).
type qmatcher struct {
	t    *tree
	stop bool // a visitor asked to stop: no more matches are emitted

	kids   []int
	caps   []capPair
	hits   []*firstHit // firstOf's, one per nesting level
	hitN   int
	frames []*assignFrame // assign's, one per nesting level
	frameN int

	// matchNode's continuation, bound once.
	emit    func(pattern int, caps []capPair)
	pattern int
	rootK   func([]capPair)
}

// maxArenaCaps bounds the capture lists one pattern at one node keeps on
// the matcher's stack (a quantifier over a long run copies its list per
// child); past it they go to the heap.
const maxArenaCaps = 1 << 16

func (m *qmatcher) children(i int) []int {
	start := len(m.kids)
	end := int(m.t.nodes[i].last)
	for c := i + 1; c < end; c = int(m.t.nodes[c].last) {
		m.kids = append(m.kids, c)
	}
	return m.kids[start:len(m.kids):len(m.kids)]
}

// withCaps returns caps followed by a capture of node for each of ids.
func (m *qmatcher) withCaps(caps []capPair, ids []int, node int) []capPair {
	if len(ids) == 0 {
		return caps
	}
	if len(m.caps)+len(caps)+len(ids) > maxArenaCaps {
		out := make([]capPair, len(caps), len(caps)+len(ids))
		copy(out, caps)
		for _, id := range ids {
			out = append(out, capPair{id, node})
		}
		return out
	}
	start := len(m.caps)
	m.caps = append(m.caps, caps...)
	for _, id := range ids {
		m.caps = append(m.caps, capPair{id, node})
	}
	return m.caps[start:len(m.caps):len(m.caps)]
}

// assignFrame is assign's continuation for a child matched at position
// at: go on with the next child pattern after it. Frames are kept on the
// matcher, one per nesting level, their continuations bound once.
type assignFrame struct {
	m    *qmatcher
	q    *qnode
	kids []int
	ci   int
	at   int
	k    func([]capPair)
	fn   func([]capPair) // cont, bound once
}

func (f *assignFrame) cont(c []capPair) {
	f.m.assign(f.q, f.kids, f.ci+1, f.at+1, f.at, c, f.k)
}

func (m *qmatcher) pushFrame(q *qnode, kids []int, ci int, k func([]capPair)) *assignFrame {
	if m.frameN == len(m.frames) {
		f := &assignFrame{m: m}
		f.fn = f.cont
		m.frames = append(m.frames, f)
	}
	f := m.frames[m.frameN]
	m.frameN++
	f.q, f.kids, f.ci, f.k = q, kids, ci, k
	return f
}

func (m *qmatcher) popFrame() {
	m.frameN--
	f := m.frames[m.frameN]
	f.q, f.kids, f.k = nil, nil, nil
}

// firstHit keeps the first match a firstOf call sees.
type firstHit struct {
	got []capPair
	ok  bool
	fn  func([]capPair) // take, bound once
}

func (h *firstHit) take(c []capPair) {
	if !h.ok {
		h.got, h.ok = c, true
	}
}

// firstOf returns the captures of the first way node c matches q.
func (m *qmatcher) firstOf(c int, q *qnode, caps []capPair) ([]capPair, bool) {
	if m.hitN == len(m.hits) {
		h := &firstHit{}
		h.fn = h.take
		m.hits = append(m.hits, h)
	}
	h := m.hits[m.hitN]
	m.hitN++
	h.got, h.ok = nil, false
	m.match(c, q, caps, h.fn)
	m.hitN--
	got, ok := h.got, h.ok
	h.got = nil
	return got, ok
}

func (m *qmatcher) named(i int) bool { return m.t.nodes[i].flags&flagNamed != 0 }

// kindOK says whether node i is of q's kind (alternations aside).
func (m *qmatcher) kindOK(i int, q *qnode) bool {
	nd := &m.t.nodes[i]
	switch q.kind {
	case qAny:
		return true
	case qNamed:
		return nd.flags&flagNamed != 0
	case qErr:
		return nd.flags&flagError != 0
	case qLit:
		if nd.flags&flagNamed != 0 {
			return false
		}
		fallthrough
	case qType:
		for _, s := range q.syms {
			if s == nd.sym {
				return true
			}
		}
	}
	return false
}

// eligible says whether child c may be matched by pattern q: types and
// (_) match named children only.
func (m *qmatcher) eligible(c int, q *qnode) bool {
	switch q.kind {
	case qAny, qLit:
		return true
	case qAlt:
		for _, a := range q.alts {
			if m.eligible(c, a) {
				return true
			}
		}
		return false
	}
	return m.named(c)
}

// match tries node i against q and calls k with the captures of each way
// it matches.
func (m *qmatcher) match(i int, q *qnode, caps []capPair, k func([]capPair)) {
	if q.kind == qAlt {
		kk := k
		if len(q.captures) > 0 {
			kk = func(c []capPair) { k(m.withCaps(c, q.captures, i)) }
		}
		for _, a := range q.alts {
			m.match(i, a, caps, kk)
		}
		return
	}
	if !m.kindOK(i, q) || m.cannot(i, q) {
		return
	}
	if len(q.negFields) > 0 || len(q.children) > 0 {
		mark := len(m.kids)
		kids := m.children(i)
		for _, f := range q.negFields {
			for _, c := range kids {
				if m.t.nodes[c].field == f {
					m.kids = m.kids[:mark]
					return
				}
			}
		}
		caps = m.withCaps(caps, q.captures, i)
		if len(q.children) == 0 {
			k(caps)
		} else {
			m.assign(q, kids, 0, 0, -1, caps, k)
		}
		m.kids = m.kids[:mark]
		return
	}
	k(m.withCaps(caps, q.captures, i))
}

// cannot says, without allocating, that node i lacks a child some
// required child pattern of q needs (one of the right field and kind):
// most candidate patterns fail this way, before any matching work.
func (m *qmatcher) cannot(i int, q *qnode) bool {
	end := int(m.t.nodes[i].last)
	for _, ch := range q.children {
		if ch.quant == '?' || ch.quant == '*' {
			continue
		}
		found := false
		for c := i + 1; c < end && !found; c = int(m.t.nodes[c].last) {
			if ch.field != 0 && m.t.nodes[c].field != ch.field {
				continue
			}
			found = m.eligible(c, ch.n) && m.shallowOK(c, ch.n)
		}
		if !found {
			return true
		}
	}
	return false
}

// shallowOK is kindOK looking into alternations.
func (m *qmatcher) shallowOK(c int, q *qnode) bool {
	if q.kind != qAlt {
		return m.kindOK(c, q)
	}
	for _, a := range q.alts {
		if m.shallowOK(c, a) {
			return true
		}
	}
	return false
}

// nextNamed returns the position of the first named child at or after j.
func (m *qmatcher) nextNamed(kids []int, j int) int {
	for j < len(kids) && !m.named(kids[j]) {
		j++
	}
	return j
}

// assign matches q's children from ci on against kids from j on; last is
// the position of the previous child matched (-1 before any).
func (m *qmatcher) assign(q *qnode, kids []int, ci, j, last int, caps []capPair, k func([]capPair)) {
	if ci == len(q.children) {
		if q.anchorLast && last >= 0 && m.nextNamed(kids, last+1) < len(kids) {
			return
		}
		k(caps)
		return
	}
	ch := q.children[ci]
	if ch.quant != 0 {
		m.assignRepeated(ch, kids, j, last, caps, m.firstOf, func(j, last int, caps []capPair) {
			m.assign(q, kids, ci+1, j, last, caps, k)
		})
		return
	}
	lo, hi := m.positions(ch, kids, j)
	var f *assignFrame
	for p := lo; p < hi; p++ {
		if !m.fits(ch, kids[p]) {
			continue
		}
		if f == nil {
			f = m.pushFrame(q, kids, ci, k)
		}
		f.at = p
		m.match(kids[p], ch.n, caps, f.fn)
	}
	if f != nil {
		m.popFrame()
	}
}

// fits says whether node c may be child ch: of its field, and eligible.
func (m *qmatcher) fits(ch *qchild, c int) bool {
	if ch.field != 0 && m.t.nodes[c].field != ch.field {
		return false
	}
	return m.eligible(c, ch.n)
}

// positions is the positions in kids child ch may take from position
// from: any, or, anchored, only the next named child.
func (m *qmatcher) positions(ch *qchild, kids []int, from int) (int, int) {
	if ch.anchorBefore {
		p := m.nextNamed(kids, from)
		return p, min(p+1, len(kids))
	}
	return from, len(kids)
}

// assignRepeated is assign for a child ch quantified '?', '*' or '+', the
// matcher's and the reference's it is tested against alike: each takes
// the first way a node matches (first, its own), and rest goes on with
// the next child from position j, after position last (its own assign).
func (m *qmatcher) assignRepeated(ch *qchild, kids []int, j, last int, caps []capPair,
	first func(c int, q *qnode, caps []capPair) ([]capPair, bool), rest func(j, last int, caps []capPair)) {
	if ch.quant == '?' {
		lo, hi := m.positions(ch, kids, j)
		for p := lo; p < hi; p++ {
			if m.fits(ch, kids[p]) {
				if c, ok := first(kids[p], ch.n, caps); ok {
					rest(p+1, p, c)
					return
				}
			}
		}
		rest(j, last, caps)
		return
	}
	// * and +
	n := 0
	p := j
	lastHit := last
	for p < len(kids) {
		if m.fits(ch, kids[p]) {
			if c, ok := first(kids[p], ch.n, caps); ok {
				caps, lastHit = c, p
				n++
			} else if n > 0 {
				break
			}
		}
		p++
	}
	if ch.quant == '+' && n == 0 {
		return
	}
	next := j
	if n > 0 {
		next = lastHit + 1
	}
	rest(next, lastHit, caps)
}

// runPatterns matches every pattern at every node, in tree order, until
// m.stop is set.
func runPatterns(m *qmatcher, q *CaptureQuery, emit func(pattern int, caps []capPair)) {
	for i := range m.t.nodes {
		if m.stop {
			return
		}
		matchNode(m, q, i, emit)
	}
}

// matchNode matches, at node i, the patterns of q whose root can be i's
// symbol, in pattern order.
func matchNode(m *qmatcher, q *CaptureQuery, i int, emit func(pattern int, caps []capPair)) {
	cands := q.anyRoot
	if s := int(m.t.nodes[i].sym); s < len(q.bySym) {
		cands = q.bySym[s]
	}
	if len(cands) == 0 {
		return
	}
	if m.rootK == nil {
		m.rootK = func(c []capPair) {
			if !m.stop {
				m.emit(m.pattern, c)
			}
		}
	}
	m.emit = emit
	for _, pi := range cands {
		if m.stop {
			return
		}
		m.pattern = pi
		m.caps = m.caps[:0]
		m.match(i, q.pats[pi].root, nil, m.rootK)
	}
}

// rootSyms indexes patterns by the symbols their root can be: by[s]
// lists, in pattern order, the patterns that can match a node of symbol s
// (those whose root can be anything included); any lists the latter
// alone, for symbols past the table (ERROR).
func rootSyms(pats []qpattern, nsyms int) (by [][]int, any []int) {
	by = make([][]int, nsyms)
	for pi, p := range pats {
		syms, ok := rootSet(p.root)
		if !ok {
			any = append(any, pi)
			for s := range by {
				by[s] = append(by[s], pi)
			}
			continue
		}
		for _, s := range syms {
			if int(s) < nsyms && (len(by[s]) == 0 || by[s][len(by[s])-1] != pi) {
				by[s] = append(by[s], pi)
			}
		}
	}
	return by, any
}

func rootSet(q *qnode) ([]uint16, bool) {
	switch q.kind {
	case qType, qLit:
		return q.syms, true
	case qAlt:
		var out []uint16
		for _, a := range q.alts {
			s, ok := rootSet(a)
			if !ok {
				return nil, false
			}
			out = append(out, s...)
		}
		return out, true
	}
	return nil, false
}
