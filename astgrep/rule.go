package astgrep

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/internal/similar"
)

// ErrRuleAndPattern is returned for a query that gives both a pattern and
// a rule.
var ErrRuleAndPattern = errors.New("pattern and rule cannot both be given; to combine a pattern with other conditions, put it in the rule: {\"pattern\": ..., \"inside\": ...}")

// Compiled rules: a rule.Parsed tree compiled for one language.

type opKind uint8

const (
	opPattern opKind = iota
	opMeta           // a pattern that is a lone $NAME: any named node, bound
	opKind_
	opRegex
	opAll
	opAny
	opNot
	opInside
	opHas
	opPrecedes
	opFollows
	opMatches // a utility rule: subs[0], remembered per node (matcher.util)
)

// crule is a rule compiled for one language: its keys' checks in order.
type crule struct {
	ops []cop
	// syms is the set of node kinds the rule can match (nil: any), as
	// ast-grep's potential kinds.
	syms map[uint16]bool
	// lits are texts every file with a match contains: those of the
	// patterns a match needs (its own, those of all and matches, and those
	// of relational targets, which are in the same file); any and not add
	// none.
	lits map[string]bool
	// vars are the metavariable ids the rule reads or binds, sorted: its
	// result at a node depends only on their bindings.
	vars []int
}

type cop struct {
	kind     opKind
	pat      *pattern
	remap    []int // pattern metavariable index → rule metavariable id (-1 binds nothing)
	kindSyms []uint16
	re       *regexp.Regexp
	subs     []*crule
	stopEnd  bool
	stopRule *crule
	field    uint8 // 0: none
	util     int   // opMatches: the utility rule's number
}

// ruleProgram is a rule compiled for one language, ready to match.
type ruleProgram struct {
	root        *crule
	vars        []string
	multi       []bool
	constraints []ruleConstraint
	literals    [][]byte
}

type ruleConstraint struct {
	mv   int
	rule *crule
}

type ruleCompiler struct {
	ctx   context.Context
	e     *Engine
	l     *language
	pr    *rule.Parsed
	prog  *ruleProgram
	ids   map[string]int
	utils map[string]*crule
	utilN map[string]int
	kinds map[string][]uint16
}

// compileRule ties a parsed rule to language l: patterns compiled, kinds
// and fields resolved.
func (e *Engine) compileRule(ctx context.Context, l *language, pr *rule.Parsed) (*ruleProgram, error) {
	if err := l.load(); err != nil {
		return nil, err
	}
	rc := &ruleCompiler{ctx: ctx, e: e, l: l, pr: pr, prog: &ruleProgram{}, ids: map[string]int{}, utils: map[string]*crule{}, utilN: map[string]int{}}
	root, err := rc.compile(pr.Root, "rule")
	if err != nil {
		return nil, err
	}
	if root.syms == nil {
		return nil, &rule.Error{Path: "rule", Msg: "the rule can match a node of any kind (it has no pattern or kind that every match must satisfy), so it would test every node; add a kind or a pattern, e.g. beside a regex or a relational rule"}
	}
	rc.prog.root = root
	for _, c := range pr.Constraints {
		id, ok := rc.ids[c.Name]
		if !ok {
			return nil, &rule.Error{Path: "constraints." + c.Name, Msg: fmt.Sprintf("$%s is not a metavariable of the rule's patterns (they have: %s)", c.Name, rule.ListOrNone(rc.varNames()))}
		}
		if rc.prog.multi[id] {
			return nil, &rule.Error{Path: "constraints." + c.Name, Msg: fmt.Sprintf("$$$%s is a run of nodes; a constraint applies to a single-node metavariable ($%s)", c.Name, c.Name)}
		}
		cr, err := rc.compile(c.Rule, "constraints."+c.Name)
		if err != nil {
			return nil, err
		}
		rc.prog.constraints = append(rc.prog.constraints, ruleConstraint{mv: id, rule: cr})
	}
	rc.prog.literals = topLiterals(root.lits)
	return rc.prog, nil
}

func (rc *ruleCompiler) varNames() []string {
	var out []string
	for i, n := range rc.prog.vars {
		if rc.prog.multi[i] {
			out = append(out, "$$$"+n)
		} else {
			out = append(out, "$"+n)
		}
	}
	return out
}

