package builtintools_test

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// A hint or an error that names an argument names one the tool has (issue
// 19: "raise per_depth" for a tool whose argument is limit sends a model
// on a round trip). The texts are the ones the tests produce: every
// session transcript's outputs. A snake_case word in a tool's output must
// be a tool's name, an argument or an argument's enum value of that tool,
// or one of a tool named on the same line.
func TestHintsNameRealArguments(t *testing.T) {
	r := everyFamilyRun(t, "hints")
	words := map[string][]string{} // tool -> its argument names and enum values
	var tools []string
	for _, d := range r.Registered() {
		tools = append(tools, d.Name)
		var schema struct {
			Properties map[string]struct {
				Enum  []string `json:"enum"`
				Items struct {
					Enum []string `json:"enum"`
				} `json:"items"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(d.InputSchema(), &schema); err != nil {
			t.Fatal(err)
		}
		for name, p := range schema.Properties {
			words[d.Name] = append(append(append(words[d.Name], name), p.Enum...), p.Items.Enum...)
		}
		for old := range d.Renamed {
			words[d.Name] = append(words[d.Name], old) // named to say it is gone
		}
	}
	snake := regexp.MustCompile(`\b[a-z]+(_[a-z]+)+\b`)
	serverCode := regexp.MustCompile(` \[[A-Za-z0-9_.-]+\]( \([^)]*\))?\s*$`)
	// "raise limit", "give file and line": the word after a verb of
	// advice is an argument too.
	advice := regexp.MustCompile(`(?:^|[;(:,.]\s*|\b(?:or|and|then)\s+)(?:raise|lower|give|pass|set|narrow)\s+([a-z][a-z_]*)\b`)
	// Values a result reports, not arguments: statuses and states.
	values := map[string]bool{"timed_out": true, "no_marker": true, "no_binary": true, "no_marker_no_binary": true,
		"not_installed": true, "runs_code": true, "no_checker": true,
		// IPython's magic of that name, listed in eval's unknown-magic error.
		"load_ext": true,
		// debug's exceptions values: its kinds and lldb-dap's filter names
		// (not an enum: any filter an adapter offers may be named).
		"user_unhandled": true, "cpp_throw": true, "cpp_catch": true, "rust_panic": true}
	// Node kinds and field names of the grammars are code's vocabulary
	// (ast_grep shows syntax trees and names kinds in rules), not
	// arguments.
	e := astgrep.NewEngine(astgrep.Options{CacheBytes: -1})
	defer e.Close()
	for _, lang := range e.Languages() {
		kinds, fields, err := e.Kinds(lang)
		if err != nil {
			continue // a run-time grammar that does not load here
		}
		for _, w := range append(kinds, fields...) {
			values[w] = true
		}
	}
	plain := map[string]bool{"a": true, "an": true, "the": true, "it": true, "them": true, "one": true, "that": true, "this": true, "up": true, "to": true, "no": true, "its": true}
	paths, _ := filepath.Glob(filepath.Join(testenv.ModuleRoot(), "*", "testdata", "sessions", "*.txtar"))
	more, _ := filepath.Glob(filepath.Join(testenv.ModuleRoot(), "*", "*", "testdata", "sessions", "*.txtar"))
	paths = append(paths, more...)
	// Transcripts replayed with real language servers.
	for _, pattern := range []string{"*/testdata/lspsessions/*.txtar", "*/*/testdata/lspsessions/*.txtar"} {
		lsps, _ := filepath.Glob(filepath.Join(testenv.ModuleRoot(), pattern))
		paths = append(paths, lsps...)
	}
	if len(paths) < 5 {
		t.Fatalf("found %d session transcripts", len(paths))
	}
	checked := 0
	for _, path := range paths {
		ar, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Names of the transcript's own checkout (a function, a field) are
		// the code's words, quoted back from it, not advice.
		var code strings.Builder
		for _, f := range ar.Files {
			if strings.HasPrefix(f.Name, "root/") {
				code.Write(f.Data)
				code.WriteByte('\n')
			}
		}
		inCode := func(w string) bool {
			return regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(code.String())
		}
		for _, f := range ar.Files {
			if f.Name != "session" {
				continue
			}
			tool, input := "", ""
			for _, line := range strings.Split(string(f.Data), "\n") {
				if strings.HasPrefix(line, ">") {
					input = line
					fields := strings.Fields(strings.TrimLeft(line, ">"))
					if len(fields) > 0 && strings.HasPrefix(fields[0], "[") {
						fields = fields[1:]
					}
					if len(fields) > 0 {
						tool = fields[0]
					}
					continue
				}
				if tool == "" || strings.HasPrefix(line, "structured: ") {
					continue
				}
				// A diagnostic's code in brackets is the server's word
				// quoted back (clangd's undeclared_var_use).
				if strings.Contains(line, ": error: ") || strings.Contains(line, ": warning: ") {
					line = serverCode.ReplaceAllString(line, "")
				}
				found := snake.FindAllString(line, -1)
				for _, m := range advice.FindAllStringSubmatch(line, -1) {
					if !plain[m[1]] {
						found = append(found, m[1])
					}
				}
				for _, w := range found {
					checked++
					// A word the call itself sent (a kind named in a rule) is
					// quoted back, not advice.
					if values[w] || slices.Contains(tools, w) || slices.Contains(words[tool], w) || strings.Contains(input, `"`+w+`"`) || inCode(w) {
						continue
					}
					ok := false
					for _, other := range tools {
						if strings.Contains(line, other) && slices.Contains(words[other], w) {
							ok = true
						}
					}
					if !ok {
						rel, _ := filepath.Rel(testenv.ModuleRoot(), path)
						t.Errorf("%s: %s's output names %q, which is no argument of %s (nor of a tool named on the line): %s", rel, tool, w, tool, line)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no snake_case word in any transcript: the check checks nothing")
	}
}
