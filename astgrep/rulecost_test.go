package astgrep

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// doublingUtils is the M-3 attack's utilities: u0 … u(n-1) each an any of
// two matches of the next, un the leaf, so written out the rule is 2^n
// copies of the leaf.
func doublingUtils(n int, leaf map[string]any) map[string]any {
	utils := map[string]any{fmt.Sprintf("u%d", n): leaf}
	for k := range n {
		next := fmt.Sprintf("u%d", k+1)
		utils[fmt.Sprintf("u%d", k)] = map[string]any{"any": []any{map[string]any{"matches": next}, map[string]any{"matches": next}}}
	}
	return utils
}

// returns runs f, failing the test if it has not returned in two
// minutes: the defects here never returned at all.
func returns[T any](t *testing.T, f func() (T, error)) (T, error) {
	t.Helper()
	type out struct {
		v   T
		err error
	}
	ch := make(chan out, 1)
	go func() {
		v, err := f()
		ch <- out{v, err}
	}()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-time.After(2 * time.Minute):
		t.Fatal("the call did not return in two minutes")
		panic("unreachable")
	}
}

// R5: utilities that use one another twice over, 40 levels deep, are
// 2^40 checks at every node; operation test on a one-line snippet never
// returned and ignored cancellation. Such a rule is refused before any
// matching, naming the utility and the bound.
func TestRuleThatMultipliesThroughUtilsIsRefused(t *testing.T) {
	e := newTestEngine(t)
	spec := &rule.Spec{Rule: map[string]any{"matches": "u0"},
		Utils: doublingUtils(40, map[string]any{"kind": "identifier", "regex": "^NEVER$"})}
	_, err := returns(t, func() (*Result, error) {
		return e.MatchSnippet(t.Context(), Query{Rule: spec, Language: "go"}, []byte("package p\nvar x = y\n"))
	})
	var re *rule.Error
	if !errors.As(err, &re) || re.Path != "utils.u0" || !strings.Contains(re.Msg, fmt.Sprintf("more than %d rule objects once each matches is counted", rule.MaxExpanded)) ||
		!strings.Contains(re.Msg, "utils.u0 alone is more than") {
		t.Fatalf("got %v", err)
	}
}

