package lsp

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// TestGopls drives every operation against a real gopls on the Go fixture,
// in the order an agent might, in one session.
func TestGopls(t *testing.T) {
	t.Parallel()
	s := newSession(t, "go", "gopls", Config{})
	main, shapes := s.path("main.go"), s.path("shapes/shapes.go")

	t.Run("status before any call starts nothing", func(t *testing.T) {
		row := statusRow(t, s.sup.Status(s.ctx), "gopls")
		if row.State != answer.StateAvailable || strings.Join(row.MarkerDirs, ",") != "." || row.Binary == "" || len(row.Running) != 0 {
			t.Errorf("status: want gopls available for ., not started; got %+v", row)
		}
		if len(s.sup.fleet.running()) != 0 {
			t.Fatal("a server is running before any call")
		}
	})

	t.Run("definition after non-ASCII text on the line", func(t *testing.T) {
		// Line 12 has "größe 🚀" before Total: the column must be counted in
		// the server's encoding (UTF-16 for gopls, which offers no other).
		out := must(s.sup.Definition(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Total"}))(t)
		if out.Total != 1 || out.Operation != answer.OpDefinition || out.Server != "gopls" || out.File != "main.go" || out.Line != 12 || out.Symbol != "Total" {
			t.Errorf("definition: %+v", out)
		}
		expectContains(t, "definition", locKeys(out), "shapes/shapes.go:28:6: func Total(shapes []Shape) float64 {")
	})

	t.Run("type_definition", func(t *testing.T) {
		out := must(s.sup.TypeDefinition(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 10, Symbol: "sq"}))(t)
		expectContains(t, "type_definition", locKeys(out), "shapes/shapes.go:12:6: type Square struct {")
	})

	t.Run("implementation", func(t *testing.T) {
		out := must(s.sup.Implementation(s.ctx, loc(s.t, s.sup, shapes), protocol.Place{Line: 8, Symbol: "Area"}))(t)
		if out.Total != 2 {
			t.Errorf("implementation: want 2, got %d", out.Total)
		}
		expectContains(t, "implementation", locKeys(out),
			"shapes/shapes.go:17:17: func (s Square) Area() float64",
			"shapes/shapes.go:25:17: func (c Circle) Area() float64")
	})

	t.Run("references", func(t *testing.T) {
		out := must(s.sup.References(s.ctx, loc(s.t, s.sup, shapes), protocol.Place{Line: 28, Symbol: "Total"}))(t)
		if out.Total != 2 || out.File != "shapes/shapes.go" || out.Line != 28 {
			t.Errorf("references: %+v", out)
		}
		keys := locKeys(out)
		expectContains(t, "references", keys, "main.go:12:", "shapes/shapes.go:28:6: func Total")
		if !strings.HasPrefix(keys, "main.go:") {
			t.Errorf("references are not sorted by path:\n%s", keys)
		}
	})

	t.Run("hover", func(t *testing.T) {
		out := must(s.sup.Hover(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Total"}))(t)
		if out.Truncated || out.Server != "gopls" {
			t.Errorf("hover: %+v", out)
		}
		expectContains(t, "hover", out.Contents, "func shapes.Total(shapes []shapes.Shape) float64", "Total adds the areas of shapes.")
	})

	t.Run("symbols in a file", func(t *testing.T) {
		out := must(s.sup.Symbols(s.ctx, "", loc(s.t, s.sup, shapes)))(t)
		if out.File != "shapes/shapes.go" || out.Total != 9 || len(out.Symbols) != 9 {
			t.Errorf("symbols: want 9 in shapes/shapes.go, got %d of %d in %q", len(out.Symbols), out.Total, out.File)
		}
		expectContains(t, "symbols", symKeys(out), "7: interface Shape", "  8: method Area", "28: function Total")
	})

	t.Run("symbols in the workspace", func(t *testing.T) {
		out := must(s.sup.Symbols(s.ctx, "Circle", pathguard.Path{}))(t)
		keys := symKeys(out)
		expectContains(t, "symbols", keys, "Circle — shapes/shapes.go:20:6: type Circle struct {")
		if strings.Contains(keys, "/usr/local/go") {
			t.Errorf("workspace search reached into the standard library:\n%s", keys)
		}
	})

	t.Run("diagnostics on write, with the ledger", func(t *testing.T) {
		ledger := diag.NewLedger()
		orig := s.read("main.go")

		s.write("main.go", orig+"\nfunc broken() { undefinedThing() }\n")
		diags, err := s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main))
		if err != nil {
			t.Fatal(err)
		}
		fresh := ledger.Fresh(main, diags, false)
		want := diag.Diagnostic{File: main, Line: 15, Column: 17, Severity: diag.SeverityError, Code: "UndeclaredName", Source: "compiler",
			Message: "undefined: undefinedThing", LineText: "func broken() { undefinedThing() }"}
		if len(fresh) != 1 || fresh[0] != want {
			t.Fatalf("first write: want %+v, got %+v", want, fresh)
		}

		// The same error four lines lower is not news.
		s.write("main.go", orig+"\n\n\n\n\nfunc broken() { undefinedThing() }\n")
		diags, err = s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main))
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
		diags, err = s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main))
		if err != nil || len(diags) != 0 {
			t.Fatalf("fixed file: want no diagnostics, got %+v, %v", diags, err)
		}
		ledger.Fresh(main, diags, false)
		s.write("main.go", orig+"\nfunc broken() { undefinedThing() }\n")
		diags, err = s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main))
		if err != nil {
			t.Fatal(err)
		}
		if fresh := ledger.Fresh(main, diags, false); len(fresh) != 1 {
			t.Fatalf("error that came back: want it reported again, got %+v", fresh)
		}

		fd := must(s.sup.Diagnostics(s.ctx, loc(s.t, s.sup, main)))(t)
		if fd.File != "main.go" || fd.Server != "gopls" || fd.Incomplete || len(fd.Diagnostics) != 1 || fd.Diagnostics[0] != want {
			t.Errorf("diagnostics: want %+v in main.go, got %+v", want, fd)
		}

		actions := must(s.sup.CodeActions(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 15, Symbol: "undefinedThing"}))(t)
		if !slices.ContainsFunc(actions.Actions, func(a answer.CodeAction) bool {
			return strings.HasPrefix(a.Title, "Create function undefinedThing") && strings.HasPrefix(a.Kind, "quickfix")
		}) {
			t.Errorf("code_actions: no quickfix creating undefinedThing in %+v", actions.Actions)
		}

		vet := checkRun(t, must(s.sup.Check(s.ctx))(t), "Go")
		if strings.Join(vet.Command, " ") != "go vet ./..." || vet.ExitCode == nil || *vet.ExitCode != 1 || vet.TimedOut || vet.Skipped != "" {
			t.Errorf("go vet: want it run, exit 1; got %+v", vet)
		}
		expectContains(t, "go vet output", strings.Join(vet.Output, "\n"), "main.go:15:17: undefined: undefinedThing")

		s.write("main.go", orig)
		if diags, err := s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main)); err != nil || len(diags) != 0 {
			t.Fatalf("restored file: %+v, %v", diags, err)
		}
	})

	// gopls publishes once per version (PublishesOnce), so a write's answer
	// is its first publish: that must hold the analyses' findings too, not
	// only the type checker's (issue 31 §4).
	t.Run("a write's diagnostics hold the analyses' findings", func(t *testing.T) {
		orig := s.read("main.go")
		s.write("main.go", orig+"\nfunc Vet() { fmt.Printf(\"%d\\n\", \"x\") }\n")
		diags, err := s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main))
		if err != nil {
			t.Fatal(err)
		}
		expectContains(t, "diagnostics", diagKeys(s.root, diags), `main.go:15:26: warning: fmt.Printf format %d has arg "x" of wrong type string`)
		s.write("main.go", orig)
		if diags, err := s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main)); err != nil || len(diags) != 0 {
			t.Fatalf("restored file: %+v, %v", diags, err)
		}
	})

	t.Run("a file changed by someone else is re-synced before a query", func(t *testing.T) {
		orig := s.read("main.go")
		// Two lines pushed in above main's body: Total moves to line 14.
		s.write("main.go", strings.Replace(orig, "func main() {\n", "func main() {\n\t// a\n\t// b\n", 1))
		out := must(s.sup.Definition(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 14, Symbol: "Total"}))(t)
		expectContains(t, "definition", locKeys(out), "shapes/shapes.go:28:6")
		refs := must(s.sup.References(s.ctx, loc(s.t, s.sup, shapes), protocol.Place{Line: 28, Symbol: "Total"}))(t)
		expectContains(t, "references", locKeys(refs), "main.go:14:")
		s.write("main.go", orig)
	})

	t.Run("rename", func(t *testing.T) {
		res, err := s.sup.Rename(s.ctx, loc(s.t, s.sup, shapes), protocol.Place{Line: 28, Symbol: "Total"}, "Sum", false)
		if err != nil {
			t.Fatal(err)
		}
		want := answer.RenameResult{Symbol: "Total", NewName: "Sum", Server: "gopls", Edits: 3,
			Files: []answer.FileEdit{{Path: "main.go", Edits: 1}, {Path: "shapes/shapes.go", Edits: 2}}}
		if got := *res; len(got.Notes) != 0 || !reflect.DeepEqual(got.Files, want.Files) ||
			got.Symbol != want.Symbol || got.NewName != want.NewName || got.Server != want.Server || got.Edits != want.Edits {
			t.Fatalf("rename result: want %+v, got %+v", want, res)
		}
		expectContains(t, "main.go", s.read("main.go"), "shapes.Sum(all)")
		expectContains(t, "shapes.go", s.read("shapes/shapes.go"), "// Sum adds", "func Sum(shapes []Shape)")
		// The server saw the new text: the new name resolves, no errors.
		out := must(s.sup.Definition(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Sum"}))(t)
		expectContains(t, "definition", locKeys(out), "shapes/shapes.go:28:6: func Sum(")
		if diags, err := s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, main)); err != nil || len(diags) != 0 {
			t.Fatalf("after rename: %+v, %v", diags, err)
		}
	})

	t.Run("reload restarts the server", func(t *testing.T) {
		before := s.sup.fleet.running()
		res := must(s.sup.Reload(s.ctx, loc(s.t, s.sup, main)))(t)
		after := s.sup.fleet.running()
		if len(before) != 1 || len(after) != 1 || before[0].PID() == after[0].PID() {
			t.Fatalf("reload: want a new process, before %v after %v", before, after)
		}
		if res.All || len(res.Servers) != 1 || res.Servers[0] != (answer.Reloaded{Server: "gopls", Root: ".", WasRunning: true, PID: after[0].PID(), ReadyMS: res.Servers[0].ReadyMS}) {
			t.Errorf("reload: want gopls for . restarted as pid %d, got %+v", after[0].PID(), res)
		}
		out := must(s.sup.Definition(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Sum"}))(t)
		expectContains(t, "definition", locKeys(out), "shapes/shapes.go:28:6")
		row := statusRow(t, s.sup.Status(s.ctx), "gopls")
		if row.State != answer.StateRunning || len(row.Running) != 1 || row.Running[0].Root != "." || row.Running[0].PID != after[0].PID() {
			t.Errorf("status: want gopls running for . as pid %d, got %+v", after[0].PID(), row)
		}
	})

	t.Run("close leaves no process behind", func(t *testing.T) {
		pgids := runningGroups(s.sup)
		if err := s.sup.Close(); err != nil {
			t.Fatal(err)
		}
		expectNoProcesses(t, pgids)
		_, err := s.sup.Definition(s.ctx, loc(s.t, s.sup, main), protocol.Place{Line: 12, Symbol: "Sum"})
		if !errors.Is(err, ErrClosed) {
			t.Fatalf("call after Close: want ErrClosed, got %v", err)
		}
	})
}
