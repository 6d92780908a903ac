package astgrep

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

func ruleOf(t testing.TB, src string) *rule.Spec {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(src), &m); err != nil {
		t.Fatalf("%s: %v", src, err)
	}
	return &rule.Spec{Rule: m}
}

const ruleSnippet = `package p

import "fmt"

func load() error {
	for i := 0; i < 3; i++ {
		fmt.Println(i)
		go func() { fmt.Println("x") }()
	}
	x := 1
	if x > 0 {
		return nil
	}
	return fmt.Errorf("no")
}

func TestLoad() {
	fmt.Println("t")
}
`

func searchRule(t *testing.T, e *Engine, root string, spec *rule.Spec) (*Result, error) {
	t.Helper()
	return e.Search(t.Context(), Query{Path: at(root), Rule: spec, Language: "go"})
}

// TestRuleSemantics checks what each kind of rule key matches on a small
// file, with the counts read off the source by hand.
func TestRuleSemantics(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": ruleSnippet})
	e := NewEngine(Options{})
	defer e.Close()
	cases := []struct {
		rule  string
		want  int
		first string
	}{
		{`{"pattern": "fmt.Println($A)"}`, 3, `fmt.Println(i)`},
		{`{"pattern": "fmt.Println($A)", "inside": {"kind": "for_statement", "stopBy": "end"}}`, 2, `fmt.Println(i)`},
		// stopBy neighbor (the default) is the parent only.
		{`{"kind": "call_expression", "inside": {"kind": "for_statement"}}`, 0, ``},
		{`{"pattern": "fmt.Println($A)", "not": {"inside": {"kind": "func_literal", "stopBy": "end"}}, "inside": {"kind": "function_declaration", "stopBy": "end"}}`, 2, `fmt.Println(i)`},
		{`{"kind": "function_declaration", "has": {"field": "name", "regex": "^Test"}}`, 1, "func TestLoad() {\n\tfmt.Println(\"t\")\n}"},
		{`{"kind": "short_var_declaration", "precedes": {"kind": "if_statement"}}`, 1, `x := 1`},
		{`{"kind": "if_statement", "follows": {"pattern": "x := 1"}}`, 1, "if x > 0 {\n\t\treturn nil\n\t}"},
		{`{"kind": "return_statement", "follows": {"kind": "for_statement", "stopBy": "end"}}`, 1, `return fmt.Errorf("no")`},
		{`{"any": [{"pattern": "return nil"}, {"pattern": "x := 1"}]}`, 2, `x := 1`},
		{`{"kind": "call_expression", "has": {"kind": "func_literal", "stopBy": {"kind": "block"}}}`, 1, "func() { fmt.Println(\"x\") }()"},
		// A metavariable bound twice must capture the same text.
		{`{"pattern": "$F($A)", "has": {"field": "function", "has": {"pattern": "$A", "kind": "identifier"}}}`, 0, ``},
		{`{"pattern": "$F($A)", "has": {"field": "arguments", "has": {"pattern": "$B", "kind": "identifier"}}}`, 1, `fmt.Println(i)`},
	}
	for _, c := range cases {
		res, err := searchRule(t, e, root, ruleOf(t, c.rule))
		if err != nil {
			t.Errorf("%s: %v", c.rule, err)
			continue
		}
		if res.Total != c.want {
			var got []string
			for _, m := range res.Matches {
				got = append(got, m.Text)
			}
			t.Errorf("%s: %d matches %q, want %d", c.rule, res.Total, got, c.want)
			continue
		}
		if c.want > 0 && res.Matches[0].Text != c.first {
			t.Errorf("%s: first match %q, want %q", c.rule, res.Matches[0].Text, c.first)
		}
	}
}

func TestRuleConstraintsAndUtils(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": ruleSnippet})
	e := NewEngine(Options{})
	defer e.Close()
	spec := ruleOf(t, `{"pattern": "fmt.Println($A)", "inside": {"matches": "loop", "stopBy": "end"}}`)
	spec.Constraints = map[string]any{"A": map[string]any{"kind": "identifier"}}
	spec.Utils = map[string]any{"loop": map[string]any{"kind": "for_statement"}}
	res, err := searchRule(t, e, root, spec)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || res.Matches[0].Captures["A"].Text != "i" {
		t.Fatalf("got %d matches %+v, want fmt.Println(i) with $A = i", res.Total, res.Matches)
	}
	if strings.Join(res.Metavariables, ",") != "$A" {
		t.Fatalf("metavariables %v", res.Metavariables)
	}
}

