package evaltool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

func tsCell(t *testing.T, r *registry.Run, code string) (string, bool) {
	t.Helper()
	res := call(t, r, tiers.Normal, "typescript", code)
	return registry.ResultText(res), res.IsError
}

// tsCompiler is the TypeScript the install step puts in .tools.
func tsCompiler(t *testing.T) string {
	testenv.LookPath(t, "node")
	return testenv.File(t, "typescript", filepath.Join("node_modules", "typescript", "lib", "typescript.js"))
}

// Issue 22 §2: TypeScript cells are compiled with the installed compiler
// (types stripped, not checked) and run in the JavaScript context: their
// top-level declarations persist as JavaScript's do, also into JavaScript
// cells; errors and stack frames name the cell's own lines, though type
// declarations leave no line in the compiled code; a syntax error names
// its line and nothing runs; a type error is not checked.
func TestTypeScript(t *testing.T) {
	r := newRun(t, eval.Config{TypeScript: tsCompiler(t)})
	text, _ := tsCell(t, r, "interface Point { x: number; y: number }\ntype Name = string\nconst origin: Point = { x: 3, y: 4 }\nfunction norm(p: Point): number {\n  return Math.hypot(p.x, p.y)\n}\nnorm(origin)")
	want(t, text, "kernel state: preserved", "\n5")
	text, _ = tsCell(t, r, "enum Color { Red, Green }\nlet greeting: Name = 'hi'\nconst v = await Promise.resolve<number>(norm({ x: 6, y: 8 }))\ngreeting + ' ' + Color[1] + ' ' + v")
	want(t, text, "'hi Green 10'")
	text = jsCell(t, r, "norm(origin) + v")
	want(t, text, "\n15")
	// Lines 1 to 3 are types only; the throw is on line 6 of the cell.
	text, _ = tsCell(t, r, "type A = number\ninterface B {\n  a: A\n}\nfunction boom(b: B): never {\n  throw new Error('bad ' + b.a)\n}\nconsole.log('before')\nboom({ a: 1 })\nconsole.log('after')")
	want(t, text, "before\n", "Error: bad 1", "at boom (cell line 6)", "at cell line 9", "Stopped at statement 5 of 6 (line 9) by the error; statement 6 (line 10) did not run.")
	if !strings.Contains(text, "cell line 6") {
		t.Fatalf("the stack names no cell line 6:\n%s", text)
	}
	text, _ = tsCell(t, r, "boom({ a: 2 })")
	want(t, text, "Error: bad 2", "cell line 6")
	text, _ = tsCell(t, r, "console.log('one')\nlet n: number = = 2\nconsole.log('three')")
	want(t, text, "cell line 2: let n: number = = 2", "TS1109: Expression expected.", "Nothing ran: line 2 does not compile")
	wantNot(t, text, "one\n", "a cell that does not compile ran")
	// Not type-checked: the wrong type runs, as transpileModule has it.
	text, _ = tsCell(t, r, "const s: number = 'not a number' as any\ntypeof s")
	want(t, text, "'string'")
}

// With no compiler configured, the one installed beside tsc on PATH is
// used; with none anywhere, the call says how to install one.
func TestTypeScriptCompilerLookup(t *testing.T) {
	tsCompiler(t)
	testenv.LookPath(t, "tsc")
	r := newRun(t, eval.Config{})
	text, _ := tsCell(t, r, "const n: number = 6 * 7\nn")
	want(t, text, "\n42")
	node := testenv.LookPath(t, "node")
	t.Setenv("PATH", filepath.Dir(node))
	if _, err := exec.LookPath("tsc"); err == nil {
		t.Skip("tsc is installed beside node; no PATH without a compiler to try")
	}
	r = newRun(t, eval.Config{Node: node})
	text, isErr := tsCell(t, r, "1 as number")
	if !isErr {
		t.Fatalf("no error: %s", text)
	}
	want(t, text, "`language: typescript` needs the TypeScript compiler, and none was found", "npm install typescript")
}

// Without a compiler the call fails saying how to install one; an unknown
// language names the ones there are.
func TestTypeScriptErrors(t *testing.T) {
	testenv.LookPath(t, "node")
	r := newRun(t, eval.Config{TypeScript: filepath.Join(t.TempDir(), "nowhere")})
	text, isErr := tsCell(t, r, "1 as number")
	if !isErr {
		t.Fatalf("no error: %s", text)
	}
	want(t, text, "the TypeScript compiler configured for eval", "has no lib/typescript.js")
	broken := filepath.Join(t.TempDir(), "typescript")
	os.MkdirAll(filepath.Join(broken, "lib"), 0o755)
	os.WriteFile(filepath.Join(broken, "lib", "typescript.js"), []byte("throw new Error('half installed')"), 0o644)
	r = newRun(t, eval.Config{TypeScript: broken})
	text, _ = tsCell(t, r, "1 as number")
	want(t, text, "could not be loaded: half installed")
	args, _ := json.Marshal(map[string]any{"code": "1", "description": "a step of the test at hand", "language": "ruby"})
	res, err := r.Call(context.Background(), tiers.Normal, "eval", args)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(registry.ResultText(res), "typescript") {
		t.Fatalf("unknown language: %s", registry.ResultText(res))
	}
}
