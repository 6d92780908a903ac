package astgrep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// rcase is one rule cross-checked against ast-grep: the rule object as
// JSON (which is also YAML, so ast-grep reads the same text), with
// optional constraints and utils.
type rcase struct {
	rule, constraints, utils string
	// ref, when set, is the rule ast-grep gets instead: its own
	// contextual-pattern workaround for a pattern it misreads (#646).
	ref string
	// grammar, when set, says why ast-grep's grammar (a newer
	// tree-sitter-go, whose blocks hold a statement_list) gives another
	// count; the test then checks the direction it names.
	grammar string
}

// Go rules over GOROOT/src.
var goRules = []rcase{
	{rule: `{"kind": "call_expression", "inside": {"kind": "for_statement", "stopBy": "end"}}`},
	{rule: `{"pattern": "defer $X.Close()", "inside": {"kind": "for_statement", "stopBy": "end"}}`},
	{rule: `{"kind": "function_declaration", "has": {"kind": "defer_statement", "stopBy": "end"}}`},
	{rule: `{"kind": "function_declaration", "not": {"has": {"kind": "return_statement", "stopBy": "end"}}}`},
	{rule: `{"kind": "if_statement", "has": {"field": "condition", "pattern": "err != nil"}}`},
	{rule: `{"kind": "if_statement", "has": {"field": "consequence", "has": {"kind": "return_statement"}}}`, grammar: "ours only: our block holds its statements directly; ast-grep's holds a statement_list, so return is a grandchild there"},
	{rule: `{"kind": "if_statement", "has": {"field": "consequence", "stopBy": "end", "kind": "return_statement"}}`},
	{rule: `{"pattern": "$X := $Y", "precedes": {"kind": "if_statement"}}`},
	{rule: `{"kind": "if_statement", "follows": {"pattern": "$X, err := $Y"}}`},
	{rule: `{"kind": "return_statement", "follows": {"kind": "defer_statement", "stopBy": "end"}}`},
	{rule: `{"kind": "go_statement", "precedes": {"kind": "expression_statement", "stopBy": "end"}}`},
	{rule: `{"any": [{"pattern": "panic($X)"}, {"pattern": "log.Fatal($$$A)"}]}`,
		ref: `{"any": [{"pattern": "panic($X)"}, {"pattern": {"context": "func t() { log.Fatal($$$A) }", "selector": "call_expression"}}]}`},
	{rule: `{"all": [{"kind": "call_expression"}, {"regex": "^fmt\\.Sprintf"}]}`},
	{rule: `{"kind": "identifier", "regex": "^[A-Z]{3,}$"}`},
	{rule: `{"kind": "call_expression", "inside": {"kind": "func_literal", "stopBy": "end"}, "not": {"inside": {"kind": "go_statement", "stopBy": "end"}}}`},
	{rule: `{"pattern": "$A == nil", "inside": {"kind": "if_statement", "field": "condition"}}`},
	{rule: `{"kind": "return_statement", "inside": {"kind": "func_literal", "stopBy": {"kind": "function_declaration"}}}`},
	{rule: `{"kind": "call_expression", "has": {"kind": "func_literal", "stopBy": {"kind": "block"}}}`},
	{rule: `{"matches": "lockCall", "precedes": {"pattern": "defer $M.Unlock()"}}`, utils: `{"lockCall": {"kind": "expression_statement", "has": {"pattern": "$M.Lock()"}}}`},
	{rule: `{"pattern": "$F($$$A)", "inside": {"matches": "inTest", "stopBy": "end"}}`, constraints: `{"F": {"regex": "^t\\.Fatal"}}`, utils: `{"inTest": {"kind": "function_declaration", "has": {"field": "name", "regex": "^Test"}}}`},
	{rule: `{"pattern": "$X.Close()"}`, constraints: `{"X": {"kind": "identifier"}}`},
	{rule: `{"kind": "type_switch_statement", "has": {"kind": "type_case", "stopBy": "end", "has": {"field": "type", "kind": "qualified_type"}}}`},
	{rule: `{"kind": "for_statement", "all": [{"has": {"kind": "range_clause"}}, {"has": {"kind": "block", "field": "body"}}]}`},
	{rule: `{"kind": "selector_expression", "has": {"field": "field", "regex": "^Err"}, "inside": {"kind": "return_statement", "stopBy": "end"}}`},
	{rule: `{"kind": "comment", "regex": "TODO"}`},
	{rule: `{"kind": "interpreted_string_literal", "inside": {"kind": "import_spec"}}`},
}

