package rule

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/internal/similar"
)

// Spec is a rule with what it refers to, as decoded from JSON
// (objects are map[string]any, lists []any).
type Spec struct {
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
// MaxExpanded bounds the rule written out in full, each matches
// replaced by the utility rule it names: utilities that use others
// several times over multiply (40 levels of two uses are 2^40 objects).
const (
	MaxDepth    = 64
	MaxNodes    = 2000
	MaxExpanded = 20 * MaxNodes
)

// Error is a rule that cannot be used: where in the rule (Path, like
// rule.all[1].inside) and what is wrong.
type Error struct {
	Path string
	Msg  string
}

// Error implements error.
func (e *Error) Error() string { return e.Path + ": " + e.Msg }

var (
	ruleKeys     = []string{"pattern", "kind", "regex", "inside", "has", "precedes", "follows", "all", "any", "not", "matches"}
	relationKeys = append(append([]string{}, ruleKeys...), "stopBy", "field")
	// Keys of ast-grep's vocabulary not built here.
	unbuiltKeys = map[string]string{
		"nthChild": "nthChild is not supported here; match the parent with has (stopBy: neighbor) instead",
		"range":    "range is not supported here; search a file and read its lines instead",
	}
)

// Node is a parsed rule object, not yet tied to a language: one field
// per key, nil or empty when the key is absent.
type Node struct {
	// Atomic keys. Pattern and Kind are not empty when given; Regex is
	// compiled from RegexSrc.
	Pattern  *string
	Kind     *string
	Regex    *regexp.Regexp
	RegexSrc string
	// Composite keys. HasAll and HasAny tell an empty list from none.
	All    []*Node
	Any    []*Node
	HasAll bool
	HasAny bool
	Not    *Node
	// Matches names a utility rule (a key of Parsed.Utils).
	Matches string
	// Relational keys.
	Inside   *Relation
	Has      *Relation
	Precedes *Relation
	Follows  *Relation
}

// Relation is a relational key's value: the rule the related node must
// match and how far to look. With neither StopEnd nor StopRule only the
// nearest one is tried (stopBy: neighbor).
type Relation struct {
	Rule *Node
	// StopEnd is stopBy: end; StopRule is stopBy given as a rule object.
	StopEnd  bool
	StopRule *Node
	// Field, for inside and has only, is the grammar field the child sits in.
	Field string
}

// Parsed is a Spec checked for shape, cycles and limits.
type Parsed struct {
	Root  *Node
	Utils map[string]*Node
	// Constraints are in the sorted order of their keys in Spec.Constraints.
	Constraints []Constraint
}

// Constraint is a metavariable's constraint: Name without the dollar.
type Constraint struct {
	Name string
	Rule *Node
}

type parser struct {
	nodes int
}

// Parse checks a rule's shape: known keys with the right types,
// no empty rule objects, no cycle through matches, within the limits.
func Parse(spec *Spec) (*Parsed, error) {
	if spec == nil || len(spec.Rule) == 0 {
		return nil, &Error{Path: "rule", Msg: "the rule is empty; it needs a pattern or a kind at least, e.g. {\"kind\": \"call_expression\", \"inside\": {\"kind\": \"for_statement\", \"stopBy\": \"end\"}}"}
	}
	p := &parser{}
	out := &Parsed{Utils: map[string]*Node{}}
	names := slices.Sorted(maps.Keys(spec.Utils))
	for _, name := range names {
		obj, ok := spec.Utils[name].(map[string]any)
		if !ok {
			return nil, &Error{Path: "utils." + name, Msg: "a utility rule is a rule object"}
		}
		n, err := p.rule(obj, "utils."+name, 1, false)
		if err != nil {
			return nil, err
		}
		out.Utils[name] = n
	}
	root, err := p.rule(spec.Rule, "rule", 1, false)
	if err != nil {
		return nil, err
	}
	out.Root = root
	for _, name := range slices.Sorted(maps.Keys(spec.Constraints)) {
		obj, ok := spec.Constraints[name].(map[string]any)
		if !ok {
			return nil, &Error{Path: "constraints." + name, Msg: "a constraint is a rule object its metavariable's capture must match"}
		}
		mv := strings.TrimPrefix(name, "$")
		if mv == "" || !IsMetaStart(mv[0]) || strings.IndexFunc(mv, func(r rune) bool { return r > 127 || !IsMetaChar(byte(r)) }) >= 0 {
			return nil, &Error{Path: "constraints." + name, Msg: "a constraint is keyed by a metavariable name (upper-case letters, digits, _), like A or $A"}
		}
		n, err := p.rule(obj, "constraints."+name, 1, false)
		if err != nil {
			return nil, err
		}
		out.Constraints = append(out.Constraints, Constraint{Name: mv, Rule: n})
	}
	// Every matches names a util, and no util reaches itself.
	check := func(n *Node, path string) error {
		var err error
		walkRefs(n, func(ref string) {
			if err == nil && out.Utils[ref] == nil {
				err = &Error{Path: path, Msg: fmt.Sprintf("matches %q names no utility rule; defined in utils: %s", ref, ListOrNone(names))}
			}
		})
		return err
	}
	if err := check(out.Root, "rule"); err != nil {
		return nil, err
	}
	for _, c := range out.Constraints {
		if err := check(c.Rule, "constraints."+c.Name); err != nil {
			return nil, err
		}
	}
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(name string, chain []string) error
	visit = func(name string, chain []string) error {
		switch state[name] {
		case 1:
			return &Error{Path: "utils." + name, Msg: fmt.Sprintf("the utility rules refer to each other in a cycle (%s), which would never finish matching; break the cycle", strings.Join(append(chain, name), " → "))}
		case 2:
			return nil
		}
		state[name] = 1
		if err := check(out.Utils[name], "utils."+name); err != nil {
			return err
		}
		var err error
		walkRefs(out.Utils[name], func(ref string) {
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
// MaxExpanded objects. The utils are acyclic here; sizes saturate.
func (pr *Parsed) checkExpanded() error {
	const over = MaxExpanded + 1
	sizes := map[string]int{}
	var size func(n *Node) int
	size = func(n *Node) int {
		if n == nil {
			return 0
		}
		total := 1
		add := func(k int) { total = min(total+k, over) }
		if n.Matches != "" {
			k, ok := sizes[n.Matches]
			if !ok {
				k = size(pr.Utils[n.Matches])
				sizes[n.Matches] = k
			}
			add(k)
		}
		for _, c := range n.All {
			add(size(c))
		}
		for _, c := range n.Any {
			add(size(c))
		}
		add(size(n.Not))
		for _, r := range []*Relation{n.Inside, n.Has, n.Precedes, n.Follows} {
			if r != nil {
				add(size(r.Rule))
				add(size(r.StopRule))
			}
		}
		return total
	}
	total := size(pr.Root)
	for _, c := range pr.Constraints {
		total = min(total+size(c.Rule), over)
	}
	if total <= MaxExpanded {
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
		amount = fmt.Sprintf("more than %d", MaxExpanded)
	}
	return &Error{Path: "utils." + heaviest, Msg: fmt.Sprintf("the rule has more than %d rule objects once each matches is counted as the utility rule it names (utils.%s alone is %s: utility rules that use others several times over multiply), and matching would repeat that work at every node; use each utility rule once (an any of its cases instead of several matches of it)", MaxExpanded, heaviest, amount)}
}

// walkRefs calls f with every util name n refers to.
func walkRefs(n *Node, f func(string)) {
	if n == nil {
		return
	}
	if n.Matches != "" {
		f(n.Matches)
	}
	for _, c := range n.All {
		walkRefs(c, f)
	}
	for _, c := range n.Any {
		walkRefs(c, f)
	}
	walkRefs(n.Not, f)
	for _, r := range []*Relation{n.Inside, n.Has, n.Precedes, n.Follows} {
		if r != nil {
			walkRefs(r.Rule, f)
			walkRefs(r.StopRule, f)
		}
	}
}

// ListOrNone lists names in an Error's message, or says there are none;
// the compiler's errors about a rule use it too.
func ListOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

func (p *parser) rule(obj map[string]any, path string, depth int, rel bool) (*Node, error) {
	if depth > MaxDepth {
		return nil, &Error{Path: truncPath(path), Msg: fmt.Sprintf("the rule nests deeper than %d levels; flatten it (all/any lists, or a utility rule used with matches)", MaxDepth)}
	}
	p.nodes++
	if p.nodes > MaxNodes {
		return nil, &Error{Path: truncPath(path), Msg: fmt.Sprintf("the rule has more than %d rule objects; split it into several searches", MaxNodes)}
	}
	valid := ruleKeys
	if rel {
		valid = relationKeys
	}
	n := &Node{}
	keys := slices.Sorted(maps.Keys(obj))
	for _, k := range keys {
		if !contains(valid, k) {
			if msg, ok := unbuiltKeys[k]; ok {
				return nil, &Error{Path: path, Msg: msg}
			}
			msg := fmt.Sprintf("unknown key %q; valid keys here: %s", k, strings.Join(valid, ", "))
			if s := nearest(k, valid); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			} else if !rel && (k == "stopBy" || k == "field") {
				msg = fmt.Sprintf("%q belongs in a relational rule (the object under inside, has, precedes or follows), not here", k)
			}
			return nil, &Error{Path: path, Msg: msg}
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
						return nil, &Error{Path: sub, Msg: "a pattern object (context and selector) is not supported here; give the pattern as a string: it is read in several contexts already, or match the node with kind and has"}
					}
				}
				return nil, &Error{Path: sub, Msg: fmt.Sprintf("%s takes a string, not %s", k, jsonType(v))}
			}
			if strings.TrimSpace(s) == "" {
				return nil, &Error{Path: sub, Msg: k + " is empty"}
			}
			switch k {
			case "pattern":
				n.Pattern = &s
			case "kind":
				n.Kind = &s
			case "regex":
				re, err := regexp.Compile(s)
				if err != nil {
					return nil, &Error{Path: sub, Msg: "bad regular expression: " + err.Error()}
				}
				n.Regex, n.RegexSrc = re, s
			case "matches":
				n.Matches = s
			}
		case "all", "any":
			list, ok := v.([]any)
			if !ok {
				return nil, &Error{Path: sub, Msg: fmt.Sprintf("%s takes a list of rule objects, not %s", k, jsonType(v))}
			}
			var subs []*Node
			for i, item := range list {
				o, ok := item.(map[string]any)
				if !ok {
					return nil, &Error{Path: fmt.Sprintf("%s[%d]", sub, i), Msg: "a rule object is expected, not " + jsonType(item)}
				}
				c, err := p.rule(o, fmt.Sprintf("%s[%d]", sub, i), depth+1, false)
				if err != nil {
					return nil, err
				}
				subs = append(subs, c)
			}
			if k == "all" {
				n.All, n.HasAll = subs, true
			} else {
				n.Any, n.HasAny = subs, true
			}
		case "not":
			o, ok := v.(map[string]any)
			if !ok {
				return nil, &Error{Path: sub, Msg: "not takes a rule object, not " + jsonType(v)}
			}
			c, err := p.rule(o, sub, depth+1, false)
			if err != nil {
				return nil, err
			}
			n.Not = c
		case "inside", "has", "precedes", "follows":
			o, ok := v.(map[string]any)
			if !ok {
				return nil, &Error{Path: sub, Msg: k + " takes a rule object (with stopBy and field), not " + jsonType(v)}
			}
			r, err := p.relation(k, o, sub, depth+1)
			if err != nil {
				return nil, err
			}
			switch k {
			case "inside":
				n.Inside = r
			case "has":
				n.Has = r
			case "precedes":
				n.Precedes = r
			case "follows":
				n.Follows = r
			}
		}
		real++
	}
	if real == 0 {
		return nil, &Error{Path: path, Msg: "the rule object is empty (it would match nothing); give pattern, kind, regex or a relational or composite key"}
	}
	return n, nil
}

func (p *parser) relation(k string, obj map[string]any, path string, depth int) (*Relation, error) {
	r := &Relation{}
	if v, ok := obj["stopBy"]; ok {
		switch s := v.(type) {
		case string:
			switch s {
			case "neighbor":
			case "end":
				r.StopEnd = true
			default:
				return nil, &Error{Path: path + ".stopBy", Msg: fmt.Sprintf("stopBy is \"neighbor\" (the default: only the %s), \"end\" or a rule object, not %q", neighborWord(k), s)}
			}
		case map[string]any:
			sr, err := p.rule(s, path+".stopBy", depth+1, false)
			if err != nil {
				return nil, err
			}
			r.StopRule = sr
		default:
			return nil, &Error{Path: path + ".stopBy", Msg: "stopBy is \"neighbor\", \"end\" or a rule object, not " + jsonType(v)}
		}
	}
	if v, ok := obj["field"]; ok {
		s, isStr := v.(string)
		if !isStr || s == "" {
			return nil, &Error{Path: path + ".field", Msg: "field takes a field name (a string), like body or condition"}
		}
		if k == "precedes" || k == "follows" {
			return nil, &Error{Path: path + ".field", Msg: "field is only supported in has and inside"}
		}
		r.Field = s
	}
	rule, err := p.rule(obj, path, depth, true)
	if err != nil {
		var re *Error
		if errors.As(err, &re) && re.Path == path && strings.HasPrefix(re.Msg, "the rule object is empty") {
			return nil, &Error{Path: path, Msg: k + " has no rule: give what the " + neighborWord(k) + " must match (pattern, kind, ...) beside stopBy and field"}
		}
		return nil, err
	}
	r.Rule = rule
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

// IsMetaStart reports whether c can start a metavariable's name (after
// its dollars): an upper-case letter or _. Patterns and constraint keys
// share the syntax.
func IsMetaStart(c byte) bool { return c >= 'A' && c <= 'Z' || c == '_' }

// IsMetaChar reports whether c can continue a metavariable's name.
func IsMetaChar(c byte) bool { return IsMetaStart(c) || c >= '0' && c <= '9' }