func (rc *ruleCompiler) compile(n *rule.Node, path string) (*crule, error) {
	c := &crule{lits: map[string]bool{}}
	need := func(sub *crule) {
		for k := range sub.lits {
			c.lits[k] = true
		}
	}
	narrow := func(s map[uint16]bool) {
		if s == nil {
			return
		}
		if c.syms == nil {
			c.syms = s
			return
		}
		in := map[uint16]bool{}
		for k := range s {
			if c.syms[k] {
				in[k] = true
			}
		}
		c.syms = in
	}
	if n.Pattern != nil {
		if lx, err := lexPattern(*n.Pattern); err == nil && lx.onlyMetavariable() && len(lx.vars) == 1 {
			v := lx.vars[0]
			if v.multi {
				return nil, &rule.Error{Path: path + ".pattern", Msg: "a lone $$$ run cannot be one node's match; use $NAME"}
			}
			id, err := rc.bind(v.name, false, path)
			if err != nil {
				return nil, err
			}
			c.ops = append(c.ops, cop{kind: opMeta, remap: []int{id}})
			goto kind
		}
	}
	if n.Pattern != nil {
		pat, err := rc.e.compile(rc.ctx, rc.l, *n.Pattern)
		if err != nil {
			return nil, fmt.Errorf("%s.pattern: %w", path, err)
		}
		if pat.root == nil {
			return nil, &rule.Error{Path: path + ".pattern", Msg: fmt.Sprintf("%q reads as a run of sibling nodes, not one node, so it cannot be one rule's match; match the parent with kind and has instead", *n.Pattern)}
		}
		op := cop{kind: opPattern, pat: pat, remap: make([]int, len(pat.vars))}
		for i, name := range pat.vars {
			if name == "" {
				op.remap[i] = -1
				continue
			}
			id, err := rc.bind(name, pat.multi[i], path)
			if err != nil {
				return nil, err
			}
			op.remap[i] = id
		}
		c.ops = append(c.ops, op)
		narrow(map[uint16]bool{pat.root.sym: true})
		for _, l := range pat.literals {
			c.lits[string(l)] = true
		}
	}
kind:
	if n.Kind != nil {
		syms, err := rc.kindSyms(*n.Kind, path+".kind")
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, cop{kind: opKind_, kindSyms: syms})
		s := map[uint16]bool{}
		for _, x := range syms {
			s[x] = true
		}
		narrow(s)
	}
	if n.Regex != nil {
		c.ops = append(c.ops, cop{kind: opRegex, re: n.Regex})
	}
	if n.HasAll {
		op := cop{kind: opAll}
		for i, s := range n.All {
			cs, err := rc.compile(s, fmt.Sprintf("%s.all[%d]", path, i))
			if err != nil {
				return nil, err
			}
			op.subs = append(op.subs, cs)
			narrow(cs.syms)
			need(cs)
		}
		c.ops = append(c.ops, op)
	}
	if n.HasAny {
		op := cop{kind: opAny}
		union := map[uint16]bool{}
		for i, s := range n.Any {
			cs, err := rc.compile(s, fmt.Sprintf("%s.any[%d]", path, i))
			if err != nil {
				return nil, err
			}
			op.subs = append(op.subs, cs)
			if union != nil && cs.syms != nil {
				for k := range cs.syms {
					union[k] = true
				}
			} else {
				union = nil
			}
		}
		c.ops = append(c.ops, op)
		narrow(union)
	}
	if n.Not != nil {
		cs, err := rc.compile(n.Not, path+".not")
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, cop{kind: opNot, subs: []*crule{cs}})
	}
	if n.Matches != "" {
		u, ok := rc.utils[n.Matches]
		if !ok {
			var err error
			if u, err = rc.compile(rc.pr.Utils[n.Matches], "utils."+n.Matches); err != nil {
				return nil, err
			}
			rc.utils[n.Matches] = u
			rc.utilN[n.Matches] = len(rc.utilN)
		}
		c.ops = append(c.ops, cop{kind: opMatches, subs: []*crule{u}, util: rc.utilN[n.Matches]})
		narrow(u.syms)
		need(u)
	}
	rels := []struct {
		r    *rule.Relation
		kind opKind
		key  string
	}{{n.Inside, opInside, "inside"}, {n.Has, opHas, "has"}, {n.Precedes, opPrecedes, "precedes"}, {n.Follows, opFollows, "follows"}}
	for _, x := range rels {
		if x.r == nil {
			continue
		}
		sub := path + "." + x.key
		cs, err := rc.compile(x.r.Rule, sub)
		if err != nil {
			return nil, err
		}
		need(cs)
		op := cop{kind: x.kind, subs: []*crule{cs}, stopEnd: x.r.StopEnd}
		if x.r.StopRule != nil {
			if op.stopRule, err = rc.compile(x.r.StopRule, sub+".stopBy"); err != nil {
				return nil, err
			}
		}
		if x.r.Field != "" {
			id, ok := rc.l.g.Fields[x.r.Field]
			if !ok {
				return nil, &rule.Error{Path: sub + ".field", Msg: fmt.Sprintf("the %s grammar has no field %q; %s", rc.l.id, x.r.Field, nearList(x.r.Field, mapKeys(rc.l.g.Fields)))}
			}
			op.field = id
		}
		c.ops = append(c.ops, op)
	}
	c.vars = opVars(c.ops)
	return c, nil
}