// TypeScript rules over the typescript package's declaration files.
var tsRules = []rcase{
	{rule: `{"kind": "method_signature", "inside": {"kind": "interface_declaration", "stopBy": "end"}}`},
	{rule: `{"kind": "interface_declaration", "has": {"kind": "extends_type_clause"}}`},
	{rule: `{"kind": "property_signature", "regex": "^readonly", "not": {"regex": "^[^:]*\\?:"}}`},
	{rule: `{"kind": "type_alias_declaration", "has": {"field": "value", "kind": "union_type"}}`},
	{rule: `{"kind": "comment", "precedes": {"kind": "interface_declaration"}}`},
	{rule: `{"kind": "method_signature", "follows": {"kind": "comment"}, "has": {"field": "name", "regex": "^to"}}`},
	{rule: `{"any": [{"kind": "function_signature"}, {"kind": "method_signature"}], "has": {"kind": "type_parameters"}}`},
	{rule: `{"kind": "predefined_type", "regex": "^any$", "inside": {"kind": "formal_parameters", "stopBy": "end"}}`},
	{rule: `{"kind": "property_signature", "has": {"field": "type", "has": {"kind": "array_type"}}, "inside": {"kind": "interface_declaration", "stopBy": "end"}}`},
	{rule: `{"kind": "enum_declaration", "has": {"kind": "enum_body", "has": {"kind": "enum_assignment"}}}`},
	{rule: `{"kind": "type_identifier", "regex": "^Promise$", "inside": {"kind": "type_annotation", "stopBy": {"kind": "method_signature"}}}`},
	{rule: `{"matches": "decl", "not": {"inside": {"kind": "module", "stopBy": "end"}}}`, utils: `{"decl": {"any": [{"kind": "interface_declaration"}, {"kind": "type_alias_declaration"}]}}`},
}

// ruleYAML renders c as an ast-grep rule document (JSON is YAML).
func ruleYAML(id, lang string, c rcase) string {
	s := fmt.Sprintf("id: %s\nlanguage: %s\nrule: %s\n", id, lang, c.rule)
	if c.constraints != "" {
		s += "constraints: " + c.constraints + "\n"
	}
	if c.utils != "" {
		s += "utils: " + c.utils + "\n"
	}
	return s
}

// decodeCase turns c into the rule.Spec an agent would send.
func decodeCase(t testing.TB, c rcase) *rule.Spec {
	t.Helper()
	spec := &rule.Spec{}
	for _, x := range []struct {
		src string
		dst *map[string]any
	}{{c.rule, &spec.Rule}, {c.constraints, &spec.Constraints}, {c.utils, &spec.Utils}} {
		if x.src == "" {
			continue
		}
		if err := json.Unmarshal([]byte(x.src), x.dst); err != nil {
			t.Fatalf("%s: %v", x.src, err)
		}
	}
	return spec
}

// runAstGrepRules runs ast-grep scan with every case over root and returns
// per case the set of "file:start:end" it reported.
func runAstGrepRules(t *testing.T, bin, root, lang string, cases []rcase, extra ...string) []map[string]bool {
	t.Helper()
	var docs []string
	for i, c := range cases {
		if c.ref != "" {
			c.rule = c.ref
		}
		docs = append(docs, ruleYAML(fmt.Sprintf("r%d", i), lang, c))
	}
	return scanRules(t, bin, root, docs, extra...)
}

func ourRuleMatches(t *testing.T, e *Engine, root, lang string, c rcase) (map[string]bool, map[string]Match) {
	t.Helper()
	res, files, err := e.SearchFiles(t.Context(), Query{Path: at(root), Rule: decodeCase(t, c), Language: lang})
	if err != nil {
		t.Fatalf("%s: %v", c.rule, err)
	}
	return matchSet(t, c.rule, files, res.Total)
}

