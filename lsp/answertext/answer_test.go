package answertext_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/registry/textfit"
)

func expectText(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("%s:\ngot\n%s\nwant\n%s", what, got, want)
	}
}

func expectHas(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: want %q in:\n%s", what, w, got)
		}
	}
}

func TestFormatLocations(t *testing.T) {
	def := &answer.Locations{Operation: answer.OpDefinition, Symbol: "Total", File: "main.go", Line: 12, Server: "gopls", Total: 1,
		Locations: []answer.Location{{Path: "shapes/shapes.go", Line: 28, Column: 6, EndLine: 28, Text: "func Total(shapes []Shape) float64 {"}}}
	expectText(t, "one definition", answertext.FormatLocations(def), "shapes/shapes.go:28:6: func Total(shapes []Shape) float64 {")

	impl := &answer.Locations{Operation: answer.OpImplementation, Symbol: "Area", File: "shapes/shapes.go", Line: 8, Server: "gopls", Total: 3,
		Locations: []answer.Location{
			{Path: "shapes/shapes.go", Line: 17, Column: 17, Text: "func (s Square) Area() float64"},
			{Path: "/usr/lib/go/x.go", Line: 4, Column: 6, Outside: true},
		}}
	expectText(t, "implementations, cut", answertext.FormatLocations(impl), `3 implementations of "Area" at shapes/shapes.go:8:
shapes/shapes.go:17:17: func (s Square) Area() float64
/usr/lib/go/x.go:4:6 (outside the root, not quoted)
... and 1 more`)

	none := &answer.Locations{Operation: answer.OpTypeDefinition, Symbol: "x", File: "a.go", Line: 1, Server: "gopls", Locations: []answer.Location{}}
	expectText(t, "none", answertext.FormatLocations(none), `no type definition found for "x" at a.go:1 (gopls)`)
	none.Operation = answer.OpReferences
	expectText(t, "no references", answertext.FormatLocations(none), `no references found for "x" at a.go:1 (gopls)`)

	refs := &answer.Locations{Operation: answer.OpReferences, Symbol: "Counter", File: "big/big.go", Line: 3, Server: "gopls", Total: 3001}
	for i := range answer.MaxReferences {
		refs.Locations = append(refs.Locations, answer.Location{Path: "big/big.go", Line: 3 + i, Column: 5, Text: "var Counter int"})
	}
	out := answertext.FormatLocations(refs)
	if lines := strings.Split(out, "\n"); len(lines) != 1+answer.MaxReferences+1 {
		t.Errorf("want a header, %d locations and a count line; got %d lines", answer.MaxReferences, len(lines))
	}
	expectHas(t, "references", out, "3001 references to \"Counter\" at big/big.go:3:\nbig/big.go:3:5: var Counter int\n",
		"\n... and 2951 more (50 shown of 3001)")

	expectText(t, "not a file", answertext.FormatLocation(answer.Location{Path: "jdt://contents/x", Line: 3}), "jdt://contents/x:3")
}

func TestFormatHover(t *testing.T) {
	expectText(t, "hover", answertext.FormatHover(&answer.Hover{Contents: "func f()"}), "func f()")
	expectText(t, "cut", answertext.FormatHover(&answer.Hover{Contents: "long…", Truncated: true}), "long…\n(cut at 4000 bytes)")
	expectText(t, "none", answertext.FormatHover(&answer.Hover{Symbol: "x", File: "a.py", Line: 2, Server: "pyright"}),
		`no hover information for "x" at a.py:2 (pyright)`)
	// N4: declared outside the root.
	expectText(t, "withheld", answertext.FormatHover(&answer.Hover{Symbol: "Token", File: "main.go", Line: 5, Server: "gopls",
		Withheld: "Token is defined outside the root (/w/secret/s.go:4), so its text is not quoted"}),
		`hover for "Token" at main.go:5 withheld: Token is defined outside the root (/w/secret/s.go:4), so its text is not quoted (gopls)`)
}

