package lsp

import (
	"regexp"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// serverCase is the common operations (definition, references, hover,
// symbols, diagnostics, rename) on one real server's fixture, with the
// substrings each answer must hold.
type serverCase struct {
	fixture, program string

	// definition of defSymbol on defLine of defFile; the line has
	// non-ASCII text (some of it outside the BMP) before the symbol.
	defFile   string
	defLine   int
	defSymbol string
	defWant   []string

	refFile   string
	refLine   int
	refSymbol string
	refTotal  int
	refWant   []string

	hoverWant []string

	outlineFile string
	outlineWant []string
	query       string
	queryWant   []string

	// brokenFile gets brokenText appended; the diagnostics must hold
	// brokenWant (as "path:line:col: severity: message").
	brokenFile string
	brokenText string
	brokenWant string
	// checkerWant is in the output of diagnostics "*" while broken (or
	// its "language (dirs): reason" when none runs).
	checkerWant string

	// rename renameSymbol on renameLine of renameFile to newName.
	renameFile   string
	renameLine   int
	renameSymbol string
	newName      string
	renamedFiles []string
	renamedWant  map[string]string
}

func runServerCase(t *testing.T, c serverCase) {
	s := newSession(t, c.fixture, c.program, Config{})
	def := s.path(c.defFile)

	t.Run("definition", func(t *testing.T) {
		out := must(s.sup.Definition(s.ctx, loc(s.t, s.sup, def), protocol.Place{Line: c.defLine, Symbol: c.defSymbol}))(t)
		expectContains(t, "definition", locKeys(out), c.defWant...)
	})
	t.Run("references", func(t *testing.T) {
		out := must(s.sup.References(s.ctx, s.at(c.refFile), protocol.Place{Line: c.refLine, Symbol: c.refSymbol}))(t)
		if out.Total != c.refTotal || len(out.Locations) != c.refTotal {
			t.Errorf("references: want %d, got %d of %d", c.refTotal, len(out.Locations), out.Total)
		}
		expectContains(t, "references", locKeys(out), c.refWant...)
	})
	t.Run("hover", func(t *testing.T) {
		out := must(s.sup.Hover(s.ctx, loc(s.t, s.sup, def), protocol.Place{Line: c.defLine, Symbol: c.defSymbol}))(t)
		expectContains(t, "hover", out.Contents, c.hoverWant...)
	})
	t.Run("symbols", func(t *testing.T) {
		out := must(s.sup.Symbols(s.ctx, "", s.at(c.outlineFile)))(t)
		expectContains(t, "outline", symKeys(out), c.outlineWant...)
		out = must(s.sup.Symbols(s.ctx, c.query, pathguard.Path{}))(t)
		expectContains(t, "workspace symbols", symKeys(out), c.queryWant...)
	})
	t.Run("diagnostics", func(t *testing.T) {
		path := s.path(c.brokenFile)
		orig := s.read(c.brokenFile)
		s.write(c.brokenFile, orig+c.brokenText)
		diags, err := s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, path))
		if err != nil {
			t.Fatal(err)
		}
		fresh := diag.NewLedger().Fresh(path, diags, false)
		text := diagKeys(s.root, fresh)
		t.Logf("after write:\n%s", text)
		expectContains(t, "after write", text, c.brokenWant)
		out := must(s.sup.Diagnostics(s.ctx, loc(s.t, s.sup, path)))(t)
		expectContains(t, "diagnostics", diagKeys(s.root, out.Diagnostics), c.brokenWant)
		check := must(s.sup.Check(s.ctx))(t)
		expectContains(t, "diagnostics *", checkKeys(check), c.checkerWant)
		s.write(c.brokenFile, orig)
		diags, err = s.sup.AfterWrite(s.ctx, loc(s.t, s.sup, path))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(diagKeys(s.root, diags), c.brokenWant) {
			t.Errorf("restored file still reports %q", c.brokenWant)
		}
	})
	t.Run("rename", func(t *testing.T) {
		res, err := s.sup.Rename(s.ctx, s.at(c.renameFile), protocol.Place{Line: c.renameLine, Symbol: c.renameSymbol}, c.newName, false)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%+v", res)
		var got []string
		for _, f := range res.Files {
			got = append(got, f.Path)
		}
		if strings.Join(got, ",") != strings.Join(c.renamedFiles, ",") {
			t.Errorf("renamed files = %v, want %v", got, c.renamedFiles)
		}
		for file, want := range c.renamedWant {
			expectContains(t, file, s.read(file), want)
		}
		if regexp.MustCompile(`\b` + c.renameSymbol + `\(`).MatchString(s.read(c.renameFile)) {
			t.Errorf("%s still calls %s:\n%s", c.renameFile, c.renameSymbol, s.read(c.renameFile))
		}
	})
	t.Run("close leaves no process behind", func(t *testing.T) {
		pgids := runningGroups(s.sup)
		s.sup.Close()
		expectNoProcesses(t, pgids)
	})
}

