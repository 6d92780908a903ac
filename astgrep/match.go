package astgrep

import (
	"bytes"
	"context"
	"sort"

	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// stepLimit bounds the work spent trying the pattern at one node, so a
// pattern with several $$$ runs cannot go quadratic-squared on a huge block.
const stepLimit = 200_000

// binding is one metavariable's capture during a match.
type binding struct {
	mv int
	// node is the captured node for $NAME; for $$$NAME, nodes lists the run
	// and pos is where an empty run sits.
	node  int
	nodes []int
	pos   int
}

// rawMatch is a match before it is turned into a Match.
type rawMatch struct {
	start, end int // bytes
	env        []binding
}

// matcher runs one compiled pattern over one tree. Not safe for concurrent
// use; each worker has its own.
type matcher struct {
	t     *tree
	p     *pattern
	env   []binding
	steps int
	arena []int // children lists, used as a stack
	// remap, while a rule's pattern is matched, turns the pattern's
	// metavariable indexes into the rule's (-1 binds nothing).
	remap []int
	rs    *ruleState // set for a rule search
	// ctx is the search's: a rule's matching and the node loop stop when
	// it ends (nil: never).
	ctx context.Context
	// stopped says why the last scan stopped before the end of the tree:
	// errStepBudget or ctx's error; nil when it went through.
	stopped error
}

// gid is the binding id of pattern metavariable mv, or -1 when it binds
// nothing.
func (m *matcher) gid(mv int) int {
	if m.remap != nil {
		return m.remap[mv]
	}
	if m.p.vars[mv] == "" {
		return -1
	}
	return mv
}

// kids pushes i's non-extra children onto the arena and returns them; the
// caller pops with m.arena = m.arena[:mark].
func (m *matcher) kids(i int) []int {
	mark := len(m.arena)
	end := int(m.t.nodes[i].Last)
	for c := i + 1; c < end; c = int(m.t.nodes[c].Last) {
		if m.t.nodes[c].Flags&tsnative.FlagExtra == 0 {
			m.arena = append(m.arena, c)
		}
	}
	return m.arena[mark:len(m.arena):len(m.arena)]
}

// findAll returns every match in the tree, outer before inner.
func (m *matcher) findAll() []rawMatch {
	out, _ := m.scan(false)
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].start != out[b].start {
			return out[a].start < out[b].start
		}
		return out[a].end > out[b].end
	})
	return out
}

// countAll counts the matches findAll would return without keeping them:
// a file whose matches cannot be shown is only counted.
func (m *matcher) countAll() int {
	_, n := m.scan(true)
	return n
}

// scan finds every match, keeping them unless countOnly, and counts them.
func (m *matcher) scan(countOnly bool) ([]rawMatch, int) {
	if m.rs != nil {
		return m.scanRule(countOnly)
	}
	var out []rawMatch
	n := 0
	nodes := m.t.nodes
	m.stopped = nil
	if root := m.p.root; root != nil {
		want := root.sym
		for i := range nodes {
			if i&255 == 0 && m.cancelled() {
				break
			}
			if nodes[i].Sym != want || nodes[i].Flags&tsnative.FlagExtra != 0 {
				continue
			}
			m.env, m.steps, m.arena = m.env[:0], 0, m.arena[:0]
			if m.matchNode(root, i) {
				n++
				if !countOnly {
					out = append(out, rawMatch{start: int(nodes[i].Start), end: int(nodes[i].End), env: append([]binding(nil), m.env...)})
				}
			}
		}
		return out, n
	}
	seq := m.p.seq
	first := seq[0]
	for i := range nodes {
		if i&255 == 0 && m.cancelled() {
			break
		}
		if m.t.leaf(i) || nodes[i].Flags&tsnative.FlagExtra != 0 {
			continue
		}
		m.arena = m.arena[:0]
		cands := m.kids(i)
		for s := range cands {
			if (first.kind == pTerm || first.kind == pInternal) && nodes[cands[s]].Sym != first.sym {
				continue
			}
			m.env, m.steps = m.env[:0], 0
			ok, end := m.matchSeq(seq, 0, cands, s)
			if ok && end > s {
				n++
				if !countOnly {
					out = append(out, rawMatch{start: int(nodes[cands[s]].Start), end: int(nodes[cands[end-1]].End), env: append([]binding(nil), m.env...)})
				}
			}
		}
	}
	return out, n
}

// cancelled looks at the search's context; a pattern scan asks every 256
// nodes (each node's work is bounded by stepLimit), the test inline in
// its loop: a call per node cost a warm search about a tenth of its CPU.
func (m *matcher) cancelled() bool {
	if m.ctx != nil && m.ctx.Err() != nil {
		m.stopped = m.ctx.Err()
	}
	return m.stopped != nil
}

func (m *matcher) matchNode(p *pnode, ti int) bool {
	t := m.t
	n := &t.nodes[ti]
	switch p.kind {
	case pMeta:
		if n.Flags&tsnative.FlagNamed == 0 {
			return false
		}
		return m.bindOne(p.mv, ti)
	case pTerm:
		if n.Sym != p.sym {
			return false
		}
		return !p.named || bytes.Equal(t.src[n.Start:n.End], p.text)
	case pInternal:
		if n.Sym != p.sym {
			return false
		}
		mark := len(m.arena)
		cands := m.kids(ti)
		if len(cands) == 0 && len(p.children) > 0 {
			m.arena = m.arena[:mark]
			return false
		}
		ok, _ := m.matchSeq(p.children, 0, cands, 0)
		m.arena = m.arena[:mark]
		return ok && m.gapsEqual(p, ti)
	}
	return false
}