func TestFormatSymbols(t *testing.T) {
	outline := &answer.Symbols{File: "shapes/shapes.go", Server: "gopls", Total: 4, Symbols: []answer.Symbol{
		{Name: "Shape", Kind: "interface", Location: answer.Location{Path: "shapes/shapes.go", Line: 7}},
		{Name: "Area", Kind: "method", Detail: "func() float64\n", Depth: 1, Location: answer.Location{Path: "shapes/shapes.go", Line: 8}},
		{Name: "Total", Kind: "function", Location: answer.Location{Path: "shapes/shapes.go", Line: 28}},
	}}
	expectText(t, "outline", answertext.FormatSymbols(outline), `shapes/shapes.go: 4 symbols
7: interface Shape
  8: method Area  func() float64
28: function Total
... and 1 more symbols`)
	expectText(t, "empty outline", answertext.FormatSymbols(&answer.Symbols{File: "a.go", Server: "gopls"}), "a.go declares no symbols (gopls)")
	expectText(t, "no match in outline", answertext.FormatSymbols(&answer.Symbols{File: "a.go", Query: "zz", Server: "gopls"}),
		`no symbol in a.go matches "zz" (gopls)`)

	ws := &answer.Symbols{Query: "Square", Total: 2, Failures: []string{"pyright (root .) did not answer"}, Symbols: []answer.Symbol{
		{Name: "Square", Kind: "class", Container: "geometry", Location: answer.Location{Path: "src/geometry.ts", Line: 2, Column: 1, Text: "export class Square {"}},
	}}
	expectText(t, "workspace", answertext.FormatSymbols(ws), `2 symbols match "Square":
class Square in geometry — src/geometry.ts:2:1: export class Square {
... and 1 more; narrow the query
(one server failed: pyright (root .) did not answer)`)
	expectText(t, "no workspace match", answertext.FormatSymbols(&answer.Symbols{Query: "zz"}), `no symbol matches "zz" in the workspace`)
}

func TestFormatCodeActions(t *testing.T) {
	r := &answer.CodeActions{Symbol: "undefinedThing", File: "main.go", Line: 15, Server: "gopls", Actions: []answer.CodeAction{
		{Title: "Create function undefinedThing", Kind: "quickfix", Preferred: true, Files: []string{"main.go"}},
		{Title: "Organize\nimports", Kind: "source.organizeImports", Disabled: true, DisabledReason: "nothing to do", RunsCommand: true},
		{Title: "Plain"},
		{Kind: "quickfix", Files: []string{"/w/outside/secret.ts"}, Withheld: "its edit changes /w/outside/secret.ts, outside the root, so its title is not quoted"},
	}}
	expectText(t, "actions", answertext.FormatCodeActions(r, true), `4 code actions for "undefinedThing" at main.go:15:
1. Create function undefinedThing (quickfix; preferred; edits main.go)
2. Organize ⏎ imports (source.organizeImports; disabled: nothing to do; runs a server command)
3. Plain
4. (title withheld: its edit changes /w/outside/secret.ts, outside the root, so its title is not quoted) (quickfix; edits /w/outside/secret.ts)`)
	r.Actions = nil
	expectText(t, "none", answertext.FormatCodeActions(r, true), `no code actions offered for "undefinedThing" at main.go:15 (gopls)`)
}