// crossCheckRules compares every case's matches under root; differences
// in files with syntax errors are logged, not failed (the pattern
// cross-check does the same: the tools treat ERROR subtrees differently).
// crossCheckRules compares each rule's matches under root; found counts
// each rule's matches, so a caller can check every rule says something.
func crossCheckRules(t *testing.T, e *Engine, bin, root, lang string, cases []rcase, found map[string]int, extra ...string) {
	ref := runAstGrepRules(t, bin, root, lang, cases, extra...)
	broken := brokenFiles(t, e, root, lang)
	for i, c := range cases {
		ours, details := ourRuleMatches(t, e, root, lang, c)
		onlyOurs, onlyTheirs := diffSets(ours, ref[i])
		// The walk leaves hidden files out (GOROOT has testdata/.h.go);
		// ast-grep reads them.
		onlyTheirs, hidden := dropHidden(onlyTheirs)
		if hidden > 0 {
			t.Logf("%s: %d ast-grep matches in hidden files, which the walk leaves out", c.rule, hidden)
		}
		onlyOurs, n1 := dropBroken(onlyOurs, broken)
		onlyTheirs, n2 := dropBroken(onlyTheirs, broken)
		if n1+n2 > 0 {
			t.Logf("%s: %d differences in files with syntax errors not compared", c.rule, n1+n2)
		}
		if c.grammar != "" {
			if len(onlyTheirs) > 0 || len(onlyOurs) == 0 && !testing.Short() {
				t.Errorf("%s: expected only extra matches here (%s); %d here, %d from ast-grep, only ast-grep %v", c.rule, c.grammar, len(ours), len(ref[i]), firstFew(onlyTheirs))
			}
			t.Logf("differ %-4s %6d, ast-grep %d: %s (%s)", lang, len(ours), len(ref[i]), c.rule, c.grammar)
			continue
		}
		if len(onlyOurs)+len(onlyTheirs) > 0 {
			var texts []string
			for _, k := range firstFew(onlyOurs) {
				texts = append(texts, fmt.Sprintf("%q", textcutShort(details[k].Text)))
			}
			t.Errorf("%s %s under %s: %d matches here, %d from ast-grep; only here %v %v; only ast-grep %v",
				lang, c.rule, root, len(ours), len(ref[i]), firstFew(onlyOurs), texts, firstFew(onlyTheirs))
			continue
		}
		found[c.rule] += len(ours)
		t.Logf("agree %-4s %6d  %s", lang, len(ours), c.rule)
	}
}

// saysSomething fails a rule that matched nothing in the whole corpus.
func saysSomething(t *testing.T, cases []rcase, found map[string]int) {
	for _, c := range cases {
		if n, ok := found[c.rule]; ok && n == 0 && !testing.Short() {
			t.Errorf("%s matched nothing; pick a rule that says something", c.rule)
		}
	}
}

func dropHidden(keys []string) ([]string, int) {
	var kept []string
	for _, k := range keys {
		file := k[:strings.Index(k, ":")]
		if strings.HasPrefix(file, ".") || strings.Contains(file, "/.") {
			continue
		}
		kept = append(kept, k)
	}
	return kept, len(keys) - len(kept)
}

func textcutShort(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// TestCrossCheckRulesAgainstAstGrep compares every match of each rule
// with ast-grep 0.51.1: Go rules over GOROOT/src (vendored folders
// excluded on both sides), TypeScript rules over the typescript package's
// .d.ts files.
// ruleCorpus is a few packages of GOROOT/src, or all of it with
// BUILTIN_TOOLS_FULL_CROSSCHECK=1: each of the rules is a scan of its own
// for ast-grep, and 26 scans of the whole tree would take most of CI.
func ruleCorpus(t *testing.T) []string {
	if os.Getenv("BUILTIN_TOOLS_FULL_CROSSCHECK") != "" {
		return goCorpus(t)
	}
	src := filepath.Join(goroot(), "src")
	if _, err := os.Stat(src); err != nil {
		testenv.Missing(t, "the Go source tree", src+" is missing; it comes with the Go distribution")
	}
	return []string{filepath.Join(src, "net", "http"), filepath.Join(src, "go"), filepath.Join(src, "encoding"), filepath.Join(src, "os"), filepath.Join(src, "runtime")}
}

func TestCrossCheckRulesAgainstAstGrep(t *testing.T) {
	bin := testenv.LookPath(t, "ast-grep")
	cache := int64(1 << 30)
	if raceEnabled {
		cache = 256 << 20
	}
	e := NewEngine(Options{MaxFileSize: 64 << 20, CacheBytes: cache})
	defer e.Close()
	t.Run("go", func(t *testing.T) {
		found := map[string]int{}
		for _, root := range ruleCorpus(t) {
			crossCheckRules(t, e, bin, root, "go", goRules, found, "--globs", "!**/vendor/**")
		}
		saysSomething(t, goRules, found)
	})
	t.Run("typescript", func(t *testing.T) {
		root := filepath.Join(testenv.ToolsDir(), "node_modules", "typescript", "lib")
		if _, err := os.Stat(root); err != nil {
			testenv.Missing(t, "the typescript package", root+" is missing; scripts/install.sh installs it")
		}
		found := map[string]int{}
		crossCheckRules(t, e, bin, root, "typescript", tsRules, found)
		saysSomething(t, tsRules, found)
	})
}
