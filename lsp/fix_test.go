package lsp

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
)

// inlineSession opens a Supervisor on a fresh folder holding files.
func inlineSession(t testing.TB, program string, files map[string]string, cfg Config) *session {
	t.Helper()
	testenv.LookPath(t, program)
	testenv.SetupPath()
	return openSession(t, testenv.Tree(t, files), cfg)
}

// actionID finds the id of the first enabled action whose title has want.
func actionID(t testing.TB, r *answer.CodeActions, want string) string {
	t.Helper()
	for _, a := range r.Actions {
		if a.ID != "" && strings.Contains(a.Title, want) {
			return a.ID
		}
	}
	t.Fatalf("no enabled action %q in %+v", want, r.Actions)
	return ""
}

// applyTitled lists the actions at place in file and applies the first
// enabled one whose title has title.
func (s *session) applyTitled(file string, place protocol.Place, title string) (*answer.FixResult, error) {
	s.t.Helper()
	acts := must(s.sup.CodeActions(s.ctx, s.at(file), place))(s.t)
	return s.sup.ApplyAction(s.ctx, actionID(s.t, acts, title), false)
}

const fixGoMod = "module example.com/fix\n\ngo 1.22\n"

// lsp_fix on a real gopls: a quick fix by id (the unused import), a stale
// id refused with the actions listed afresh, organize imports, format
// (whole file and a line range), and ids this run never gave.
func TestFixGopls(t *testing.T) {
	t.Parallel()
	s := inlineSession(t, "gopls", map[string]string{
		"go.mod": fixGoMod,
		"a.go":   "package fix\n\nimport (\n\t\"os\"\n\t\"fmt\"\n)\n\nfunc A() {\n\tfmt.Println(1)\n}\n",
		"b.go":   "package fix\n\nfunc B()   int {\n  return  2\n}\n\nfunc C() int {\n  return  3\n}\n",
	}, Config{})
	acts := must(s.sup.CodeActions(s.ctx, s.at("a.go"), protocol.Place{Line: 4, Symbol: "os"}))(t)
	// gopls fixes an unused import by organizing imports, offered at the line.
	id := actionID(t, acts, "Organize Imports")
	// The file changes after the listing: the id is refused, nothing is
	// written, and the actions offered now come with the refusal.
	changed := s.read("a.go") + "\n// a comment\n"
	s.write("a.go", changed)
	_, err := s.sup.ApplyAction(s.ctx, id, false)
	var stale *StaleActionError
	if !errors.As(err, &stale) || stale.Fresh == nil || stale.File != "a.go" {
		t.Fatalf("stale id: %v", err)
	}
	expectErr(t, "stale id", err, nil, "was listed for a.go before it changed", "nothing was applied")
	if s.read("a.go") != changed {
		t.Fatal("a stale id wrote a.go")
	}
	fresh := actionID(t, stale.Fresh, "Organize Imports")
	if fresh == id {
		t.Fatalf("the fresh listing reuses the stale id %s", id)
	}
	res := must(s.sup.ApplyAction(s.ctx, fresh, false))(t)
	if res.ID != fresh || res.Edits == 0 || len(res.Files) != 1 || res.Files[0].Path != "a.go" {
		t.Errorf("apply: %+v", res)
	}
	if got := s.read("a.go"); strings.Contains(got, `"os"`) || !strings.Contains(got, `"fmt"`) {
		t.Errorf("a.go after removing the unused import:\n%s", got)
	}
	// Applied once, the file changed: the same id is refused again.
	_, err = s.sup.ApplyAction(s.ctx, fresh, false)
	expectErr(t, "an id applied already", err, nil, "was listed for a.go before it changed")

	// Another run (its own Supervisor on the same checkout) never listed it.
	other := NewSupervisor(s.root, Config{})
	t.Cleanup(func() { other.Close() })
	_, err = other.ApplyAction(s.ctx, fresh, false)
	expectErr(t, "an id from another run", err, ErrUnknownAction, "none was listed in this run")

	_, err = s.sup.ApplyAction(s.ctx, "action_999", false)
	expectErr(t, "an id never listed", err, ErrUnknownAction, `"action_999"`, "ids come from lsp code_actions in this run")

	// Imports out of order: organize_imports sorts them.
	s.write("a.go", "package fix\n\nimport (\n\t\"os\"\n\t\"fmt\"\n)\n\nfunc A() {\n\tfmt.Println(os.Args)\n}\n")
	org := must(s.sup.Fix(s.ctx, s.at("a.go"), FixOrganizeImports, 0, 0, false))(t)
	if org.Unchanged || org.Edits == 0 {
		t.Errorf("organize imports: %+v", org)
	}
	if got := s.read("a.go"); !strings.Contains(got, "import (\n\t\"fmt\"\n\t\"os\"\n)") {
		t.Errorf("a.go after organize imports:\n%s", got)
	}
	again := must(s.sup.Fix(s.ctx, s.at("a.go"), FixOrganizeImports, 0, 0, false))(t)
	if !again.Unchanged && again.Edits != 0 {
		t.Errorf("organize imports twice changed something: %+v", again)
	}

	// gopls formats whole files only: a range is refused, saying so.
	_, err = s.sup.Fix(s.ctx, s.at("b.go"), FixFormat, 7, 9, false)
	expectErr(t, "range format on gopls", err, ErrNoSuchFix, "gopls does not format a line range")
	whole := must(s.sup.Fix(s.ctx, s.at("b.go"), FixFormat, 0, 0, false))(t)
	if want := "package fix\n\nfunc B() int {\n\treturn 2\n}\n\nfunc C() int {\n\treturn 3\n}\n"; s.read("b.go") != want || whole.Edits == 0 {
		t.Errorf("b.go after format (%+v):\n%s", whole, s.read("b.go"))
	}

	_, err = s.sup.Fix(s.ctx, s.at("b.go"), "tidy", 0, 0, false)
	expectErr(t, "unknown kind", err, ErrBadArgument, "organize_imports, fix_all or format")
}