// TestRuleBadInput: every malformed rule is a *rule.Error saying what to do.
func TestRuleBadInput(t *testing.T) {
	root := testenv.Tree(t, map[string]string{"a.go": ruleSnippet})
	e := NewEngine(Options{})
	defer e.Close()
	deep := `{"kind": "identifier"}`
	for i := 0; i < 1000; i++ {
		deep = `{"kind": "block", "inside": ` + deep + `}`
	}
	cases := []struct {
		name  string
		spec  *rule.Spec
		wants []string
	}{
		{"unknown key", ruleOf(t, `{"kind": "identifier", "insde": {"kind": "block"}}`), []string{`unknown key "insde"`, "valid keys here: pattern, kind, regex, inside", `did you mean "inside"?`}},
		{"snake case", ruleOf(t, `{"kind": "identifier", "inside": {"kind": "block", "stop_by": "end"}}`), []string{`rule.inside: unknown key "stop_by"`, `did you mean "stopBy"?`}},
		{"stopBy outside a relation", ruleOf(t, `{"kind": "identifier", "stopBy": "end"}`), []string{`"stopBy" belongs in a relational rule`}},
		{"bad stopBy", ruleOf(t, `{"kind": "identifier", "inside": {"kind": "block", "stopBy": "forever"}}`), []string{`stopBy is "neighbor"`, `"forever"`}},
		{"unknown kind", ruleOf(t, `{"kind": "function_decl"}`), []string{`no node kind "function_decl"`, "function_declaration", "operation dump"}},
		{"unknown field", ruleOf(t, `{"kind": "if_statement", "has": {"field": "cond", "kind": "identifier"}}`), []string{`no field "cond"`, "condition"}},
		{"deep", ruleOf(t, deep), []string{"nests deeper than 64 levels"}},
		{"empty rule", &rule.Spec{Rule: map[string]any{}}, []string{"the rule is empty"}},
		{"empty object inside", ruleOf(t, `{"kind": "identifier", "not": {}}`), []string{"rule.not: the rule object is empty"}},
		{"relation without rule", ruleOf(t, `{"kind": "identifier", "inside": {"stopBy": "end"}}`), []string{"inside has no rule"}},
		{"any kind", ruleOf(t, `{"regex": "x"}`), []string{"can match a node of any kind", "add a kind or a pattern"}},
		{"unbuilt key", ruleOf(t, `{"kind": "identifier", "nthChild": 1}`), []string{"nthChild is not supported here"}},
		{"bad regex", ruleOf(t, `{"kind": "identifier", "regex": "("}`), []string{"rule.regex: bad regular expression"}},
		{"wrong type", ruleOf(t, `{"kind": 3}`), []string{"kind takes a string, not a number"}},
		{"field in precedes", ruleOf(t, `{"kind": "identifier", "precedes": {"kind": "block", "field": "body"}}`), []string{"field is only supported in has and inside"}},
		{"undefined util", ruleOf(t, `{"kind": "identifier", "matches": "nope"}`), []string{`matches "nope" names no utility rule`}},
		{"constraint on unknown var", &rule.Spec{Rule: map[string]any{"pattern": "fmt.Println($A)"}, Constraints: map[string]any{"B": map[string]any{"kind": "identifier"}}}, []string{"$B is not a metavariable", "$A"}},
		{"cycle", &rule.Spec{Rule: map[string]any{"matches": "a"}, Utils: map[string]any{
			"a": map[string]any{"any": []any{map[string]any{"kind": "identifier"}, map[string]any{"matches": "b"}}},
			"b": map[string]any{"not": map[string]any{"matches": "a"}},
		}}, []string{"cycle (a → b → a)"}},
		{"self cycle", &rule.Spec{Rule: map[string]any{"kind": "identifier", "matches": "a"}, Utils: map[string]any{
			"a": map[string]any{"kind": "identifier", "inside": map[string]any{"matches": "a"}},
		}}, []string{"cycle (a → a)"}},
		{"sequence pattern", ruleOf(t, `{"pattern": "$X := 1\nif $X > 0 { $$$B }"}`), []string{"run of sibling nodes"}},
	}
	for _, c := range cases {
		_, err := searchRule(t, e, root, c.spec)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var re *rule.Error
		if !errors.As(err, &re) {
			t.Errorf("%s: %T %v, want a *rule.Error", c.name, err, err)
		}
		for _, w := range c.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not say %q", c.name, err, w)
			}
		}
	}
	// A rule and a pattern at once.
	_, err := e.Search(t.Context(), Query{Path: at(root), Pattern: "x := 1", Rule: ruleOf(t, `{"kind": "identifier"}`)})
	if !errors.Is(err, ErrRuleAndPattern) {
		t.Fatalf("rule + pattern: %v", err)
	}
}

