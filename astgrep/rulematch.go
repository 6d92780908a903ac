package astgrep

import (
	"encoding/binary"
	"errors"
	"slices"

	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// Rule matching over a flattened tree. Relational rules walk every node,
// named or not, comments included, as ast-grep does: has looks at children
// (stopBy neighbor) or all descendants in preorder (end); inside at the
// parent or all ancestors; precedes and follows at the next or previous
// sibling or all of them. A stopBy rule walks as far as the first node it
// matches, that node included. The first node that satisfies a relational
// rule wins and its bindings are kept; there is no backtracking into other
// candidates, as in ast-grep.

// ruleState is a matcher's per-tree state for rules.
type ruleState struct {
	prog    *ruleProgram
	parents []int32 // of m.t, when parentT == m.t
	parentT *tree
	scratch []binding
	// memo holds utility rules' results on this tree (see util).
	memo map[utilKey]utilResult
	key  []byte
	// steps counts the work on this tree against budget; at check the
	// budget and the search's context are looked at again.
	steps, check, budget int
}

// utilKey is a utility rule tried at a node with the bindings its
// metavariables had (env, encoded; "" when it has none).
type utilKey struct {
	util, node int32
	env        string
}

// utilResult is what the try gave: whether it matched, and the bindings
// it added.
type utilResult struct {
	ok   bool
	adds []binding
}

// Bounds on the work of matching a rule at one tree. Each op tried
// counts a step, and a pattern's own steps count too; the memo is emptied
// when it grows past maxUtilMemo entries (it is an optimisation only).
const (
	DefaultMaxRuleSteps = 50_000_000
	stepCheckEvery      = 4096
	maxUtilMemo         = 1 << 20
)

// errStepBudget stops a rule's matching at a tree past the step budget.
var errStepBudget = errors.New("the rule's step budget is spent")

// tick counts one step and reports whether matching must stop: the
// budget is spent or the search was cancelled (m.stopped says which).
func (m *matcher) tick(n int) bool {
	rs := m.rs
	rs.steps += n
	if rs.steps >= rs.check {
		rs.check = rs.steps + stepCheckEvery
		budget := rs.budget
		if budget <= 0 {
			budget = DefaultMaxRuleSteps
		}
		switch {
		case m.stopped != nil:
		case rs.steps > budget:
			m.stopped = errStepBudget
		case m.ctx != nil && m.ctx.Err() != nil:
			m.stopped = m.ctx.Err()
		}
	}
	return m.stopped != nil
}

// parentsOf returns each node's parent index (-1 for the root), built once
// per tree.
func (m *matcher) parentsOf() []int32 {
	rs := m.rs
	if rs.parentT == m.t {
		return rs.parents
	}
	nodes := m.t.nodes
	if cap(rs.parents) < len(nodes) {
		rs.parents = make([]int32, len(nodes))
	}
	ps := rs.parents[:len(nodes)]
	stack := make([]int32, 0, 64)
	for i := range nodes {
		for len(stack) > 0 && int(nodes[stack[len(stack)-1]].Last) <= i {
			stack = stack[:len(stack)-1]
		}
		if len(stack) == 0 {
			ps[i] = -1
		} else {
			ps[i] = stack[len(stack)-1]
		}
		stack = append(stack, int32(i))
	}
	rs.parents, rs.parentT = ps, m.t
	return ps
}

// scanRule finds every node the rule matches, in tree order (outer before
// inner), keeping them unless countOnly.
func (m *matcher) scanRule(countOnly bool) ([]rawMatch, int) {
	rs := m.rs
	prog := rs.prog
	if rs.memo == nil {
		rs.memo = map[utilKey]utilResult{}
	}
	clear(rs.memo)
	rs.steps, rs.check = 0, 0
	m.stopped = nil
	var out []rawMatch
	n := 0
	nodes := m.t.nodes
	for i := range nodes {
		if !prog.root.syms[nodes[i].Sym] {
			continue
		}
		if m.tick(1) {
			break
		}
		m.env, m.arena = m.env[:0], m.arena[:0]
		ok := m.rule(prog.root, i) && m.constraintsHold()
		if m.stopped != nil {
			break // the result may be wrong: a not of a cut-short try holds
		}
		if !ok {
			continue
		}
		n++
		if !countOnly {
			out = append(out, rawMatch{start: int(nodes[i].Start), end: int(nodes[i].End), env: append([]binding(nil), m.env...)})
		}
	}
	return out, n
}

func (m *matcher) constraintsHold() bool {
	for _, c := range m.rs.prog.constraints {
		for _, b := range m.env {
			if b.mv == c.mv {
				if !m.test(c.rule, b.node) {
					return false
				}
				break
			}
		}
	}
	return true
}

// test matches r at i with an empty environment, as ast-grep checks a
// stopBy rule or a constraint, leaving the current bindings alone.
func (m *matcher) test(r *crule, i int) bool {
	saved := m.env
	m.env = m.rs.scratch[:0]
	ok := m.rule(r, i)
	m.rs.scratch = m.env[:0]
	m.env = saved
	return ok
}

// rule reports whether node i matches r, adding r's bindings to m.env. On
// false the caller drops what was added.
func (m *matcher) rule(r *crule, i int) bool {
	for k := range r.ops {
		if !m.op(&r.ops[k], i) {
			return false
		}
	}
	return true
}

// try matches r at i, keeping its bindings only when it matches.
func (m *matcher) try(r *crule, i int) bool {
	mark := len(m.env)
	if m.rule(r, i) {
		return true
	}
	m.env = m.env[:mark]
	return false
}

func (m *matcher) op(op *cop, i int) bool {
	if m.tick(1) {
		return false
	}
	nodes := m.t.nodes
	switch op.kind {
	case opPattern:
		n := &nodes[i]
		if n.Sym != op.pat.root.sym || n.Flags&tsnative.FlagExtra != 0 {
			return false
		}
		savedP, savedRemap, savedSteps := m.p, m.remap, m.steps
		m.p, m.remap, m.steps = op.pat, op.remap, 0
		ok := m.matchNode(op.pat.root, i)
		used := m.steps
		m.p, m.remap, m.steps = savedP, savedRemap, savedSteps
		return !m.tick(used) && ok
	case opMeta:
		if nodes[i].Flags&tsnative.FlagNamed == 0 {
			return false
		}
		if op.remap[0] < 0 {
			return true
		}
		savedRemap := m.remap
		m.remap = op.remap
		ok := m.bindOne(0, i)
		m.remap = savedRemap
		return ok
	case opKind_:
		for _, s := range op.kindSyms {
			if nodes[i].Sym == s {
				return true
			}
		}
		return false
	case opRegex:
		return op.re.Match(m.t.text(i))
	case opAll:
		for _, s := range op.subs {
			if !m.rule(s, i) {
				return false
			}
		}
		return true
	case opAny:
		for _, s := range op.subs {
			if m.try(s, i) {
				return true
			}
		}
		return false
	case opNot:
		mark := len(m.env)
		ok := m.rule(op.subs[0], i)
		m.env = m.env[:mark]
		return !ok
	case opHas:
		return m.has(op, i)
	case opInside:
		return m.inside(op, i)
	case opPrecedes, opFollows:
		return m.sibling(op, i)
	case opMatches:
		return m.util(op, i)
	}
	return false
}

// util matches a utility rule. Utilities are shared and may use each
// other several times over, so the same one is tried again and again at
// one node; its result there depends only on the node and on the
// bindings of its own metavariables, so it is worked out once for each
// and remembered with the bindings it added.
func (m *matcher) util(op *cop, i int) bool {
	u := op.subs[0]
	rs := m.rs
	key := utilKey{util: int32(op.util), node: int32(i)}
	if len(u.vars) > 0 {
		key.env = m.envKey(u.vars)
	}
	if r, ok := rs.memo[key]; ok {
		if r.ok {
			m.env = append(m.env, r.adds...)
		}
		return r.ok
	}
	mark := len(m.env)
	ok := m.rule(u, i)
	if m.stopped != nil {
		return false
	}
	r := utilResult{ok: ok}
	if ok && len(m.env) > mark {
		r.adds = slices.Clone(m.env[mark:])
	}
	if len(rs.memo) >= maxUtilMemo {
		clear(rs.memo)
	}
	rs.memo[key] = r
	return ok
}

// envKey encodes the bindings of vars in m.env.
func (m *matcher) envKey(vars []int) string {
	b := m.rs.key[:0]
	for _, v := range vars {
		k := slices.IndexFunc(m.env, func(e binding) bool { return e.mv == v })
		switch {
		case k < 0:
			b = append(b, 'u')
		case m.rs.prog.multi[v]:
			e := m.env[k]
			b = append(b, 'r')
			b = binary.AppendVarint(b, int64(len(e.nodes)))
			for _, n := range e.nodes {
				b = binary.AppendVarint(b, int64(n))
			}
		default:
			b = append(b, 'n')
			b = binary.AppendVarint(b, int64(m.env[k].node))
		}
	}
	m.rs.key = b
	return string(b)
}

// fieldChild is i's first child by field f, or -1.
func (m *matcher) fieldChild(i int, f uint8) int {
	nodes := m.t.nodes
	end := int(nodes[i].Last)
	for c := i + 1; c < end; c = int(nodes[c].Last) {
		if nodes[c].Field == f {
			return c
		}
	}
	return -1
}

func (m *matcher) has(op *cop, i int) bool {
	nodes := m.t.nodes
	sub := op.subs[0]
	if op.field != 0 {
		c := m.fieldChild(i, op.field)
		if c < 0 {
			return false
		}
		switch {
		case op.stopRule != nil:
			// ast-grep looks at the field child, then (unless it is where
			// the walk stops) at that child's children.
			if m.try(sub, c) {
				return true
			}
			if m.test(op.stopRule, c) {
				return false
			}
			end := int(nodes[c].Last)
			for k := c + 1; k < end; k = int(nodes[k].Last) {
				if !m.layout(k) && m.try(sub, k) {
					return true
				}
			}
			return false
		case op.stopEnd:
			end := int(nodes[c].Last)
			for k := c; k < end && m.stopped == nil; k++ {
				if !m.layout(k) && m.try(sub, k) {
					return true
				}
			}
			return false
		default:
			return m.try(sub, c)
		}
	}
	end := int(nodes[i].Last)
	switch {
	case op.stopRule != nil:
		// Descendants in preorder, not descending past a node the stop
		// rule matches (that node itself is tried).
		for k := i + 1; k < end && m.stopped == nil; {
			if !m.layout(k) && m.try(sub, k) {
				return true
			}
			if m.test(op.stopRule, k) {
				k = int(nodes[k].Last)
			} else {
				k++
			}
		}
		return false
	case op.stopEnd:
		for k := i + 1; k < end && m.stopped == nil; k++ {
			if !m.layout(k) && m.try(sub, k) {
				return true
			}
		}
		return false
	default:
		for k := i + 1; k < end && m.stopped == nil; k = int(nodes[k].Last) {
			if !m.layout(k) && m.try(sub, k) {
				return true
			}
		}
		return false
	}
}

func (m *matcher) inside(op *cop, i int) bool {
	ps := m.parentsOf()
	sub := op.subs[0]
	prev := i
	for a := int(ps[i]); a >= 0 && m.stopped == nil; a = int(ps[a]) {
		expect := prev
		prev = a
		stop := op.stopRule != nil && m.test(op.stopRule, a)
		if op.field == 0 || m.fieldChild(a, op.field) == expect {
			if m.try(sub, a) {
				return true
			}
		}
		if !op.stopEnd && op.stopRule == nil || stop {
			return false
		}
	}
	return false
}

// layout reports whether node i is an unnamed token of only blanks (Go's
// newline statement terminator). ast-grep's newer Go grammar has no such
// nodes between statements, so relational rules step over them.
func (m *matcher) layout(i int) bool {
	n := m.t.nodes[i]
	if n.Flags&(tsnative.FlagNamed|tsnative.FlagExtra) != 0 {
		return false
	}
	for _, c := range m.t.src[n.Start:n.End] {
		if !isSpace(c) {
			return false
		}
	}
	return true
}

// sibling handles precedes (later siblings) and follows (earlier ones,
// nearest first).
func (m *matcher) sibling(op *cop, i int) bool {
	ps := m.parentsOf()
	p := int(ps[i])
	if p < 0 {
		return false
	}
	nodes := m.t.nodes
	var sibs []int
	if op.kind == opPrecedes {
		end := int(nodes[p].Last)
		for k := int(nodes[i].Last); k < end; k = int(nodes[k].Last) {
			sibs = append(sibs, k)
			if !op.stopEnd && op.stopRule == nil && !m.layout(k) {
				break
			}
		}
	} else {
		for k := p + 1; k < i; k = int(nodes[k].Last) {
			sibs = append(sibs, k)
		}
		for a, b := 0, len(sibs)-1; a < b; a, b = a+1, b-1 {
			sibs[a], sibs[b] = sibs[b], sibs[a]
		}
	}
	sub := op.subs[0]
	for _, k := range sibs {
		if m.stopped != nil {
			return false
		}
		if m.layout(k) {
			continue
		}
		stop := op.stopRule != nil && m.test(op.stopRule, k)
		if m.try(sub, k) {
			return true
		}
		if !op.stopEnd && op.stopRule == nil || stop {
			return false
		}
	}
	return false
}
