package graph

import (
	"context"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph/record"
)

// callNodes are the node kinds that call something, per grammar.
var callNodes = map[string]string{
	"go":         "(call_expression) @c",
	"typescript": "[(call_expression) (new_expression)] @c",
	"tsx":        "[(call_expression) (new_expression)] @c",
	"javascript": "[(call_expression) (new_expression)] @c",
	"python":     "(call) @c",
	"c":          "(call_expression) @c",
	"cpp":        "(call_expression) @c",
	"rust":       "(call_expression) @c",
	"java":       "[(method_invocation) (object_creation_expression)] @c",
}

// TestNoSilentCalls walks every call expression of the fixtures' trees
// (Go, TypeScript, TSX, JavaScript, Python, C, C++, Rust, Java) and checks
// that the index holds a call reference for it — the innermost call
// around the reference's name is that call — so each is in one of the
// classes, unresolved with its reason included, never silently missing
// (a literal called in place and f()(x) were, before function_literals).
func TestNoSilentCalls(t *testing.T) {
	e := astgrep.NewEngine(astgrep.Options{})
	defer e.Close()
	queries := map[string]*astgrep.CaptureQuery{}
	eachArchive(t, "testdata/fixtures/*.txtar", func(t *testing.T, _ string, ar *txtar.Archive) {
		v := buildFixture(t, ar).view(0)
		for f := range v.Snap.Files() {
			src := callNodes[f.Lang.Grammar]
			if src == "" {
				continue
			}
			q := queries[f.Lang.Grammar]
			if q == nil {
				var err error
				if q, err = e.CompileCaptureQuery(f.Lang.Grammar, src); err != nil {
					t.Fatal(err)
				}
				queries[f.Lang.Grammar] = q
			}
			data, err := v.Lines.ReadFile(f.Rel)
			if err != nil {
				t.Fatal(err)
			}
			res, err := e.CaptureSnippet(context.Background(), q, data)
			if err != nil {
				t.Fatal(err)
			}
			type span struct{ start, end, row int }
			var calls []span
			for _, m := range res.Matches {
				for _, c := range m.Captures {
					calls = append(calls, span{c.Start, c.End, c.StartRow + 1})
				}
			}
			seen := map[int]bool{}
			for i := range f.Refs {
				r := &f.Refs[i]
				if r.Kind != record.RefCall {
					continue
				}
				in := -1
				for j, c := range calls {
					if c.start <= int(r.At) && int(r.At) < c.end && (in < 0 || c.end-c.start < calls[in].end-calls[in].start) {
						in = j
					}
				}
				seen[in] = true
			}
			for j, c := range calls {
				if !seen[j] {
					text := string(data[c.start:c.end])
					if len(text) > 60 {
						text = text[:60] + "…"
					}
					t.Errorf("%s:%d: a call no reference accounts for: %s", f.Rel, c.row, strings.ReplaceAll(text, "\n", "⏎"))
				}
			}
		}
	})
}