func TestFormatDiagnostics(t *testing.T) {
	root := "/r"
	got := answertext.FormatDiagnostics(root, []diag.Diagnostic{
		{File: "/r/b.go", Line: 2, Column: 1, Severity: diag.SeverityWarning, Message: "w\nsecond line", Source: "vet"},
		{File: "/r/a.go", Line: 9, Column: 4, Severity: diag.SeverityError, Code: "E1", Message: "e", LineText: "\tx := 1"},
	})
	expectText(t, "diagnostics", got, "a.go:9:4: error: e [E1]\n    x := 1\nb.go:2:1: warning: w ⏎ second line (vet)")
	if answertext.FormatDiagnostics(root, nil) != "" {
		t.Error("no diagnostics should format as empty")
	}

	fd := &answer.FileDiagnostics{File: "main.go", Server: "gopls", Diagnostics: []diag.Diagnostic{
		{File: "/r/main.go", Line: 15, Column: 17, Severity: diag.SeverityError, Code: "UndeclaredName", Source: "compiler",
			Message: "undefined: undefinedThing", LineText: "func broken() { undefinedThing() }"},
		{File: "/r/main.go", Line: 16, Column: 1, Severity: diag.SeverityHint, Message: "h"},
		{File: "/r/main.go", Line: 17, Column: 1, Severity: diag.SeverityHint, Message: "h2"},
	}}
	expectText(t, "file", answertext.FormatFileDiagnostics(root, fd), `1 error, 2 hints in main.go (gopls):
main.go:15:17: error: undefined: undefinedThing [UndeclaredName] (compiler)
    func broken() { undefinedThing() }
main.go:16:1: hint: h
main.go:17:1: hint: h2`)
	expectText(t, "none, incomplete", answertext.FormatFileDiagnostics(root, &answer.FileDiagnostics{File: "a.py", Server: "pyright", Incomplete: true, WaitMS: 5000}),
		"no problems reported in a.py (pyright)\n(note: pyright had not finished within 5s; these may be incomplete — ask again)")
}

func TestFormatCheck(t *testing.T) {
	one, zero := 1, 0
	r := &answer.CheckReport{Runs: []answer.CheckRun{
		{Language: "Go", Dirs: []string{"."}, Command: []string{"go", "vet", "./..."}, ExitCode: &one, DurationMS: 1234,
			Output: []string{"# example.com/x", "main.go:15:17: undefined: undefinedThing"}, MoreLines: 3},
		{Language: "Python", Dirs: []string{"py"}, Command: []string{"pyright"}, ExitCode: &zero, DurationMS: 20},
		{Language: "TypeScript/JavaScript", Dirs: []string{"web"}, Command: []string{"tsc"}, ExitCode: &one, TimedOut: true, TimeoutMS: 180000, DurationMS: 180000},
		{Language: "Dart", Dirs: []string{"app"}, Command: []string{"dart", "analyze"}, Error: "fork/exec dart: permission denied"},
		{Language: "C/C++", Dirs: []string{".", "lib"}, Skipped: answer.SkipNoChecker, Reason: "C/C++ has no project checker here"},
		{Language: "Rust", Dirs: []string{"."}, Command: []string{"cargo", "check"}, Skipped: answer.SkipRunsCode, Reason: "cargo check runs build scripts (build.rs)"},
		{Language: "Python", Dirs: []string{"tools"}, Command: []string{"pyright"}, Skipped: answer.SkipNotInstalled, Reason: "npm install pyright"},
	}}
	expectText(t, "check", answertext.FormatCheck(r), `$ go vet ./...   (Go, in ., exit 1, 1.234s)
# example.com/x
main.go:15:17: undefined: undefinedThing
... and 3 more lines

$ pyright   (Python, in py, exit 0, 20ms)
no problems found

$ tsc   (TypeScript/JavaScript, in web, stopped at the 3m0s time limit, 3m0s)
(no output)

$ dart analyze   (Dart, in app, fork/exec dart: permission denied, 0s)
(no output)

C/C++ (., lib): C/C++ has no project checker here

Rust (.): cargo check was not run: cargo check runs build scripts (build.rs), and this checkout is not trusted: programs inside it (node_modules/.bin, .venv/bin, venv/bin) are not run and checkers that execute its code are skipped; a harness that trusts it sets TrustCheckout (builtin-tools --trust-checkout)

Python in tools: pyright is not installed, so the project check cannot run (npm install pyright)`)
}