// An undefined name: gopls's quick fix creates it, through its command and
// the workspace/applyEdit it sends back. A command that sends no edit
// (browsing documentation) is waited for a bounded time, then reported.
func TestFixGoplsUndefinedName(t *testing.T) {
	t.Parallel()
	s := inlineSession(t, "gopls", map[string]string{
		"go.mod": fixGoMod,
		"a.go":   "package fix\n\nfunc A() int {\n\treturn missing(2)\n}\n",
	}, Config{ApplyEditWait: 300 * time.Millisecond})
	acts := must(s.sup.CodeActions(s.ctx, s.at("a.go"), protocol.Place{Line: 4, Symbol: "missing"}))(t)
	before := s.read("a.go")
	_, err := s.sup.ApplyAction(s.ctx, actionID(t, acts, "Browse documentation"), false)
	expectErr(t, "a command with no edit", err, ErrNoEdit, "ran the command gopls.doc", "sent no edit (workspace/applyEdit) within 300ms", "no file was changed")
	if s.read("a.go") != before {
		t.Fatal("a command with no edit changed a.go")
	}
	id := actionID(t, acts, "missing")
	res := must(s.sup.ApplyAction(s.ctx, id, false))(t)
	if got := s.read("a.go"); !strings.Contains(got, "func missing(") || res.Edits == 0 {
		t.Errorf("a.go after the fix (%+v):\n%s", res, got)
	}
}

const fixTSConfig = `{"compilerOptions": {"target": "ES2020", "module": "commonjs", "strict": true, "noEmit": true}, "include": ["src"]}`