// TestRuleDeepInJSON: a rule nested past encoding/json's own limit is
// still an error, not a crash.
func TestRuleDeepInJSON(t *testing.T) {
	src := strings.Repeat(`{"not": `, 20000) + `{"kind": "identifier"}` + strings.Repeat(`}`, 20000)
	var m map[string]any
	if err := json.Unmarshal([]byte(src), &m); err == nil {
		_, err := rule.Parse(&rule.Spec{Rule: m})
		if err == nil {
			t.Fatal("a 20,000-deep rule was accepted")
		}
	}
}

// FuzzRule feeds the rule parser and compiler arbitrary JSON: every input
// is accepted or refused with an error, never a panic or a hang.
func FuzzRule(f *testing.F) {
	for _, c := range append(append([]rcase{}, goRules...), rcase{rule: `{"kind": "identifier", "insde": {}}`}, rcase{rule: `{"matches": "a"}`, utils: `{"a": {"matches": "a"}}`}, rcase{rule: `{"not": {"not": {"kind": "x"}}}`}) {
		f.Add(c.rule, c.utils, c.constraints)
	}
	// R5: utilities that use each other twice over, 40 and 12 levels.
	for _, n := range []int{40, 12} {
		utils, _ := json.Marshal(doublingUtils(n, map[string]any{"kind": "identifier", "regex": "^NEVER$"}))
		f.Add(`{"matches": "u0"}`, string(utils), "")
	}
	e := NewEngine(Options{})
	f.Cleanup(func() { e.Close() })
	l := e.langs.lookup("go")
	if err := l.load(); err != nil {
		f.Fatal(err)
	}
	p := tsnative.NewParser()
	f.Cleanup(p.Close)
	f.Fuzz(func(t *testing.T, ruleSrc, utils, constraints string) {
		spec := &rule.Spec{}
		if json.Unmarshal([]byte(ruleSrc), &spec.Rule) != nil {
			return
		}
		_ = json.Unmarshal([]byte(utils), &spec.Utils)
		_ = json.Unmarshal([]byte(constraints), &spec.Constraints)
		pr, err := rule.Parse(spec)
		if err != nil {
			var re *rule.Error
			if !errors.As(err, &re) {
				t.Fatalf("parse error %T %v is not a *rule.Error", err, err)
			}
			return
		}
		prog, err := e.compileRule(t.Context(), l, pr)
		if err != nil {
			return
		}
		tr, err := e.parseWith(t.Context(), p, l, []byte(ruleSnippet))
		if err != nil {
			t.Fatal(err)
		}
		m := (&compiled{prog: prog}).newMatcher()
		m.t = tr
		m.findAll()
	})
}

func TestDumpTreeAndMatchSnippet(t *testing.T) {
	e := NewEngine(Options{})
	defer e.Close()
	d, err := e.DumpTree(t.Context(), "go", []byte(ruleSnippet), 10, 10, 0)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, n := range d.Nodes {
		lines = append(lines, strings.Repeat(" ", n.Depth)+n.Field+":"+n.Kind)
	}
	got := strings.Join(lines, "\n")
	for _, want := range []string{"\n  body:block", "\n   :short_var_declaration", "\n    left:expression_list", "\n     :identifier"} {
		if !strings.Contains(got, want) {
			t.Errorf("dump of line 10 lacks %q:\n%s", want, got)
		}
	}
	if d.Errors != 0 || d.Total != len(d.Nodes) {
		t.Errorf("errors %d, total %d, shown %d", d.Errors, d.Total, len(d.Nodes))
	}
	if d, err := e.DumpTree(t.Context(), "go", []byte(ruleSnippet), 0, 0, 5); err != nil || len(d.Nodes) != 5 || d.Total <= 5 {
		t.Errorf("limit 5: %v, %d shown of %d", err, len(d.Nodes), d.Total)
	}
	if _, err := e.DumpTree(t.Context(), "nolang", []byte("x"), 0, 0, 0); err == nil {
		t.Error("unknown language dumped")
	}
	res, err := e.MatchSnippet(t.Context(), Query{Language: "go", Rule: ruleOf(t, `{"pattern": "fmt.Println($A)", "inside": {"kind": "func_literal", "stopBy": "end"}}`)}, []byte(ruleSnippet))
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != 1 || res.Matches[0].File != SnippetFile || res.Matches[0].Captures["A"].Text != `"x"` || res.Matches[0].StartLine != 8 {
		t.Fatalf("snippet match: %+v", res)
	}
}