func TestFormatStatus(t *testing.T) {
	at := time.Date(2025, 1, 2, 15, 4, 5, 0, time.Local)
	st := &answer.Status{Root: "/work/x", Servers: []answer.ServerStatus{
		{ID: "gopls", Language: "Go", Extensions: []string{".go"}, State: answer.StateRunning, MarkerDirs: []string{"."},
			Running: []answer.RunningServer{{Root: ".", PID: 42, UptimeSeconds: 75, OpenFiles: 2, Encoding: "utf-16", Clients: 3, MemoryKB: 204800, IdleSeconds: 4}},
			Crashes: []answer.Crash{{Root: ".", Error: "gopls (root .) exited: signal: killed", At: at}}},
		{ID: "pyright", Language: "Python", Extensions: []string{".py", ".pyi"}, State: answer.StateNoMarker, Program: "pyright-langserver",
			Binary: "/bin/pyright-langserver", RootMarkers: []string{"pyproject.toml", "setup.py"}},
		{ID: "pylsp", Language: "Python", Extensions: []string{".py"}, State: answer.StateNoMarkerNoBinary, Program: "pylsp",
			RootMarkers: []string{"pyproject.toml"}, Install: "apt-get install python3-pylsp"},
		{ID: "typescript-language-server", Language: "TypeScript/JavaScript", Extensions: []string{".js", ".ts"}, State: answer.StateAvailable,
			MarkerDirs: []string{"web"}, Binary: "/bin/typescript-language-server", PassedOver: []string{"web/node_modules/.bin/typescript-language-server"}},
		{ID: "clangd", Language: "C/C++", Extensions: []string{".c"}, State: answer.StateNoBinary, MarkerDirs: []string{".", "lib"},
			Program: "clangd", Install: "apt-get install clangd",
			StartFailures: []answer.StartFailure{{Root: "lib", Error: "starting clangd for lib: boom", RetryAt: at}}},
		{ID: "rust-analyzer", Language: "Rust", Extensions: []string{".rs"}, State: answer.StateBroken, MarkerDirs: []string{"."},
			Binary: "/bin/rust-analyzer", RunError: "error: Unknown binary 'rust-analyzer'", Install: "rustup component add rust-analyzer",
			Checker: []string{"cargo", "check"}, CheckerSkipped: "cargo check runs build scripts"},
	}}
	expectText(t, "status", answertext.FormatStatus(st), `language servers for /work/x:
this checkout is not trusted: programs inside it (node_modules/.bin, .venv/bin, venv/bin) are not run and checkers that execute its code are skipped; a harness that trusts it sets TrustCheckout (builtin-tools --trust-checkout)
- Go (gopls, .go): running for . (pid 42, up 1m15s, used by 3 runs of this process, 200 MiB resident, last used 4s ago, 2 open files, positions in utf-16); last crash: .: gopls (root .) exited: signal: killed at 15:04:05
- Python (pyright, .py .pyi): not used here: pyright-langserver is installed (/bin/pyright-langserver) but no root marker (pyproject.toml, setup.py) is in this checkout
- Python (pylsp, .py): not used here: no root marker (pyproject.toml) in this checkout, and pylsp is not installed (apt-get install python3-pylsp)
- TypeScript/JavaScript (typescript-language-server, .js .ts): available (marker in web; /bin/typescript-language-server), not started: it starts on the first call for one of its files; not run because the checkout is not trusted: web/node_modules/.bin/typescript-language-server
- C/C++ (clangd, .c): NOT available: marker found in ., lib, but clangd is not installed; install it: apt-get install clangd; failed to start for lib: starting clangd for lib: boom (not retried until 15:04:05; lsp reload retries now)
- Rust (rust-analyzer, .rs): NOT available: marker found in ., and /bin/rust-analyzer is installed but does not run: error: Unknown binary 'rust-analyzer'; install it: rustup component add rust-analyzer; diagnostics "*" skips cargo check: cargo check runs build scripts`)
	st.Trusted, st.Servers = true, nil
	expectText(t, "trusted", answertext.FormatStatus(st), "language servers for /work/x:\nthis checkout is trusted: programs inside it (node_modules/.bin, .venv/bin, venv/bin) are preferred to PATH, and checkers that run its code run")
}

