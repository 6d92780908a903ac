package rule

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

func spec(t *testing.T, rule, constraints, utils string) *Spec {
	t.Helper()
	s := &Spec{}
	for _, x := range []struct {
		src string
		dst *map[string]any
	}{{rule, &s.Rule}, {constraints, &s.Constraints}, {utils, &s.Utils}} {
		if x.src != "" {
			if err := json.Unmarshal([]byte(x.src), x.dst); err != nil {
				t.Fatalf("%s: %v", x.src, err)
			}
		}
	}
	return s
}

// TestParseTree: every key lands in its field, constraints are in the order of
// their keys, named without the dollar, and utilities are parsed beside the rule.
func TestParseTree(t *testing.T) {
	pr, err := Parse(spec(t,
		`{"pattern": "f($A)", "regex": "^f", "inside": {"kind": "for_statement", "stopBy": "end", "field": "body"},
		  "not": {"has": {"kind": "x", "stopBy": {"kind": "block"}}}, "any": [], "all": [{"matches": "u"}]}`,
		`{"$B": {"kind": "identifier"}, "A": {"regex": "^err"}}`,
		`{"u": {"kind": "call_expression", "precedes": {"kind": "y"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	r := pr.Root
	if r.Pattern == nil || *r.Pattern != "f($A)" || r.Kind != nil || r.RegexSrc != "^f" || !r.Regex.MatchString("fx") {
		t.Errorf("atomic keys: pattern %v kind %v regex %q", r.Pattern, r.Kind, r.RegexSrc)
	}
	if in := r.Inside; in == nil || !in.StopEnd || in.StopRule != nil || in.Field != "body" || *in.Rule.Kind != "for_statement" {
		t.Errorf("inside: %+v", r.Inside)
	}
	if h := r.Not.Has; h == nil || h.StopEnd || h.StopRule == nil || *h.StopRule.Kind != "block" || *h.Rule.Kind != "x" {
		t.Errorf("not.has: %+v", r.Not.Has)
	}
	if !r.HasAny || len(r.Any) != 0 || !r.HasAll || len(r.All) != 1 || r.All[0].Matches != "u" {
		t.Errorf("composite keys: any %v (%v), all %v (%v)", r.Any, r.HasAny, r.All, r.HasAll)
	}
	if u := pr.Utils["u"]; u == nil || *u.Kind != "call_expression" || u.Precedes == nil || *u.Precedes.Rule.Kind != "y" {
		t.Errorf("utils: %+v", pr.Utils)
	}
	if len(pr.Constraints) != 2 || pr.Constraints[0].Name != "B" || pr.Constraints[1].Name != "A" || pr.Constraints[1].Rule.RegexSrc != "^err" {
		t.Errorf("constraints: %+v", pr.Constraints)
	}
}

// TestParseErrors: each malformed rule is an *Error at the place that is
// wrong, saying what to do.
func TestParseErrors(t *testing.T) {
	deep := `{"kind": "x"}`
	for range MaxDepth {
		deep = `{"not": ` + deep + `}`
	}
	wide := make([]string, MaxNodes)
	for i := range wide {
		wide[i] = `{"kind": "x"}`
	}
	doubling := map[string]any{"u40": map[string]any{"kind": "x"}}
	for i := 39; i >= 0; i-- {
		next := fmt.Sprintf("u%d", i+1)
		doubling[fmt.Sprintf("u%d", i)] = map[string]any{"any": []any{map[string]any{"matches": next}, map[string]any{"kind": "y", "matches": next}}}
	}
	utils, _ := json.Marshal(doubling)
	for _, c := range []struct {
		name, rule, constraints, utils string
		path, msg                      string
	}{
		{"empty", `{}`, "", "", "rule", "the rule is empty"},
		{"typo", `{"kind": "x", "inside": {"kind": "y", "stop_by": "end"}}`, "", "", "rule.inside", `did you mean "stopBy"?`},
		{"stopBy outside a relation", `{"kind": "x", "stopBy": "end"}`, "", "", "rule", `"stopBy" belongs in a relational rule`},
		{"unbuilt key", `{"kind": "x", "nthChild": 1}`, "", "", "rule", "nthChild is not supported"},
		{"wrong type", `{"kind": 3}`, "", "", "rule.kind", "kind takes a string, not a number"},
		{"pattern object", `{"pattern": {"context": "x"}}`, "", "", "rule.pattern", "a pattern object (context and selector) is not supported"},
		{"bad regex", `{"kind": "x", "regex": "("}`, "", "", "rule.regex", "bad regular expression"},
		{"empty object", `{"all": [{"kind": "x"}, {}]}`, "", "", "rule.all[1]", "the rule object is empty"},
		{"relation without rule", `{"kind": "x", "has": {"stopBy": "end"}}`, "", "", "rule.has", "has has no rule"},
		{"bad stopBy", `{"kind": "x", "inside": {"kind": "y", "stopBy": "far"}}`, "", "", "rule.inside.stopBy", `only the parent), "end" or a rule object, not "far"`},
		{"field on a sibling", `{"kind": "x", "follows": {"kind": "y", "field": "body"}}`, "", "", "rule.follows.field", "only supported in has and inside"},
		{"no such util", `{"matches": "u"}`, "", `{"v": {"kind": "x"}}`, "rule", `matches "u" names no utility rule; defined in utils: v`},
		{"cycle", `{"matches": "a"}`, "", `{"a": {"matches": "b"}, "b": {"any": [{"matches": "a"}]}}`, "utils.a", "a → b → a"},
		{"constraint name", `{"pattern": "f($A)"}`, `{"a": {"kind": "x"}}`, "", "constraints.a", "keyed by a metavariable name"},
		{"too deep", deep, "", "", "", fmt.Sprintf("nests deeper than %d levels", MaxDepth)},
		{"too many", `{"any": [` + strings.Join(wide, ",") + `]}`, "", "", "", fmt.Sprintf("more than %d rule objects; split it", MaxNodes)},
		{"too many written out", `{"matches": "u0"}`, "", string(utils), "utils.u0", fmt.Sprintf("more than %d rule objects once each matches is counted", MaxExpanded)},
	} {
		_, err := Parse(spec(t, c.rule, c.constraints, c.utils))
		var re *Error
		if !errors.As(err, &re) {
			t.Errorf("%s: %T %v, want an *Error", c.name, err, err)
			continue
		}
		if c.path != "" && re.Path != c.path || !strings.Contains(re.Msg, c.msg) {
			t.Errorf("%s: %q, want path %q and %q", c.name, err, c.path, c.msg)
		}
	}
}
