package evaltool_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/eval/evaltool"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// R12 (L-4): a bare os.fork() in a cell leaves one kernel: the child runs
// the rest of the cell (its prints reach the cell's output) and ends
// there, never reading the kernel's channel, so later cells all run in
// the parent. Before, the two kernels answered cells in turn (x went 1,
// 1, 2, 2), each result saying "kernel state: preserved".
func TestForkedChildLeavesTheKernel(t *testing.T) {
	r := newRun(t, eval.Config{})
	_, text := cell(t, r, tiers.Normal, "import os\nx = 0\npid = os.fork()\nif pid == 0:\n    print('from the child')\n    if os.fork() == 0:\n        print('from the grandchild')\n        os._exit(0)\n    os.wait()\nelse:\n    os.waitpid(pid, 0)\n'child' if pid == 0 else 'parent'")
	want(t, text, "from the child", "from the grandchild", "'parent'")
	if strings.Contains(text, "'child'") || strings.Contains(text, "Dropped") {
		t.Fatalf("the child's value or messages reached the result:\n%s", text)
	}
	for i := 1; i <= 4; i++ {
		_, text = cell(t, r, tiers.Normal, "x += 1\nx")
		want(t, text, fmt.Sprintf("\n%d", i))
	}
	// A child that raises, or calls sys.exit, ends with that status.
	cells(t, r, "",
		check{"import sys\npid = os.fork()\nif pid == 0:\n    sys.exit(7)\nos.WEXITSTATUS(os.waitpid(pid, 0)[1])", []string{"\n7"}},
		check{"pid = os.fork()\nif pid == 0:\n    1 / 0\nos.WEXITSTATUS(os.waitpid(pid, 0)[1])", []string{"ZeroDivisionError", "\n1"}},
		check{"x", []string{"\n4"}},
	)
}

// R12: multiprocessing workers (fork) started from a cell map a function
// the cell defines, as in Jupyter (cells run in a real __main__ module),
// and what each prints arrives whole in the cell's output: 8 workers × 8
// lines of 200 KB. Before, the function did not pickle, and the workers
// wrote on the kernel's channel: 0 of 64 lines whole, the result blaming
// "code in the cell".
func TestMultiprocessingWorkers(t *testing.T) {
	r := newRun(t, eval.Config{})
	res, text := cell(t, r, tiers.Normal, `import multiprocessing as mp

def work(i):
    for j in range(8):
        print(str(i) * 200_000)
    return i * i

with mp.get_context('fork').Pool(8) as pool:
    got = pool.map(work, range(8))
got`)
	want(t, text, "[0, 1, 4, 9, 16, 25, 36, 49]")
	wantNot(t, text, "Dropped", "the workers wrote on the kernel's channel")
	spilled := res.StructuredContent.(evaltool.EvalResult).Spilled
	b, err := os.ReadFile(spilled)
	if err != nil {
		t.Fatalf("the whole output: %v\n%s", err, text)
	}
	whole := 0
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if len(line) == 200_000 && strings.Count(line, line[:1]) == 200_000 {
			whole++
		}
	}
	if whole != 64 {
		t.Fatalf("%d of 64 lines arrived whole (%d bytes)", whole, len(b))
	}
}
