package structural_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

const shopGo = `package shop

import (
	"fmt"
	"os"
)

func load(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer f.Close()
	fmt.Println("loaded", name) // fmt.Println(not code)
	return nil
}

const doc = "fmt.Println(inside a string)"
`

const widgetDart = `class Screen {
  Controller? controller;
  Controller? other;

  void close() {
    if (controller != null) controller.dispose();
    if (other != null) controller.dispose();
    dispose(controller);
  }
}
`

func newRun(t *testing.T, files map[string]string, opts builtintools.Options) *registry.Run {
	t.Helper()
	root := t.TempDir()
	testenv.WriteTree(t, root, files)
	opts.Root = root
	opts.Without = append(opts.Without, "lsp")
	r, err := builtintools.NewRun(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// AG-1..4 through the tool: the #646 trap finds the real call, never the
// text in comments or strings; results carry file:line and captures.
func TestGrepTool(t *testing.T) {
	r := newRun(t, map[string]string{"shop/shop.go": shopGo, "go.mod": "module shop\n"}, builtintools.Options{})
	text, isErr := runtest.Call(t, r, tiers.Plan, "ast_grep", map[string]any{"pattern": "fmt.Println($$$ARGS)"})
	if isErr || !strings.HasPrefix(text, `1 match for "fmt.Println($$$ARGS)" [go`) ||
		!strings.Contains(text, `shop/shop.go:14: fmt.Println("loaded", name)`) || !strings.Contains(text, `$$$ARGS = "loaded", name`) {
		t.Fatalf("%q", text)
	}
	text, _ = runtest.Call(t, r, tiers.Plan, "ast_grep", map[string]any{"pattern": "defer $X.Close()", "path": "shop/shop.go"})
	if !strings.Contains(text, "shop/shop.go:13: defer f.Close()") || !strings.Contains(text, "$X = f") {
		t.Fatalf("%q", text)
	}
	text, _ = runtest.Call(t, r, tiers.Plan, "ast_grep", map[string]any{"pattern": "os.Remove($A)"})
	if !strings.HasPrefix(text, `no matches for "os.Remove($A)" in 1 go files`) {
		t.Fatalf("no match: %q", text)
	}
	for args, want := range map[string]string{
		`{"pattern": ""}`:                                             "empty",
		`{"pattern": "$$$A"}`:                                         "only",
		`{"pattern": "func (", "language": "go"}`:                     "in any context tried (statement",
		`{"pattern": "x", "language": "cobol"}`:                       "go, ",
		`{"pattern": "x", "path": "../.."}`:                           "outside the root",
		`{"pattern": "x", "path": "shop/shop.go", "max_results": -1}`: "max_results",
	} {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		text, isErr := runtest.Call(t, r, tiers.Plan, "ast_grep", m)
		if !isErr || !strings.Contains(text, want) {
			t.Errorf("%s: (error=%v) %q, want %q", args, isErr, text, want)
		}
	}
}

// The seed's Dart examples, with Dart loaded from a grammar library at run
// time: a repeated metavariable must capture the same text, and a bare
// dispose(x) pattern finds calls, not a function signature.
func TestDartFromGrammarFolder(t *testing.T) {
	lib := testenv.File(t, "the Dart grammar", filepath.Join("grammars", "libtree-sitter-dart.so"))
	r := newRun(t, map[string]string{"lib/screen.dart": widgetDart},
		builtintools.Options{Settings: map[string]any{"structural": astgrep.Options{GrammarDirs: []string{filepath.Dir(lib)}}}})
	text, isErr := runtest.Call(t, r, tiers.Plan, "ast_grep", map[string]any{"pattern": "if ($X != null) $X.dispose()", "language": "dart"})
	if isErr || !strings.HasPrefix(text, "1 match") || !strings.Contains(text, "lib/screen.dart:6:") || !strings.Contains(text, "$X = controller") {
		t.Fatalf("guard: %q", text)
	}
	text, isErr = runtest.Call(t, r, tiers.Plan, "ast_grep", map[string]any{"pattern": "dispose($X)", "language": "dart"})
	if isErr || !strings.HasPrefix(text, "1 match") || !strings.Contains(text, "lib/screen.dart:8: dispose(controller)") {
		t.Fatalf("call: %q", text)
	}
}

// AE-1..3 through the tools: ast_edit writes nothing; resolve accepts once,
// records what it wrote for the write wrappers, and refuses stale or
// unknown edits; plan mode sees neither.
func TestEditAndResolveTools(t *testing.T) {
	var wrote []string
	recorder := registry.Family[registry.None]{Key: registry.NewKey[registry.None]("recorder"),
		Wrappers: []registry.Wrapper{{Applies: func(d *registry.Descriptor) bool { return d.Name == "resolve" },
			Wrap: func(next registry.HandlerFunc) registry.HandlerFunc {
				return func(ctx context.Context, c *registry.Call) (*mcp.CallToolResult, error) {
					res, err := next(ctx, c)
					for _, w := range c.Written() {
						wrote = append(wrote, c.Rel(w))
					}
					return res, err
				}
			}}}}
	r := newRun(t, map[string]string{"shop/shop.go": shopGo}, builtintools.Options{Families: []registry.Extension{recorder}})
	path := filepath.Join(r.Root(), "shop", "shop.go")
	text, isErr := runtest.Call(t, r, tiers.Plan, "ast_edit", map[string]any{"pattern": "fmt.Println($$$A)", "rewrite": "log.Println($$$A)"})
	if !isErr || !strings.Contains(text, "not available in plan mode") {
		t.Fatalf("plan-mode ast_edit: %q", text)
	}
	text, isErr = runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "fmt.Println($$$A)", "rewrite": "log.Println($$$A)"})
	if isErr || !strings.Contains(text, `(proposed) 1 replacement in 1 file`) || !strings.Contains(text, `edit_id "edit_1"`) ||
		!strings.Contains(text, `+	log.Println("loaded", name)`) {
		t.Fatalf("stage: %q", text)
	}
	if data, _ := os.ReadFile(path); string(data) != shopGo {
		t.Fatal("ast_edit wrote to disk")
	}
	text, isErr = runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
	if isErr || !strings.Contains(text, "accepted edit_1: 1 replacement in 1 file written: shop/shop.go") {
		t.Fatalf("accept: %q", text)
	}
	if data, _ := os.ReadFile(path); !strings.Contains(string(data), `log.Println("loaded", name)`) {
		t.Fatalf("after accept:\n%s", data)
	}
	if len(wrote) != 1 || wrote[0] != "shop/shop.go" {
		t.Fatalf("resolve recorded writes %v", wrote)
	}
	text, isErr = runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_1", "action": "accept"})
	if !isErr || !strings.Contains(text, "already accepted") {
		t.Fatalf("second accept: %q", text)
	}
	// Staged, then the file changes: accept writes nothing.
	runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "defer $X.Close()", "rewrite": "defer func() { _ = $X.Close() }()"})
	os.WriteFile(path, []byte(strings.Replace(shopGo, "loaded", "read", 1)), 0o644)
	before, _ := os.ReadFile(path)
	text, isErr = runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_2", "action": "accept"})
	if after, _ := os.ReadFile(path); !isErr || !strings.Contains(text, "shop/shop.go") || string(after) != string(before) {
		t.Fatalf("stale accept: (error=%v) %q", isErr, text)
	}
	for args, want := range map[string]string{
		`{"edit_id": "edit_9", "action": "accept"}`: "edit_9",
		`{"edit_id": "edit_2", "action": "maybe"}`:  "must be one of 'accept', 'discard'",
	} {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		if text, isErr := runtest.Call(t, r, tiers.Normal, "resolve", m); !isErr || !strings.Contains(text, want) {
			t.Errorf("%s: %q, want %q", args, text, want)
		}
	}
	runtest.Call(t, r, tiers.Normal, "ast_edit", map[string]any{"pattern": "defer $X.Close()", "rewrite": "defer $X.Sync()"})
	text, isErr = runtest.Call(t, r, tiers.Normal, "resolve", map[string]any{"edit_id": "edit_3", "action": "discard"})
	if isErr || !strings.Contains(text, "discarded edit_3") {
		t.Fatalf("discard: %q", text)
	}
}