// lsp_fix on typescript-language-server: the spelling quick fix by id,
// organize imports, and format of a line range and of the whole file.
func TestFixTypeScript(t *testing.T) {
	t.Parallel()
	s := inlineSession(t, "typescript-language-server", map[string]string{
		"package.json":  `{"name": "fix", "version": "0.1.0", "private": true}`,
		"tsconfig.json": fixTSConfig,
		"src/shape.ts":  "export function perimeter(side: number): number {\n  return 4 * side;\n}\nexport const unit = 1;\n",
		"src/main.ts":   "import { unit, perimeter } from \"./shape\";\n\nconsole.log(perimetr(2));\n",
		"src/ugly.ts":   "export function f(a:number){\nreturn a+1}\nexport function g(b:number){\nreturn b+2}\n",
	}, Config{})
	res := must(s.applyTitled("src/main.ts", protocol.Place{Line: 3, Symbol: "perimetr"}, "Change spelling to 'perimeter'"))(t)
	if got := s.read("src/main.ts"); !strings.Contains(got, "console.log(perimeter(2));") || res.Edits != 1 {
		t.Errorf("main.ts after the spelling fix (%+v):\n%s", res, got)
	}
	// The named imports out of order: organize imports sorts them.
	must(s.sup.Fix(s.ctx, s.at("src/main.ts"), FixOrganizeImports, 0, 0, false))(t)
	if got := s.read("src/main.ts"); !strings.HasPrefix(got, "import { perimeter, unit } from \"./shape\";\n") {
		t.Errorf("main.ts after organize imports:\n%s", got)
	}
	// Lines 3-4 only, then the whole file.
	must(s.sup.Fix(s.ctx, s.at("src/ugly.ts"), FixFormat, 3, 4, false))(t)
	if got := s.read("src/ugly.ts"); !strings.HasPrefix(got, "export function f(a:number){\nreturn a+1}\n") || !strings.Contains(got, "export function g(b: number) {") {
		t.Errorf("ugly.ts after formatting lines 3-4:\n%s", got)
	}
	must(s.sup.Fix(s.ctx, s.at("src/ugly.ts"), FixFormat, 0, 0, false))(t)
	if got := s.read("src/ugly.ts"); !strings.HasPrefix(got, "export function f(a: number) {\n    return a + 1\n}\n") {
		t.Errorf("ugly.ts after format:\n%s", got)
	}
}

// pyright: organize imports where it offers it, and format, which it has
// not, refused saying so.
func TestFixPyright(t *testing.T) {
	t.Parallel()
	s := inlineSession(t, "pyright-langserver", map[string]string{
		"pyproject.toml": "[project]\nname = \"fix\"\nversion = \"0.1.0\"\n",
		"main.py":        "import sys\nimport os\n\nprint(os.sep, sys.argv)\n",
	}, Config{})
	res, err := s.sup.Fix(s.ctx, s.at("main.py"), FixOrganizeImports, 0, 0, false)
	switch {
	case errors.Is(err, ErrNoSuchFix):
		expectErr(t, "organize imports on pyright", err, ErrNoSuchFix, "pyright offers no organize_imports action")
	case err != nil:
		t.Fatalf("organize imports: %v", err)
	default:
		if got := s.read("main.py"); !strings.HasPrefix(got, "import os\nimport sys\n") {
			t.Errorf("main.py after organize imports (%+v):\n%s", res, got)
		}
	}
	_, err = s.sup.Fix(s.ctx, s.at("main.py"), FixFormat, 0, 0, false)
	expectErr(t, "format on pyright", err, ErrNoSuchFix, "pyright does not format documents", "black or ruff format")
}

// clangd: the "did you mean" fix-it by id, and format (clangd formats
// with the clang-format library built into it).
func TestFixClangd(t *testing.T) {
	t.Parallel()
	s := inlineSession(t, "clangd", map[string]string{
		"compile_flags.txt": "-std=c11\n",
		"main.c":            "int counter_total(int x) { return x; }\n\nint main(void) {\n  return counter_totl(1);\n}\n",
		"ugly.c":            "int f(int a){return a+1;}\n",
	}, Config{})
	must(s.applyTitled("main.c", protocol.Place{Line: 4, Symbol: "counter_totl"}, "counter_total"))(t)
	if got := s.read("main.c"); !strings.Contains(got, "return counter_total(1);") {
		t.Errorf("main.c after the fix-it:\n%s", got)
	}
	must(s.sup.Fix(s.ctx, s.at("ugly.c"), FixFormat, 0, 0, false))(t)
	if got := s.read("ugly.c"); got != "int f(int a) { return a + 1; }\n" {
		t.Errorf("ugly.c after format:\n%q", got)
	}
}