// opVars is the sorted set of metavariable ids ops read or bind.
func opVars(ops []cop) []int {
	seen := map[int]bool{}
	for _, op := range ops {
		if op.kind == opPattern || op.kind == opMeta {
			for _, id := range op.remap {
				if id >= 0 {
					seen[id] = true
				}
			}
		}
		for _, sub := range op.subs {
			for _, id := range sub.vars {
				seen[id] = true
			}
		}
		if op.stopRule != nil {
			for _, id := range op.stopRule.vars {
				seen[id] = true
			}
		}
	}
	out := make([]int, 0, len(seen))
	for id := range seen {
		out = append(out, id)
	}
	sort.Ints(out)
	return out
}

// bind returns the rule's id for metavariable name ("" or _X: -1).
func (rc *ruleCompiler) bind(name string, multi bool, path string) (int, error) {
	if name == "" || name[0] == '_' {
		return -1, nil
	}
	id, ok := rc.ids[name]
	if !ok {
		id = len(rc.prog.vars)
		rc.ids[name] = id
		rc.prog.vars = append(rc.prog.vars, name)
		rc.prog.multi = append(rc.prog.multi, multi)
	} else if rc.prog.multi[id] != multi {
		return 0, &rule.Error{Path: path + ".pattern", Msg: fmt.Sprintf("metavariable %s is used both as $%s and $$$%s in the rule; use two names", name, name, name)}
	}
	return id, nil
}

// kindSyms resolves a kind name to the grammar's named symbols of that
// name.
func (rc *ruleCompiler) kindSyms(kind, path string) ([]uint16, error) {
	if rc.kinds == nil {
		rc.kinds = map[string][]uint16{}
		rc.l.loadNames()
		for i, name := range rc.l.names {
			if int(i) < len(rc.l.g.Named) && rc.l.g.Named[i] == 1 {
				rc.kinds[name] = append(rc.kinds[name], uint16(i))
			}
		}
	}
	if syms, ok := rc.kinds[kind]; ok {
		return syms, nil
	}
	names := make([]string, 0, len(rc.kinds))
	for k := range rc.kinds {
		if !strings.HasPrefix(k, "_") {
			names = append(names, k)
		}
	}
	return nil, &rule.Error{Path: path, Msg: fmt.Sprintf("the %s grammar has no node kind %q; %s (ast_grep with operation dump shows a snippet's kinds)", rc.l.id, kind, nearList(kind, names))}
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// nearList names up to eight of names closest to s: those sharing a
// word with it first, then by edit distance.
func nearList(s string, names []string) string {
	type cand struct {
		name  string
		score int
	}
	var cs []cand
	ls := strings.ToLower(s)
	words := strings.FieldsFunc(ls, func(r rune) bool { return r == '_' || r == '-' || r == ' ' })
	for _, n := range names {
		ln := strings.ToLower(n)
		score := similar.Distance(ls, ln)
		if strings.Contains(ln, ls) || strings.Contains(ls, ln) {
			score -= 100
		}
		for _, w := range words {
			if len(w) >= 3 && strings.Contains(ln, w) {
				score -= 50
			}
		}
		cs = append(cs, cand{n, score})
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score < cs[j].score
		}
		return cs[i].name < cs[j].name
	})
	var out []string
	for i := 0; i < len(cs) && i < 8; i++ {
		out = append(out, cs[i].name)
	}
	if len(out) == 0 {
		return "it has none"
	}
	return "near ones: " + strings.Join(out, ", ")
}

// topLiterals keeps the longest few of a rule's required literals.
func topLiterals(set map[string]bool) [][]byte {
	lits := mapKeys(set)
	sort.Slice(lits, func(i, j int) bool {
		if len(lits[i]) != len(lits[j]) {
			return len(lits[i]) > len(lits[j])
		}
		return lits[i] < lits[j]
	})
	if len(lits) > 6 {
		lits = lits[:6]
	}
	out := make([][]byte, len(lits))
	for i, s := range lits {
		out[i] = []byte(s)
	}
	return out
}