// matchSeq matches goals[gi:] against cands[ci:]. Children after the last
// goal are allowed (a pattern matches a node whose children start with the
// pattern's), like ast-grep's default strictness. It returns the index
// after the last candidate consumed.
func (m *matcher) matchSeq(goals []*pnode, gi int, cands []int, ci int) (bool, int) {
	m.steps++
	if m.steps > stepLimit {
		return false, 0
	}
	if gi == len(goals) {
		return true, ci
	}
	g := goals[gi]
	if g.kind == pMulti && lastGoal(goals, gi) {
		// A trailing run takes everything left (bar unnamed tokens at the
		// end), so `def $F(): $$$BODY` captures the body.
		end := len(cands)
		for end > ci && m.t.nodes[cands[end-1]].Flags&tsnative.FlagNamed == 0 {
			end--
		}
		if !m.bindRun(g.mv, cands[ci:end], m.posAt(cands, ci)) {
			return false, 0
		}
		return true, end
	}
	if g.kind == pMulti {
		// Shortest run first.
		for k := ci; k <= len(cands); k++ {
			mark := len(m.env)
			if m.bindRun(g.mv, cands[ci:k], m.posAt(cands, ci)) {
				if ok, end := m.matchSeq(goals, gi+1, cands, k); ok {
					if end < k {
						end = k
					}
					return true, end
				}
			}
			m.env = m.env[:mark]
			if m.steps > stepLimit {
				return false, 0
			}
		}
		return false, 0
	}
	if ci == len(cands) {
		for ; gi < len(goals); gi++ {
			switch {
			case goals[gi].kind == pMulti:
				if !m.bindRun(goals[gi].mv, nil, m.posAt(cands, ci)) {
					return false, 0
				}
			case goals[gi].optional:
			default:
				return false, 0
			}
		}
		return true, ci
	}
	mark := len(m.env)
	if m.matchNode(g, cands[ci]) {
		if ok, end := m.matchSeq(goals, gi+1, cands, ci+1); ok {
			return true, end
		}
	}
	m.env = m.env[:mark]
	if g.optional {
		if ok, end := m.matchSeq(goals, gi+1, cands, ci); ok {
			return true, end
		}
		m.env = m.env[:mark]
	}
	// An unnamed candidate token the pattern does not mention (a trailing
	// comma, Go's newline terminator) may be stepped over.
	if m.t.nodes[cands[ci]].Flags&tsnative.FlagNamed == 0 && (g.kind == pTerm || g.kind == pMeta) {
		return m.matchSeq(goals, gi, cands, ci+1)
	}
	return false, 0
}

// lastGoal reports whether goals[gi] is followed only by optional
// separators.
func lastGoal(goals []*pnode, gi int) bool {
	for _, g := range goals[gi+1:] {
		if !g.optional {
			return false
		}
	}
	return true
}

func (m *matcher) posAt(cands []int, ci int) int {
	if ci < len(cands) {
		return int(m.t.nodes[cands[ci]].Start)
	}
	if ci > 0 {
		return int(m.t.nodes[cands[ci-1]].End)
	}
	return -1
}

func (m *matcher) bindOne(mv, ti int) bool {
	if mv = m.gid(mv); mv < 0 {
		return true
	}
	for _, b := range m.env {
		if b.mv == mv {
			return bytes.Equal(m.t.text(b.node), m.t.text(ti))
		}
	}
	m.env = append(m.env, binding{mv: mv, node: ti})
	return true
}

func (m *matcher) bindRun(mv int, run []int, pos int) bool {
	if mv = m.gid(mv); mv < 0 {
		return true
	}
	for _, b := range m.env {
		if b.mv == mv {
			if len(b.nodes) != len(run) {
				return false
			}
			for i := range run {
				if !bytes.Equal(m.t.text(b.nodes[i]), m.t.text(run[i])) {
					return false
				}
			}
			return true
		}
	}
	m.env = append(m.env, binding{mv: mv, nodes: append([]int(nil), run...), pos: pos})
	return true
}

// gapsEqual compares the uncovered text inside the pattern node with the
// candidate's (string contents in grammars that hide them).
func (m *matcher) gapsEqual(p *pnode, ti int) bool {
	t := m.t
	n := t.nodes[ti]
	pos := int(n.Start)
	k := 0
	check := func(from, to int) bool {
		if to <= from {
			return true
		}
		g := t.src[from:to]
		if !hasNonSpace(g) {
			return true
		}
		g = bytes.TrimSpace(g)
		if k >= len(p.gaps) || string(g) != p.gaps[k] {
			return false
		}
		k++
		return true
	}
	end := int(n.Last)
	for c := ti + 1; c < end; c = int(t.nodes[c].Last) {
		if !check(pos, int(t.nodes[c].Start)) {
			return false
		}
		if e := int(t.nodes[c].End); e > pos {
			pos = e
		}
	}
	if !check(pos, int(n.End)) {
		return false
	}
	return k == len(p.gaps)
}

func hasNonSpace(b []byte) bool {
	for _, c := range b {
		switch c {
		case ' ', '\t', '\n', '\r', '\f', '\v':
		default:
			return true
		}
	}
	return false
}