func TestPyright(t *testing.T) {
	t.Parallel()
	runServerCase(t, serverCase{
		fixture: "python", program: "pyright-langserver",
		defFile: "main.py", defLine: 4, defSymbol: "total",
		defWant: []string{"geometry.py:15:5: def total(squares: list[Square]) -> float:"},
		refFile: "geometry.py", refLine: 10, refSymbol: "area",
		refTotal:    2,
		refWant:     []string{"geometry.py:10:9: def area(self) -> float:", "geometry.py:17:18: return sum(s.area() for s in squares)"},
		hoverWant:   []string{"def total(", "Add the areas of squares."},
		outlineFile: "geometry.py", outlineWant: []string{"class Square", "method area", "function total"},
		query: "Square", queryWant: []string{"class Square", "geometry.py:4:7: class Square:"},
		brokenFile: "main.py", brokenText: "print(undefined_name)\n", brokenWant: `main.py:5:7: error: "undefined_name" is not defined`,
		checkerWant: `main.py:5:7 - error: "undefined_name" is not defined`,
		renameFile:  "geometry.py", renameLine: 15, renameSymbol: "total", newName: "sum_areas",
		renamedFiles: []string{"geometry.py", "main.py"},
		renamedWant: map[string]string{
			"geometry.py": "def sum_areas(squares",
			"main.py":     "from geometry import Square, sum_areas",
		},
	})
}

func TestTypeScript(t *testing.T) {
	t.Parallel()
	runServerCase(t, serverCase{
		fixture: "ts", program: "typescript-language-server",
		defFile: "src/geometry.ts", defLine: 13, defSymbol: "area",
		defWant: []string{"src/geometry.ts:6:3: area(): number {"},
		refFile: "src/geometry.ts", refLine: 6, refSymbol: "area",
		refTotal:    2,
		refWant:     []string{"src/geometry.ts:6:3: area(): number {", "src/geometry.ts:13:"},
		hoverWant:   []string{"(method) Square.area(): number", "Returns the area of the square."},
		outlineFile: "src/geometry.ts", outlineWant: []string{"class Square", "method area", "function total"},
		query: "Square", queryWant: []string{"class Square — src/geometry.ts:2:1: export class Square {"},
		brokenFile: "src/main.ts", brokenText: "const n: number = \"x\";\n", brokenWant: `src/main.ts:5:7: error: Type 'string' is not assignable to type 'number'.`,
		checkerWant: `src/main.ts(5,7): error TS2322: Type 'string' is not assignable to type 'number'.`,
		renameFile:  "src/geometry.ts", renameLine: 12, renameSymbol: "total", newName: "sumAreas",
		renamedFiles: []string{"src/geometry.ts", "src/main.ts"},
		renamedWant: map[string]string{
			"src/geometry.ts": "export function sumAreas(squares",
			"src/main.ts":     "console.log(label, sumAreas(squares))",
		},
	})
}

func TestClangd(t *testing.T) {
	t.Parallel()
	runServerCase(t, serverCase{
		fixture: "c", program: "clangd",
		defFile: "main.c", defLine: 6, defSymbol: "area",
		defWant: []string{"geometry.c:3:8: double area(const struct square *s)"},
		refFile: "geometry.h", refLine: 10, refSymbol: "area",
		refTotal:    3,
		refWant:     []string{"geometry.h:10:8:", "geometry.c:3:8:", "main.c:6:"},
		hoverWant:   []string{"double area(const struct square *s)", "Returns the area of the square."},
		outlineFile: "geometry.h", outlineWant: []string{"struct square", "field side", "function area"},
		query: "square", queryWant: []string{"struct square", "geometry.h:5:8: struct square {"},
		brokenFile: "main.c", brokenText: "int broken(void) { return undefined_var; }\n", brokenWant: `main.c:10:27: error: Use of undeclared identifier 'undefined_var'`,
		checkerWant: "C/C++ (.): C/C++ has no project checker here",
		renameFile:  "geometry.h", renameLine: 10, renameSymbol: "area", newName: "square_area",
		renamedFiles: []string{"geometry.c", "geometry.h", "main.c"},
		renamedWant: map[string]string{
			"geometry.h": "double square_area(const struct square *s);",
			"geometry.c": "double square_area(const struct square *s)",
			"main.c":     "double a = square_area(&sq);",
		},
	})
}
