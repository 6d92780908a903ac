package astgrep

import (
	"context"
	"errors"
	"fmt"
	"github.com/builtin-tools/builtin-tools/internal/similar"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// A rule is ast-grep's rule object (https://ast-grep.github.io/reference/rule.html),
// read here from the JSON an agent sends: atomic keys (pattern, kind,
// regex), relational keys (inside, has, precedes, follows, each a rule with
// stopBy and, for inside and has, field) and composite keys (all, any,
// not, matches). A node matches a rule object when it matches every key
// present, tried in ast-grep's order: atomic, then composite, then
// relational, so metavariables are bound the same way. Metavariables are
// shared by the whole rule: a $A bound by one pattern must capture the
// same text wherever else $A appears.

// RuleSpec is a rule with what it refers to, as decoded from JSON
// (objects are map[string]any, lists []any).
type RuleSpec struct {
	// Rule is the rule object.
	Rule map[string]any
	// Constraints maps a metavariable (A or $A) to a rule its capture
	// must match; a metavariable the match did not bind is not checked.
	Constraints map[string]any
	// Utils are named rules that `matches` refers to.
	Utils map[string]any
}

// Limits on a rule. Real rules nest a handful of levels; the bounds keep
// a generated or hostile rule from exhausting the stack or the compiler.
// MaxRuleExpanded bounds the rule written out in full, each matches
// replaced by the utility rule it names: utilities that use others
// several times over multiply (40 levels of two uses are 2^40 objects).
const (
	MaxRuleDepth    = 64
	MaxRuleNodes    = 2000
	MaxRuleExpanded = 20 * MaxRuleNodes
)

// ErrRuleAndPattern is returned for a query that gives both a pattern and
// a rule.
var ErrRuleAndPattern = errors.New("pattern and rule cannot both be given; to combine a pattern with other conditions, put it in the rule: {\"pattern\": ..., \"inside\": ...}")

// RuleError is a rule that cannot be used: where in the rule (Path, like
// rule.all[1].inside) and what is wrong.
type RuleError struct {
	Path string
	Msg  string
}

// Error implements error.
func (e *RuleError) Error() string { return e.Path + ": " + e.Msg }

var (
	ruleKeys     = []string{"pattern", "kind", "regex", "inside", "has", "precedes", "follows", "all", "any", "not", "matches"}
	relationKeys = append(append([]string{}, ruleKeys...), "stopBy", "field")
	// Keys of ast-grep's vocabulary not built here.
	unbuiltKeys = map[string]string{
		"nthChild": "nthChild is not supported here; match the parent with has (stopBy: neighbor) instead",
		"range":    "range is not supported here; search a file and read its lines instead",
	}
)

// rnode is a parsed rule object, not yet tied to a language.
type rnode struct {
	pattern  *string
	kind     *string
	regex    *regexp.Regexp
	regexSrc string
	all      []*rnode
	any      []*rnode
	hasAll   bool
	hasAny   bool
	not      *rnode
	matches  string
	inside   *relation
	has      *relation
	precedes *relation
	follows  *relation
}

type relation struct {
	rule     *rnode
	stopEnd  bool
	stopRule *rnode
	field    string
}

// parsedRule is a RuleSpec checked for shape, cycles and limits.
type parsedRule struct {
	root        *rnode
	utils       map[string]*rnode
	constraints []parsedConstraint
}

type parsedConstraint struct {
	name string
	rule *rnode
}

type ruleParser struct {
	nodes int
}

// parseRuleSpec checks a rule's shape: known keys with the right types,
// no empty rule objects, no cycle through matches, within the limits.
func parseRuleSpec(spec *RuleSpec) (*parsedRule, error) {
	if spec == nil || len(spec.Rule) == 0 {
		return nil, &RuleError{Path: "rule", Msg: "the rule is empty; it needs a pattern or a kind at least, e.g. {\"kind\": \"call_expression\", \"inside\": {\"kind\": \"for_statement\", \"stopBy\": \"end\"}}"}
	}
	p := &ruleParser{}
	out := &parsedRule{utils: map[string]*rnode{}}
	names := slices.Sorted(maps.Keys(spec.Utils))
	for _, name := range names {
		obj, ok := spec.Utils[name].(map[string]any)
		if !ok {
			return nil, &RuleError{Path: "utils." + name, Msg: "a utility rule is a rule object"}
		}
		n, err := p.rule(obj, "utils."+name, 1, false)
		if err != nil {
			return nil, err
		}
		out.utils[name] = n
	}
	root, err := p.rule(spec.Rule, "rule", 1, false)
	if err != nil {
		return nil, err
	}
	out.root = root
	for _, name := range slices.Sorted(maps.Keys(spec.Constraints)) {
		obj, ok := spec.Constraints[name].(map[string]any)
		if !ok {
			return nil, &RuleError{Path: "constraints." + name, Msg: "a constraint is a rule object its metavariable's capture must match"}
		}
		mv := strings.TrimPrefix(name, "$")
		if mv == "" || !isNameStart(mv[0]) || strings.IndexFunc(mv, func(r rune) bool { return r > 127 || !isNameChar(byte(r)) }) >= 0 {
			return nil, &RuleError{Path: "constraints." + name, Msg: "a constraint is keyed by a metavariable name (upper-case letters, digits, _), like A or $A"}
		}
		n, err := p.rule(obj, "constraints."+name, 1, false)
		if err != nil {
			return nil, err
		}
		out.constraints = append(out.constraints, parsedConstraint{name: mv, rule: n})
	}
	// Every matches names a util, and no util reaches itself.
	check := func(n *rnode, path string) error {
		var err error
		walkRefs(n, func(ref string) {
			if err == nil && out.utils[ref] == nil {
				err = &RuleError{Path: path, Msg: fmt.Sprintf("matches %q names no utility rule; defined in utils: %s", ref, listOrNone(names))}
			}
		})
		return err
	}
	if err := check(out.root, "rule"); err != nil {
		return nil, err
	}
	for _, c := range out.constraints {
		if err := check(c.rule, "constraints."+c.name); err != nil {
			return nil, err
		}
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		switch state[name] {
		case 1:
			return &RuleError{Path: "utils." + name, Msg: fmt.Sprintf("the utility rules refer to each other in a cycle (%s), which would never finish matching; break the cycle", strings.Join(append(chain, name), " → "))}
		case 2:
			return nil
		}
		state[name] = 1
		if err := check(out.utils[name], "utils."+name); err != nil {
			return err
		}
		var err error
		walkRefs(out.utils[name], func(ref string) {
			if err == nil {
				err = visit(ref, append(chain, name))
			}
		})
		if err != nil {
			return err
		}
		state[name] = 2
		return nil
	}
	for _, name := range names {
		if err := visit(name, nil); err != nil {
			return nil, err
		}
	}
	if err := out.checkExpanded(); err != nil {
		return nil, err
	}
	return out, nil
}

// checkExpanded refuses a rule that, written out in full, has more than
// MaxRuleExpanded objects. The utils are acyclic here; sizes saturate.
func (pr *parsedRule) checkExpanded() error {
	const over = MaxRuleExpanded + 1
	sizes := map[string]int{}
	var size func(n *rnode) int
	size = func(n *rnode) int {
		if n == nil {
			return 0
		}
		total := 1
		add := func(k int) { total = min(total+k, over) }
		if n.matches != "" {
			k, ok := sizes[n.matches]
			if !ok {
				k = size(pr.utils[n.matches])
				sizes[n.matches] = k
			}
			add(k)
		}
		for _, c := range n.all {
			add(size(c))
		}
		for _, c := range n.any {
			add(size(c))
		}
		add(size(n.not))
		for _, r := range []*relation{n.inside, n.has, n.precedes, n.follows} {
			if r != nil {
				add(size(r.rule))
				add(size(r.stopRule))
			}
		}
		return total
	}
	total := size(pr.root)
	for _, c := range pr.constraints {
		total = min(total+size(c.rule), over)
	}
	if total <= MaxRuleExpanded {
		return nil
	}
	// Name the utility that weighs most, written out.
	heaviest, most := "", 0
	for name, k := range sizes {
		if k > most || k == most && name < heaviest {
			heaviest, most = name, k
		}
	}
	amount := fmt.Sprint(most)
	if most >= over {
		amount = fmt.Sprintf("more than %d", MaxRuleExpanded)
	}
	return &RuleError{Path: "utils." + heaviest, Msg: fmt.Sprintf("the rule has more than %d rule objects once each matches is counted as the utility rule it names (utils.%s alone is %s: utility rules that use others several times over multiply), and matching would repeat that work at every node; use each utility rule once (an any of its cases instead of several matches of it)", MaxRuleExpanded, heaviest, amount)}
}

// walkRefs calls f with every util name n refers to.
func walkRefs(n *rnode, f func(string)) {
	if n == nil {
		return
	}
	if n.matches != "" {
		f(n.matches)
	}
	for _, c := range n.all {
		walkRefs(c, f)
	}
	for _, c := range n.any {
		walkRefs(c, f)
	}
	walkRefs(n.not, f)
	for _, r := range []*relation{n.inside, n.has, n.precedes, n.follows} {
		if r != nil {
			walkRefs(r.rule, f)
			walkRefs(r.stopRule, f)
		}
	}
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func (p *ruleParser) rule(obj map[string]any, path string, depth int, rel bool) (*rnode, error) {
	if depth > MaxRuleDepth {
		return nil, &RuleError{Path: truncPath(path), Msg: fmt.Sprintf("the rule nests deeper than %d levels; flatten it (all/any lists, or a utility rule used with matches)", MaxRuleDepth)}
	}
	p.nodes++
	if p.nodes > MaxRuleNodes {
		return nil, &RuleError{Path: truncPath(path), Msg: fmt.Sprintf("the rule has more than %d rule objects; split it into several searches", MaxRuleNodes)}
	}
	valid := ruleKeys
	if rel {
		valid = relationKeys
	}
	n := &rnode{}
	keys := slices.Sorted(maps.Keys(obj))
	for _, k := range keys {
		if !contains(valid, k) {
			if msg, ok := unbuiltKeys[k]; ok {
				return nil, &RuleError{Path: path, Msg: msg}
			}
			msg := fmt.Sprintf("unknown key %q; valid keys here: %s", k, strings.Join(valid, ", "))
			if s := nearest(k, valid); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else if !rel && (k == "stopBy" || k == "field") {
				msg = fmt.Sprintf("%q belongs in a relational rule (the object under inside, has, precedes or follows), not here", k)
			}
			return nil, &RuleError{Path: path, Msg: msg}
		}
	}
	real := 0
	for _, k := range keys {
		v := obj[k]
		sub := path + "." + k
		switch k {
		case "stopBy", "field":
			continue
		case "pattern", "kind", "regex", "matches":
			s, ok := v.(string)
			if !ok {
				if k == "pattern" {
					if _, isObj := v.(map[string]any); isObj {
						return nil, &RuleError{Path: sub, Msg: "a pattern object (context and selector) is not supported here; give the pattern as a string: it is read in several contexts already, or match the node with kind and has"}
					}
				}
				return nil, &RuleError{Path: sub, Msg: fmt.Sprintf("%s takes a string, not %s", k, jsonType(v))}
			}
			if strings.TrimSpace(s) == "" {
				return nil, &RuleError{Path: sub, Msg: k + " is empty"}
			}
			switch k {
			case "pattern":
				n.pattern = &s
			case "kind":
				n.kind = &s
			case "regex":
				re, err := regexp.Compile(s)
				if err != nil {
					return nil, &RuleError{Path: sub, Msg: "bad regular expression: " + err.Error()}
				}
				n.regex, n.regexSrc = re, s
			case "matches":
				n.matches = s
			}
		case "all", "any":
			list, ok := v.([]any)
			if !ok {
				return nil, &RuleError{Path: sub, Msg: fmt.Sprintf("%s takes a list of rule objects, not %s", k, jsonType(v))}
			}
			var subs []*rnode
			for i, item := range list {
				o, ok := item.(map[string]any)
				if !ok {
					return nil, &RuleError{Path: fmt.Sprintf("%s[%d]", sub, i), Msg: "a rule object is expected, not " + jsonType(item)}
				}
				c, err := p.rule(o, fmt.Sprintf("%s[%d]", sub, i), depth+1, false)
				if err != nil {
					return nil, err
				}
				subs = append(subs, c)
			}
			if k == "all" {
				n.all, n.hasAll = subs, true
			} else {
				n.any, n.hasAny = subs, true
			}
		case "not":
			o, ok := v.(map[string]any)
			if !ok {
				return nil, &RuleError{Path: sub, Msg: "not takes a rule object, not " + jsonType(v)}
			}
			c, err := p.rule(o, sub, depth+1, false)
			if err != nil {
				return nil, err
			}
			n.not = c
		case "inside", "has", "precedes", "follows":
			o, ok := v.(map[string]any)
			if !ok {
				return nil, &RuleError{Path: sub, Msg: k + " takes a rule object (with stopBy and field), not " + jsonType(v)}
			}
			r, err := p.relation(k, o, sub, depth+1)
			if err != nil {
				return nil, err
			}
			switch k {
			case "inside":
				n.inside = r
			case "has":
				n.has = r
			case "precedes":
				n.precedes = r
			case "follows":
				n.follows = r
			}
		}
		real++
	}
	if real == 0 {
		return nil, &RuleError{Path: path, Msg: "the rule object is empty (it would match nothing); give pattern, kind, regex or a relational or composite key"}
	}
	return n, nil
}

func (p *ruleParser) relation(k string, obj map[string]any, path string, depth int) (*relation, error) {
	r := &relation{}
	if v, ok := obj["stopBy"]; ok {
		switch s := v.(type) {
		case string:
			switch s {
			case "neighbor":
			case "end":
				r.stopEnd = true
			default:
				return nil, &RuleError{Path: path + ".stopBy", Msg: fmt.Sprintf("stopBy is \"neighbor\" (the default: only the %s), \"end\" or a rule object, not %q", neighborWord(k), s)}
			}
		case map[string]any:
			sr, err := p.rule(s, path+".stopBy", depth+1, false)
			if err != nil {
				return nil, err
			}
			r.stopRule = sr
		default:
			return nil, &RuleError{Path: path + ".stopBy", Msg: "stopBy is \"neighbor\", \"end\" or a rule object, not " + jsonType(v)}
		}
	}
	if v, ok := obj["field"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			return nil, &RuleError{Path: path + ".field", Msg: "field takes a field name (a string), like body or condition"}
		}
		if k == "precedes" || k == "follows" {
			return nil, &RuleError{Path: path + ".field", Msg: "field is only supported in has and inside"}
		}
		r.field = s
	}
	rule, err := p.rule(obj, path, depth, true)
	if err != nil {
		var re *RuleError
		if errors.As(err, &re) && re.Path == path && strings.HasPrefix(re.Msg, "the rule object is empty") {
			return nil, &RuleError{Path: path, Msg: k + " has no rule: give what the " + neighborWord(k) + " must match (pattern, kind, ...) beside stopBy and field"}
		}
		return nil, err
	}
	r.rule = rule
	return r, nil
}

func neighborWord(k string) string {
	switch k {
	case "inside":
		return "parent"
	case "has":
		return "children"
	case "precedes":
		return "next sibling"
	default:
		return "previous sibling"
	}
}

// truncPath keeps the error for a very deep rule readable.
func truncPath(p string) string {
	if len(p) > 200 {
		return p[:80] + "…" + p[len(p)-80:]
	}
	return p
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case float64, int, int64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// nearest returns the candidate closest to s when it is a plausible typo
// (same letters in another case, or an edit distance of at most 2).
func nearest(s string, cands []string) string {
	best, bestD := "", 3
	for _, c := range cands {
		if strings.EqualFold(strings.ReplaceAll(s, "_", ""), c) {
			return c
		}
		if d := similar.Distance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// Compiled rules.

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
	pr    *parsedRule
	prog  *ruleProgram
	ids   map[string]int
	utils map[string]*crule
	utilN map[string]int
	kinds map[string][]uint16
}

// compileRule ties a parsed rule to language l: patterns compiled, kinds
// and fields resolved.
func (e *Engine) compileRule(ctx context.Context, l *language, pr *parsedRule) (*ruleProgram, error) {
	if err := l.load(); err != nil {
		return nil, err
	}
	rc := &ruleCompiler{ctx: ctx, e: e, l: l, pr: pr, prog: &ruleProgram{}, ids: map[string]int{}, utils: map[string]*crule{}, utilN: map[string]int{}}
	root, err := rc.compile(pr.root, "rule")
	if err != nil {
		return nil, err
	}
	if root.syms == nil {
		return nil, &RuleError{Path: "rule", Msg: "the rule can match a node of any kind (it has no pattern or kind that every match must satisfy), so it would test every node; add a kind or a pattern, e.g. beside a regex or a relational rule"}
	}
	rc.prog.root = root
	for _, c := range pr.constraints {
		id, ok := rc.ids[c.name]
		if !ok {
			return nil, &RuleError{Path: "constraints." + c.name, Msg: fmt.Sprintf("$%s is not a metavariable of the rule's patterns (they have: %s)", c.name, listOrNone(rc.varNames()))}
		}
		if rc.prog.multi[id] {
			return nil, &RuleError{Path: "constraints." + c.name, Msg: fmt.Sprintf("$$$%s is a run of nodes; a constraint applies to a single-node metavariable ($%s)", c.name, c.name)}
		}
		cr, err := rc.compile(c.rule, "constraints."+c.name)
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

func (rc *ruleCompiler) compile(n *rnode, path string) (*crule, error) {
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
	if n.pattern != nil {
		if lx, err := lexPattern(*n.pattern); err == nil && lx.onlyMetavariable() && len(lx.vars) == 1 {
			v := lx.vars[0]
			if v.multi {
				return nil, &RuleError{Path: path + ".pattern", Msg: "a lone $$$ run cannot be one node's match; use $NAME"}
			}
			id, err := rc.bind(v.name, false, path)
			if err != nil {
				return nil, err
			}
			c.ops = append(c.ops, cop{kind: opMeta, remap: []int{id}})
			goto kind
		}
	}
	if n.pattern != nil {
		pat, err := rc.e.compile(rc.ctx, rc.l, *n.pattern)
		if err != nil {
			return nil, fmt.Errorf("%s.pattern: %w", path, err)
		}
		if pat.root == nil {
			return nil, &RuleError{Path: path + ".pattern", Msg: fmt.Sprintf("%q reads as a run of sibling nodes, not one node, so it cannot be one rule's match; match the parent with kind and has instead", *n.pattern)}
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
	if n.kind != nil {
		syms, err := rc.kindSyms(*n.kind, path+".kind")
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
	if n.regex != nil {
		c.ops = append(c.ops, cop{kind: opRegex, re: n.regex})
	}
	if n.hasAll {
		op := cop{kind: opAll}
		for i, s := range n.all {
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
	if n.hasAny {
		op := cop{kind: opAny}
		union := map[uint16]bool{}
		for i, s := range n.any {
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
	if n.not != nil {
		cs, err := rc.compile(n.not, path+".not")
		if err != nil {
			return nil, err
		}
		c.ops = append(c.ops, cop{kind: opNot, subs: []*crule{cs}})
	}
	if n.matches != "" {
		u, ok := rc.utils[n.matches]
		if !ok {
			var err error
			if u, err = rc.compile(rc.pr.utils[n.matches], "utils."+n.matches); err != nil {
				return nil, err
			}
			rc.utils[n.matches] = u
			rc.utilN[n.matches] = len(rc.utilN)
		}
		c.ops = append(c.ops, cop{kind: opMatches, subs: []*crule{u}, util: rc.utilN[n.matches]})
		narrow(u.syms)
		need(u)
	}
	rels := []struct {
		r    *relation
		kind opKind
		key  string
	}{{n.inside, opInside, "inside"}, {n.has, opHas, "has"}, {n.precedes, opPrecedes, "precedes"}, {n.follows, opFollows, "follows"}}
	for _, x := range rels {
		if x.r == nil {
			continue
		}
		sub := path + "." + x.key
		cs, err := rc.compile(x.r.rule, sub)
		if err != nil {
			return nil, err
		}
		need(cs)
		op := cop{kind: x.kind, subs: []*crule{cs}, stopEnd: x.r.stopEnd}
		if x.r.stopRule != nil {
			if op.stopRule, err = rc.compile(x.r.stopRule, sub+".stopBy"); err != nil {
				return nil, err
			}
		}
		if x.r.field != "" {
			id, ok := rc.l.g.fields[x.r.field]
			if !ok {
				return nil, &RuleError{Path: sub + ".field", Msg: fmt.Sprintf("the %s grammar has no field %q; %s", rc.l.id, x.r.field, nearList(x.r.field, mapKeys(rc.l.g.fields)))}
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
		return 0, &RuleError{Path: path + ".pattern", Msg: fmt.Sprintf("metavariable %s is used both as $%s and $$$%s in the rule; use two names", name, name, name)}
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
			if int(i) < len(rc.l.g.named) && rc.l.g.named[i] == 1 {
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
	return nil, &RuleError{Path: path, Msg: fmt.Sprintf("the %s grammar has no node kind %q; %s (ast_grep with operation dump shows a snippet's kinds)", rc.l.id, kind, nearList(kind, names))}
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
