package lsp

import (
	"errors"
	"strings"
	"testing"
)

// TestGopls drives every operation against a real gopls on the Go fixture,
// in the order an agent might, in one session.
func TestGopls(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "gopls", Config{})
	main, shapes := s.path("main.go"), s.path("shapes/shapes.go")

	t.Run("status before any call starts nothing", func(t *testing.T) {
		st := s.sup.Status(s.ctx)
		expectContains(t, "status", st, "Go (gopls, .go): available (marker in .;", "not started")
		if len(s.sup.running()) != 0 {
			t.Fatal("a server is running before any call")
		}
	})

	t.Run("definition after non-ASCII text on the line", func(t *testing.T) {
		// Line 12 has "größe 🚀" before Total: the column must be counted in
		// the server's encoding (UTF-16 for gopls, which offers no other).
		out := must(t)(s.sup.Definition(s.ctx, main, 12, "Total"))
		expectContains(t, "definition", out, "shapes/shapes.go:28:6: func Total(shapes []Shape) float64 {")
	})

	t.Run("type_definition", func(t *testing.T) {
		out := must(t)(s.sup.TypeDefinition(s.ctx, main, 10, "sq"))
		expectContains(t, "type_definition", out, "shapes/shapes.go:12:6: type Square struct {")
	})

	t.Run("implementation", func(t *testing.T) {
		out := must(t)(s.sup.Implementation(s.ctx, shapes, 8, "Area"))
		expectContains(t, "implementation", out, "2 implementations",
			"shapes/shapes.go:17:17: func (s Square) Area() float64",
			"shapes/shapes.go:25:17: func (c Circle) Area() float64")
	})

	t.Run("references", func(t *testing.T) {
		out := must(t)(s.sup.References(s.ctx, shapes, 28, "Total"))
		expectContains(t, "references", out, "2 references to \"Total\" at shapes/shapes.go:28:",
			"main.go:12:", "shapes/shapes.go:28:6: func Total")
	})

	t.Run("hover", func(t *testing.T) {
		out := must(t)(s.sup.Hover(s.ctx, main, 12, "Total"))
		expectContains(t, "hover", out, "func shapes.Total(shapes []shapes.Shape) float64", "Total adds the areas of shapes.")
	})

	t.Run("symbols in a file", func(t *testing.T) {
		out := must(t)(s.sup.Symbols(s.ctx, "", shapes))
		expectContains(t, "symbols", out, "shapes/shapes.go: 9 symbols", "7: interface Shape", "  8: method Area", "28: function Total")
	})

	t.Run("symbols in the workspace", func(t *testing.T) {
		out := must(t)(s.sup.Symbols(s.ctx, "Circle", ""))
		expectContains(t, "symbols", out, "shapes/shapes.go:20:6: type Circle struct {")
		if strings.Contains(out, "/usr/local/go") {
			t.Errorf("workspace search reached into the standard library:\n%s", out)
		}
	})

	t.Run("diagnostics on write, with the ledger", func(t *testing.T) {
		ledger := NewLedger()
		orig := s.read("main.go")

		s.write("main.go", orig+"\nfunc broken() { undefinedThing() }\n")
		diags, err := s.sup.AfterWrite(s.ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		fresh := ledger.Fresh(main, diags, false)
		if len(fresh) != 1 || fresh[0].Message != "undefined: undefinedThing" || fresh[0].Line != 15 {
			t.Fatalf("first write: want one new error at line 15, got %+v", fresh)
		}
		expectContains(t, "format", FormatDiagnostics(s.root, fresh),
			"main.go:15:17: error: undefined: undefinedThing [UndeclaredName] (compiler)", "    func broken() { undefinedThing() }")

		// The same error four lines lower is not news.
		s.write("main.go", orig+"\n\n\n\n\nfunc broken() { undefinedThing() }\n")
		diags, err = s.sup.AfterWrite(s.ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		if len(diags) != 1 || diags[0].Line != 19 {
			t.Fatalf("moved error: want the server to report it at line 19, got %+v", diags)
		}
		if fresh := ledger.Fresh(main, diags, false); len(fresh) != 0 {
			t.Fatalf("moved error reported again: %+v", fresh)
		}

		// Fixed, then broken again: new again.
		s.write("main.go", orig)
		diags, err = s.sup.AfterWrite(s.ctx, main)
		if err != nil || len(diags) != 0 {
			t.Fatalf("fixed file: want no diagnostics, got %+v, %v", diags, err)
		}
		ledger.Fresh(main, diags, false)
		s.write("main.go", orig+"\nfunc broken() { undefinedThing() }\n")
		diags, err = s.sup.AfterWrite(s.ctx, main)
		if err != nil {
			t.Fatal(err)
		}
		if fresh := ledger.Fresh(main, diags, false); len(fresh) != 1 {
			t.Fatalf("error that came back: want it reported again, got %+v", fresh)
		}

		out := must(t)(s.sup.Diagnostics(s.ctx, main))
		expectContains(t, "diagnostics", out, "1 error in main.go (gopls):", "main.go:15:17: error: undefined: undefinedThing")

		out = must(t)(s.sup.CodeActions(s.ctx, main, 15, "undefinedThing"))
		expectContains(t, "code_actions", out, "Create function undefinedThing (quickfix")

		out = must(t)(s.sup.Diagnostics(s.ctx, "*"))
		expectContains(t, "diagnostics *", out, "$ go vet ./...", "exit 1", "main.go:15:17: undefined: undefinedThing")

		s.write("main.go", orig)
		if diags, err := s.sup.AfterWrite(s.ctx, main); err != nil || len(diags) != 0 {
			t.Fatalf("restored file: %+v, %v", diags, err)
		}
	})

	t.Run("a file changed by someone else is re-synced before a query", func(t *testing.T) {
		orig := s.read("main.go")
		// Two lines pushed in above main's body: Total moves to line 14.
		s.write("main.go", strings.Replace(orig, "func main() {\n", "func main() {\n\t// a\n\t// b\n", 1))
		out := must(t)(s.sup.Definition(s.ctx, main, 14, "Total"))
		expectContains(t, "definition", out, "shapes/shapes.go:28:6")
		refs := must(t)(s.sup.References(s.ctx, shapes, 28, "Total"))
		expectContains(t, "references", refs, "main.go:14:")
		s.write("main.go", orig)
	})

	t.Run("rename", func(t *testing.T) {
		res, err := s.sup.Rename(s.ctx, shapes, 28, "Total", "Sum", false)
		if err != nil {
			t.Fatal(err)
		}
		t.Log(res)
		if res.Edits != 3 || len(res.Files) != 2 || res.Files[0].Path != "main.go" || res.Files[1].Path != "shapes/shapes.go" {
			t.Fatalf("rename result: %+v", res)
		}
		expectContains(t, "result", res.String(), `renamed "Total" to "Sum" (gopls): 3 edits in 2 files`, "main.go: 1 edit", "shapes/shapes.go: 2 edits")
		expectContains(t, "main.go", s.read("main.go"), "shapes.Sum(all)")
		expectContains(t, "shapes.go", s.read("shapes/shapes.go"), "// Sum adds", "func Sum(shapes []Shape)")
		// The server saw the new text: the new name resolves, no errors.
		out := must(t)(s.sup.Definition(s.ctx, main, 12, "Sum"))
		expectContains(t, "definition", out, "shapes/shapes.go:28:6: func Sum(")
		if diags, err := s.sup.AfterWrite(s.ctx, main); err != nil || len(diags) != 0 {
			t.Fatalf("after rename: %+v, %v", diags, err)
		}
	})

	t.Run("reload restarts the server", func(t *testing.T) {
		before := s.sup.running()
		out := must(t)(s.sup.Reload(s.ctx, main))
		expectContains(t, "reload", out, "restarted gopls for .")
		after := s.sup.running()
		if len(before) != 1 || len(after) != 1 || before[0].pid() == after[0].pid() {
			t.Fatalf("reload: want a new process, before %v after %v", before, after)
		}
		out = must(t)(s.sup.Definition(s.ctx, main, 12, "Sum"))
		expectContains(t, "definition", out, "shapes/shapes.go:28:6")
		st := s.sup.Status(s.ctx)
		expectContains(t, "status", st, "Go (gopls, .go): running for . (pid")
	})

	t.Run("close leaves no process behind", func(t *testing.T) {
		pgids := runningGroups(s.sup)
		if err := s.sup.Close(); err != nil {
			t.Fatal(err)
		}
		expectNoProcesses(t, pgids)
		_, err := s.sup.Definition(s.ctx, main, 12, "Sum")
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("call after Close: want ErrClosed, got %v", err)
		}
	})
}