// Issue 26: operation dump's structured result carries the tree, the
// nodes the text shows (cut by the output budget as the text is), each
// with its kind, field and place.
func TestDumpStructuredTree(t *testing.T) {
	r := newRun(t, map[string]string{"a.go": shopGo}, builtintools.Options{OutputBudget: 1200})
	b, _ := json.Marshal(map[string]any{"operation": "dump", "path": "a.go", "start_line": 1, "end_line": 20})
	res, err := r.Call(context.Background(), tiers.Plan, "ast_grep", b)
	if err != nil || res.IsError {
		t.Fatalf("%v %s", err, registry.ResultText(res))
	}
	text := registry.ResultText(res)
	raw, _ := json.Marshal(res.StructuredContent)
	var out struct {
		Total int
		Tree  []struct {
			Depth     int
			Kind      string
			Field     string
			Named     bool
			StartLine int `json:"start_line"`
		}
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(text, "\n")
	shown := len(lines) - 2 // the header and the note of what was left out
	if !strings.Contains(lines[len(lines)-1], "left out by the output budget") || len(out.Tree) != shown || out.Total <= shown {
		t.Fatalf("%d nodes in the tree, %d shown of %d:\n%s", len(out.Tree), shown, out.Total, text)
	}
	for i, n := range out.Tree {
		want := strings.Repeat("  ", n.Depth)
		if n.Field != "" {
			want += n.Field + ": "
		}
		if n.Named {
			want += n.Kind
		} else {
			want += fmt.Sprintf("%q", n.Kind)
		}
		if !strings.HasPrefix(lines[i+1], want+fmt.Sprintf(" %d:", n.StartLine)) {
			t.Fatalf("node %d is %+v, the text says %q", i, n, lines[i+1])
		}
	}
}
