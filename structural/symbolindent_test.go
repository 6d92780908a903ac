package structural_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/runtest"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
)

const (
	indentPy     = "def F():\n    return 0\n\n\nclass C:\n    def m(self):\n        return 1\n"
	indentPyTabs = "def F():\n\treturn 0\n"
)

// R9: tree-sitter-python parses text Python refuses for its indentation,
// so edit_symbol wrote it and said it had. Each of these is refused with
// Python's reason and the file left as it was; the control is written
// and compiles.
func TestEditSymbolRefusesPythonIndentation(t *testing.T) {
	py := testenv.LookPath(t, "python3")
	cases := []struct {
		name, file, symbol, op, text, want string
	}{
		{"indented past its block", indentPy, "F", "replace_body", "x = 1\n        return x", "(in the changed file, line 3: unexpected indent)"},
		{"dedent below the body", indentPy, "C.m", "replace_body", "    x = 1\n  return x", "line 8: unindent does not match any outer indentation level"},
		{"a tab and eight spaces", indentPyTabs, "F", "replace_body", "if x:\n\ty = 1\n        return y", "line 4: inconsistent use of tabs and spaces in indentation"},
		{"whole definition", indentPy, "F", "replace", "def F():\n    x = 1\n      return x", "line 3: unexpected indent"},
		{"control", indentPy, "C.m", "replace_body", "x = 1\nif x:\n    return x\nreturn 0", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t, map[string]string{"m.py": c.file}, builtintools.Options{})
			path := filepath.Join(r.Root(), "m.py")
			text, isErr := runtest.Call(t, r, tiers.Normal, "edit_symbol", map[string]any{"symbol": c.symbol, "operation": c.op, "new_text": c.text})
			got, _ := os.ReadFile(path)
			if c.want == "" {
				if isErr {
					t.Fatal(text)
				}
				cmd := exec.Command(py, "-I", "-S", "-c", "import sys; compile(open(sys.argv[1]).read(), 'm.py', 'exec')", path)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("written and reported done, but Python refuses it: %s\n%s", out, got)
				}
				return
			}
			if !isErr || !strings.Contains(text, "nothing was written: the new text would leave m.py with indentation Python refuses (in the changed file, line ") || !strings.Contains(text, c.want) {
				t.Fatalf("(error=%v) %s\n%s", isErr, text, got)
			}
			if string(got) != c.file {
				t.Fatalf("written anyway:\n%s", got)
			}
		})
	}
}