// Under the bound, a utility used twice over at each of 13 levels is
// worked out once per node and level, not 2^13 times, and its bindings
// are kept: the matches and captures are those of the utility alone.
func TestSharedUtilsAreWorkedOutOncePerNode(t *testing.T) {
	e := newTestEngine(t)
	l := e.langs.lookup("go")
	src := "package p\n\nfunc f() {\n\tx := a + b*c\n\tg(x, y)\n}\n"
	direct, err := e.MatchSnippet(t.Context(), Query{Rule: &rule.Spec{Rule: map[string]any{"kind": "identifier", "pattern": "$A"}}, Language: "go"}, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	spec := &rule.Spec{Rule: map[string]any{"matches": "u0"}, Utils: doublingUtils(13, map[string]any{"kind": "identifier", "pattern": "$A"})}
	shared, err := e.MatchSnippet(t.Context(), Query{Rule: spec, Language: "go"}, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := matchList(shared), matchList(direct); got != want || shared.Total != 8 {
		t.Fatalf("through shared utils:\n%s\nwant (%d):\n%s", got, direct.Total, want)
	}
	// The work: steps at each identifier grow with the levels, not 2^13.
	pr, err := rule.Parse(spec)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := e.compileRule(t.Context(), l, pr)
	if err != nil {
		t.Fatal(err)
	}
	p := tsnative.NewParser()
	defer p.Close()
	tr, err := e.parseWith(t.Context(), p, l, []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	m := (&compiled{prog: prog}).newMatcher()
	m.t = tr
	if n := m.countAll(); n != 8 {
		t.Fatalf("%d matches", n)
	}
	if m.rs.steps > 100*len(tr.nodes) {
		t.Fatalf("%d steps over %d nodes", m.rs.steps, len(tr.nodes))
	}
	t.Logf("%d steps over %d nodes", m.rs.steps, len(tr.nodes))
}

func matchList(r *Result) string {
	var b strings.Builder
	for _, m := range r.Matches {
		fmt.Fprintf(&b, "%d:%d-%d %q %q\n", m.StartLine, m.StartByte, m.EndByte, m.Text, m.Captures["A"].Text)
	}
	return b.String()
}

// nestedHas is a rule of depth has-in-has, each all the way down: at a
// deep tree its work grows as the depth to the power of levels, under
// every bound on the rule's size.
func nestedHas(levels int) map[string]any {
	r := map[string]any{"kind": "identifier", "regex": "^NEVER$"}
	for range levels {
		r = map[string]any{"kind": "parenthesized_expression", "has": map[string]any{"stopBy": "end", "all": []any{r}, "kind": "parenthesized_expression"}}
	}
	return r
}

// deepParens is a Go file whose one expression nests n parentheses.
func deepParens(n int) string {
	return "package p\n\nvar x = " + strings.Repeat("(", n) + "y" + strings.Repeat(")", n) + "\n"
}

// A rule whose matching at a file passes the step budget leaves that file
// out, saying so and what to change; on a snippet it is refused. Files
// within the budget are searched as before.
func TestRuleStepBudget(t *testing.T) {
	e := NewEngine(Options{MaxRuleSteps: 100_000})
	t.Cleanup(func() { e.Close() })
	root := testenv.Tree(t, map[string]string{"deep.go": deepParens(200), "flat.go": "package p\n\nvar z = (y)\n"})
	rule := &rule.Spec{Rule: map[string]any{"kind": "parenthesized_expression", "has": map[string]any{"stopBy": "end", "kind": "parenthesized_expression",
		"has": map[string]any{"stopBy": "end", "kind": "parenthesized_expression", "has": map[string]any{"stopBy": "end", "kind": "identifier", "regex": "^NEVER$"}}}}}
	res, err := returns(t, func() (*Result, error) {
		return e.Search(t.Context(), Query{Path: at(root), Rule: rule, Language: "go"})
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesSkipped != 1 || len(res.Skipped) != 1 || res.Skipped[0].File != "deep.go" ||
		!strings.Contains(res.Skipped[0].Reason, "matching the rule here took more than 100000 steps (the limit), so it was stopped; narrow the rule") ||
		!strings.HasSuffix(res.Skipped[0].Reason, "; the file is left out") || res.FilesScanned != 2 {
		t.Fatalf("%+v", res)
	}
	_, err = returns(t, func() (*Result, error) {
		return e.MatchSnippet(t.Context(), Query{Rule: rule, Language: "go"}, []byte(deepParens(200)))
	})
	if err == nil || !strings.Contains(err.Error(), "matching the rule on the snippet took more than 100000 steps (the limit), so it was stopped") {
		t.Fatalf("snippet: %v", err)
	}
}

// A rule's matching stops when its search is cancelled, between nodes
// and inside one node's work.
func TestRuleMatchingStopsWhenCancelled(t *testing.T) {
	e := NewEngine(Options{MaxRuleSteps: 1 << 62})
	t.Cleanup(func() { e.Close() })
	root := testenv.Tree(t, map[string]string{"deep.go": deepParens(400)})
	rule := &rule.Spec{Rule: nestedHas(6)}
	for _, where := range []string{"snippet", "search"} {
		t.Run(where, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			var cancelled time.Time
			time.AfterFunc(300*time.Millisecond, func() { cancelled = time.Now(); cancel() })
			_, err := returns(t, func() (*Result, error) {
				if where == "snippet" {
					return e.MatchSnippet(ctx, Query{Rule: rule, Language: "go"}, []byte(deepParens(400)))
				}
				return e.Search(ctx, Query{Path: at(root), Rule: rule, Language: "go"})
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want the context's error", err)
			}
			t.Logf("returned %v after the cancel", time.Since(cancelled))
		})
	}
}
