package evaltool_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Cells whose printed output IPython and eval must agree on: the magic
// rewriting is checked against IPython itself (EV-3).
var sameAsIPython = []string{
	"name = 'world'\n!echo hello $name {1+2}",
	"files = !printf 'a\\nb\\n'\nprint(files)",
	"s = '''\n!echo not a command\n%cd /nowhere\n'''\nprint(len(s.splitlines()))",
	"x = 1 # %cd /nowhere\nprint(x)",
	"import os\n%env GREETING=hi there\nprint(os.environ['GREETING'])",
	"import os\n%cd /tmp\nprint(os.getcwd())",
	"if True:\n    !echo indented\nprint('after')",
	"price = 5\n!echo '$$price is' $price",
	"%%bash\necho from bash\nx=3; echo \"x is $x\"",
}

const ipythonRunner = `
import json, sys, io, contextlib, os
from IPython.core.interactiveshell import InteractiveShell
cells = json.load(sys.stdin)
result_path = sys.argv[1]
shell = InteractiveShell.instance()
out = []
for cell in cells:
    r, w = os.pipe()
    saved = os.dup(1)
    os.dup2(w, 1)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        shell.run_cell(cell, silent=False, store_history=False)
    sys.stdout.flush()
    os.dup2(saved, 1)
    os.close(w)
    data = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        data += chunk
    os.close(r)
    out.append(data.decode() + buf.getvalue())
with open(result_path, "w") as f:
    json.dump(out, f)
`

func TestMagicsMatchIPython(t *testing.T) {
	matchIPython(t, sameAsIPython)
}

// Issue 22 §2: %who and %whos print the cells' names as IPython does
// (name, type, data/info: lengths for containers, the middle of a long
// text cut), with a type filter, in a fresh namespace of each.
func TestWhoMatchesIPython(t *testing.T) {
	matchIPython(t, []string{
		"%who",
		"alpha = 123\nbeta = 'test'\nimport os\nlong_text = 'x' * 30 + 'y' * 40\nitems = [1, 2, 3]\nd = {'a': 1}\npair = (1, 2)\nlines = 'one\\ntwo'\n_private = 1\n%who",
		"%whos",
		"%who int str",
		"%whos list dict",
		"%who complex",
		"display = 5\n%whos int",
	})
}

// matchIPython runs cells in IPython and in eval, each in one namespace of
// its own, and compares what they printed.
func matchIPython(t *testing.T, cells []string) {
	if err := exec.Command(python, "-c", "import IPython").Run(); err != nil {
		testenv.Missing(t, "IPython for "+python, "apt-get install python3-ipython (scripts/install-eval.sh)")
	}
	in, _ := json.Marshal(cells)
	resultPath := filepath.Join(t.TempDir(), "ipython.json")
	cmd := exec.Command(python, "-c", ipythonRunner, resultPath)
	cmd.Stdin = strings.NewReader(string(in))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("IPython: %v\n%s", err, stderr.String())
	}
	var theirs []string
	data, _ := os.ReadFile(resultPath)
	if err := json.Unmarshal(data, &theirs); err != nil {
		t.Fatalf("IPython's answers: %v\n%s", err, stderr.String())
	}
	r := newRun(t, eval.Config{})
	for i, code := range cells {
		_, text := cell(t, r, tiers.Normal, code)
		ours := text[strings.Index(text, "\n")+1:]
		if norm(ours) != norm(theirs[i]) {
			t.Errorf("cell %q:\nIPython printed %q\neval printed    %q", code, norm(theirs[i]), norm(ours))
		}
	}
}

func norm(s string) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return strings.Join(lines, "\n")
}