func TestFormatReloadAndRename(t *testing.T) {
	expectText(t, "nothing to reload", answertext.FormatReload(&answer.ReloadResult{All: true}),
		"no language server is running; nothing to reload (servers start on the first call that needs them)")
	expectText(t, "reload all", answertext.FormatReload(&answer.ReloadResult{All: true, Servers: []answer.Reloaded{
		{Server: "gopls", Root: ".", WasRunning: true, PID: 1}, {Server: "clangd", Root: "lib", WasRunning: true, PID: 2}}}),
		"stopped gopls for .; started it again\nstopped clangd for lib; started it again")
	expectText(t, "reload one", answertext.FormatReload(&answer.ReloadResult{Servers: []answer.Reloaded{{Server: "gopls", Root: ".", WasRunning: true, PID: 7, ReadyMS: 1500}}}),
		"restarted gopls for . (pid 7, ready in 1.5s)")
	expectText(t, "start one", answertext.FormatReload(&answer.ReloadResult{Servers: []answer.Reloaded{{Server: "gopls", Root: ".", PID: 7, ReadyMS: 20}}}),
		"started gopls for . (pid 7, ready in 20ms)")

	r := &answer.RenameResult{Symbol: "Total", NewName: "Sum", Server: "gopls", Edits: 3, Notes: []string{"b.go: owner not kept"}, Files: []answer.FileEdit{
		{Path: "main.go", Edits: 1}, {Path: "shapes/sum.go", Edits: 2, RenamedFrom: "shapes/total.go"}, {Path: "x.go", Created: true}, {Path: "y.go", Deleted: true}}}
	expectText(t, "rename", answertext.FormatRename(r), fmt.Sprintf(`renamed "Total" to "Sum" (gopls): 3 edits in 4 files
  main.go: 1 edit
  shapes/sum.go: 2 edits, renamed from shapes/total.go
  x.go: created
  y.go: deleted
note: %s`, "b.go: owner not kept"))
}

// Call sites fill the output budget and no more; what is left out is
// counted, and a callee outside the root is named without a path.
func TestFormatCallsBudget(t *testing.T) {
	r := &answer.Calls{Operation: answer.OpIncomingCalls, Symbol: "Total", File: "cart.go", Line: 9, Server: "gopls", Function: "Total"}
	for i := range 150 {
		r.Sites = append(r.Sites, answer.CallSite{Name: fmt.Sprintf("caller%d", i), Kind: "function",
			Site:    answer.Location{Path: "use.go", Line: i + 1, Column: 5, Text: "x := c.Total() + 1"},
			Defined: answer.Location{Path: "use.go", Line: i + 1}})
	}
	r.Total, r.Functions = 300, 150
	text := answertext.FormatCalls(r, textfit.Budget(2000))
	if len(text) > 2000 {
		t.Errorf("text passes the budget: %d characters", len(text))
	}
	lines := strings.Split(text, "\n")
	shown := len(lines) - 2
	expectHas(t, "cut calls", text, `300 calls of "Total" at cart.go:9 from 150 functions (gopls):`,
		"use.go:1:5: x := c.Total() + 1  ← caller0 (function, use.go:1)",
		fmt.Sprintf("… %d more call sites left out (%d shown of 300, cut at the output budget); the structured result lists 150", 300-shown, shown))
	whole := answertext.FormatCalls(r, textfit.Budget(1<<20))
	expectHas(t, "capped calls", whole, "… 150 more call sites left out (150 shown of 300, cut at the cap of 200 sites)")

	out := &answer.Calls{Operation: answer.OpOutgoingCalls, Symbol: "Report", File: "cart.go", Line: 12, Server: "gopls", Total: 1, Functions: 1,
		Sites: []answer.CallSite{{Name: "Println", Kind: "function", Site: answer.Location{Path: "cart.go", Line: 13, Column: 6, Text: `fmt.Println(1)`},
			Defined: answer.Location{Path: "/usr/lib/go/src/fmt/print.go", Line: 313, Outside: true}}}}
	got := answertext.FormatCalls(out, textfit.Budget(8000))
	expectText(t, "outgoing outside", got, `1 call made by "Report" at cart.go:12 to 1 function (gopls):
cart.go:13:6: fmt.Println(1)  → Println (function, declared outside the root)`)
	if strings.Contains(got, "/usr/lib") {
		t.Errorf("an absolute path is shown: %s", got)
	}
	none := &answer.Calls{Operation: answer.OpIncomingCalls, Symbol: "dead", File: "a.go", Line: 3, Server: "gopls", Function: "dead"}
	expectText(t, "no calls", answertext.FormatCalls(none, textfit.Budget(8000)), `no calls of "dead" at a.go:3 found (gopls)`)
}
