package scmmatch

import (
	"github.com/builtin-tools/builtin-tools/astgrep/scmquery"

	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// Cap is one capture of a match: the capture's index in the query and
// the node's in the tree.
type Cap struct {
	Capture int
	Node    int
}

// Query is a query's patterns indexed by the symbols their root can be.
// It is immutable and safe for concurrent use.
type Query struct {
	pats    []scmquery.Pattern
	bySym   [][]int
	anyRoot []int
}

// New indexes pats, read against a grammar of nsyms symbols.
func New(pats []scmquery.Pattern, nsyms int) *Query {
	q := &Query{pats: pats}
	q.bySym, q.anyRoot = rootSyms(pats, nsyms)
	return q
}

// Pattern is the query's i-th pattern, whose predicates a caller checks
// against the text of a match's captures.
func (q *Query) Pattern(i int) *scmquery.Pattern { return &q.pats[i] }

// Matcher runs a Query over one tree. Matching allocates little once
// warm: children lists live on kids, a stack (each match call gives back
// what it took), and capture lists on caps, cleared before each pattern
// is tried at a node (a list may outlive the call that made it, as a
// quantifier's first match does). Not safe for concurrent use.
type Matcher struct {
	nodes []tsnative.Node
	stop  bool // a visitor asked to stop: no more matches are emitted

	kids   []int
	caps   []Cap
	hits   []*firstHit // firstOf's, one per nesting level
	hitN   int
	frames []*assignFrame // assign's, one per nesting level
	frameN int

	// matchNode's continuation, bound once.
	emit    func(pattern int, caps []Cap)
	pattern int
	rootK   func([]Cap)
}

// Reset points m at a tree's nodes (preorder, as tsnative flattens
// them), with fresh stacks: a visitor that panicked may have left them
// used.
func (m *Matcher) Reset(nodes []tsnative.Node) {
	m.nodes, m.stop = nodes, false
	m.kids, m.caps, m.hitN, m.frameN = m.kids[:0], m.caps[:0], 0, 0
}

// Release lets go of the tree and of a rare huge file's lists, so they
// are not kept for the next.
func (m *Matcher) Release() {
	m.nodes, m.emit = nil, nil
	if cap(m.kids) > 1<<16 {
		m.kids = nil
	}
	m.caps = m.caps[:0]
}

// Stop ends the run: no more matches are emitted.
func (m *Matcher) Stop() { m.stop = true }

// maxArenaCaps bounds the capture lists one pattern at one node keeps on
// the matcher's stack (a quantifier over a long run copies its list per
// child); past it they go to the heap.
const maxArenaCaps = 1 << 16

func (m *Matcher) children(i int) []int {
	start := len(m.kids)
	end := int(m.nodes[i].Last)
	for c := i + 1; c < end; c = int(m.nodes[c].Last) {
		m.kids = append(m.kids, c)
	}
	return m.kids[start:len(m.kids):len(m.kids)]
}

// withCaps returns caps followed by a capture of node for each of ids.
func (m *Matcher) withCaps(caps []Cap, ids []int, node int) []Cap {
	if len(ids) == 0 {
		return caps
	}
	if len(m.caps)+len(caps)+len(ids) > maxArenaCaps {
		out := make([]Cap, len(caps), len(caps)+len(ids))
		copy(out, caps)
		for _, id := range ids {
			out = append(out, Cap{id, node})
		}
		return out
	}
	start := len(m.caps)
	m.caps = append(m.caps, caps...)
	for _, id := range ids {
		m.caps = append(m.caps, Cap{id, node})
	}
	return m.caps[start:len(m.caps):len(m.caps)]
}

// assignFrame is assign's continuation for a child matched at position
// at: go on with the next child pattern after it. Frames are kept on the
// matcher, one per nesting level, their continuations bound once.
type assignFrame struct {
	m    *Matcher
	q    *scmquery.Node
	kids []int
	ci   int
	at   int
	k    func([]Cap)
	fn   func([]Cap) // cont, bound once
}

func (f *assignFrame) cont(c []Cap) {
	f.m.assign(f.q, f.kids, f.ci+1, f.at+1, f.at, c, f.k)
}

func (m *Matcher) pushFrame(q *scmquery.Node, kids []int, ci int, k func([]Cap)) *assignFrame {
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

func (m *Matcher) popFrame() {
	m.frameN--
	f := m.frames[m.frameN]
	f.q, f.kids, f.k = nil, nil, nil
}

// firstHit keeps the first match a firstOf call sees.
type firstHit struct {
	got []Cap
	ok  bool
	fn  func([]Cap) // take, bound once
}

func (h *firstHit) take(c []Cap) {
	if !h.ok {
		h.got, h.ok = c, true
	}
}

// firstOf returns the captures of the first way node c matches q.
func (m *Matcher) firstOf(c int, q *scmquery.Node, caps []Cap) ([]Cap, bool) {
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

func (m *Matcher) named(i int) bool { return m.nodes[i].Flags&tsnative.FlagNamed != 0 }

// kindOK says whether node i is of q's kind (alternations aside).
func (m *Matcher) kindOK(i int, q *scmquery.Node) bool {
	nd := &m.nodes[i]
	switch q.Kind {
	case scmquery.KindAny:
		return true
	case scmquery.KindNamed:
		return nd.Flags&tsnative.FlagNamed != 0
	case scmquery.KindError:
		return nd.Flags&tsnative.FlagError != 0
	case scmquery.KindToken:
		if nd.Flags&tsnative.FlagNamed != 0 {
			return false
		}
		fallthrough
	case scmquery.KindType:
		for _, s := range q.Syms {
			if s == nd.Sym {
				return true
			}
		}
	}
	return false
}

// eligible says whether child c may be matched by pattern q: types and
// (_) match named children only.
func (m *Matcher) eligible(c int, q *scmquery.Node) bool {
	switch q.Kind {
	case scmquery.KindAny, scmquery.KindToken:
		return true
	case scmquery.KindAlt:
		for _, a := range q.Alts {
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
func (m *Matcher) match(i int, q *scmquery.Node, caps []Cap, k func([]Cap)) {
	if q.Kind == scmquery.KindAlt {
		kk := k
		if len(q.Captures) > 0 {
			kk = func(c []Cap) { k(m.withCaps(c, q.Captures, i)) }
		}
		for _, a := range q.Alts {
			m.match(i, a, caps, kk)
		}
		return
	}
	if !m.kindOK(i, q) || m.cannot(i, q) {
		return
	}
	if len(q.NegFields) > 0 || len(q.Children) > 0 {
		mark := len(m.kids)
		kids := m.children(i)
		for _, f := range q.NegFields {
			for _, c := range kids {
				if m.nodes[c].Field == f {
					m.kids = m.kids[:mark]
					return
				}
			}
		}
		caps = m.withCaps(caps, q.Captures, i)
		if len(q.Children) == 0 {
			k(caps)
		} else {
			m.assign(q, kids, 0, 0, -1, caps, k)
		}
		m.kids = m.kids[:mark]
		return
	}
	k(m.withCaps(caps, q.Captures, i))
}

// cannot says, without allocating, that node i lacks a child some
// required child pattern of q needs (one of the right field and kind):
// most candidate patterns fail this way, before any matching work.
func (m *Matcher) cannot(i int, q *scmquery.Node) bool {
	end := int(m.nodes[i].Last)
	for _, ch := range q.Children {
		if ch.Quant == '?' || ch.Quant == '*' {
			continue
		}
		found := false
		for c := i + 1; c < end && !found; c = int(m.nodes[c].Last) {
			if ch.Field != 0 && m.nodes[c].Field != ch.Field {
				continue
			}
			found = m.eligible(c, ch.Node) && m.shallowOK(c, ch.Node)
		}
		if !found {
			return true
		}
	}
	return false
}

// shallowOK is kindOK looking into alternations.
func (m *Matcher) shallowOK(c int, q *scmquery.Node) bool {
	if q.Kind != scmquery.KindAlt {
		return m.kindOK(c, q)
	}
	for _, a := range q.Alts {
		if m.shallowOK(c, a) {
			return true
		}
	}
	return false
}

// nextNamed returns the position of the first named child at or after j.
func (m *Matcher) nextNamed(kids []int, j int) int {
	for j < len(kids) && !m.named(kids[j]) {
		j++
	}
	return j
}

// assign matches q's children from ci on against kids from j on; last is
// the position of the previous child matched (-1 before any).
func (m *Matcher) assign(q *scmquery.Node, kids []int, ci, j, last int, caps []Cap, k func([]Cap)) {
	if m.assignEnd(q, kids, ci, j, last, caps, k, m.firstOf, m.assign) {
		return
	}
	ch := q.Children[ci]
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
		m.match(kids[p], ch.Node, caps, f.fn)
	}
	if f != nil {
		m.popFrame()
	}
}

// assignEnd is what assign does the same in the matcher and the reference
// it is tested against: past the last child, it checks a last anchor and
// calls k; for a quantified child, it walks the child's positions
// (assignRepeated, with first) and goes on with the next child (next, the
// caller's assign). It reports false for a plain child, which the caller
// places.
func (m *Matcher) assignEnd(q *scmquery.Node, kids []int, ci, j, last int, caps []Cap, k func([]Cap),
	first func(c int, q *scmquery.Node, caps []Cap) ([]Cap, bool),
	next func(q *scmquery.Node, kids []int, ci, j, last int, caps []Cap, k func([]Cap))) bool {
	if ci == len(q.Children) {
		if !q.AnchorLast || last < 0 || m.nextNamed(kids, last+1) >= len(kids) {
			k(caps)
		}
		return true
	}
	ch := q.Children[ci]
	if ch.Quant == 0 {
		return false
	}
	m.assignRepeated(ch, kids, j, last, caps, first, func(j, last int, caps []Cap) {
		next(q, kids, ci+1, j, last, caps, k)
	})
	return true
}

// fits says whether node c may be child ch: of its field, and eligible.
func (m *Matcher) fits(ch *scmquery.Child, c int) bool {
	if ch.Field != 0 && m.nodes[c].Field != ch.Field {
		return false
	}
	return m.eligible(c, ch.Node)
}

// positions is the positions in kids child ch may take from position
// from: any, or, anchored, only the next named child.
func (m *Matcher) positions(ch *scmquery.Child, kids []int, from int) (int, int) {
	if ch.AnchorBefore {
		p := m.nextNamed(kids, from)
		return p, min(p+1, len(kids))
	}
	return from, len(kids)
}

// assignRepeated is assign for a child ch quantified '?', '*' or '+', the
// matcher's and the reference's it is tested against alike: each takes
// the first way a node matches (first, its own), and rest goes on with
// the next child from position j, after position last (its own assign).
func (m *Matcher) assignRepeated(ch *scmquery.Child, kids []int, j, last int, caps []Cap,
	first func(c int, q *scmquery.Node, caps []Cap) ([]Cap, bool), rest func(j, last int, caps []Cap)) {
	if ch.Quant == '?' {
		lo, hi := m.positions(ch, kids, j)
		for p := lo; p < hi; p++ {
			if m.fits(ch, kids[p]) {
				if c, ok := first(kids[p], ch.Node, caps); ok {
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
			if c, ok := first(kids[p], ch.Node, caps); ok {
				caps, lastHit = c, p
				n++
			} else if n > 0 {
				break
			}
		}
		p++
	}
	if ch.Quant == '+' && n == 0 {
		return
	}
	next := j
	if n > 0 {
		next = lastHit + 1
	}
	rest(next, lastHit, caps)
}

// Run matches every pattern of q at every node, in tree order, and calls
// emit with each match's pattern and captures (in the order matched;
// valid only during the call) until Stop is called.
func (m *Matcher) Run(q *Query, emit func(pattern int, caps []Cap)) {
	for i := range m.nodes {
		if m.stop {
			return
		}
		m.At(q, i, emit)
	}
}

// At matches, at node i, the patterns of q whose root can be i's symbol,
// in pattern order, and calls emit as Run does.
func (m *Matcher) At(q *Query, i int, emit func(pattern int, caps []Cap)) {
	cands := q.anyRoot
	if s := int(m.nodes[i].Sym); s < len(q.bySym) {
		cands = q.bySym[s]
	}
	if len(cands) == 0 {
		return
	}
	if m.rootK == nil {
		m.rootK = func(c []Cap) {
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
		m.match(i, q.pats[pi].Root, nil, m.rootK)
	}
}

// rootSyms indexes patterns by the symbols their root can be: by[s]
// lists, in pattern order, the patterns that can match a node of symbol s
// (those whose root can be anything included); any lists the latter
// alone, for symbols past the table (ERROR).
func rootSyms(pats []scmquery.Pattern, nsyms int) (by [][]int, any []int) {
	by = make([][]int, nsyms)
	for pi, p := range pats {
		syms, ok := rootSet(p.Root)
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

func rootSet(q *scmquery.Node) ([]uint16, bool) {
	switch q.Kind {
	case scmquery.KindType, scmquery.KindToken:
		return q.Syms, true
	case scmquery.KindAlt:
		var out []uint16
		for _, a := range q.Alts {
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
