package evaltool_test

import (
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// Issue 19 §1: a cell whose code did not all run says which statement it
// stopped at and why, in both languages: an exception mid-cell, a syntax
// error in a later statement (nothing ran), an import the JavaScript
// rewriter cannot turn into code, an interrupt.
func TestStoppedSaysWhere(t *testing.T) {
	testenv.LookPath(t, "node")
	r := newRun(t, eval.Config{Inactivity: time.Second})
	cells(t, r, "javascript",
		check{"console.log('one')\nnull.boom\nconsole.log('three')\nconsole.log('four')", []string{"one\n", "TypeError", "Stopped at statement 2 of 4 (line 2) by the error; statements 3 to 4 (lines 3 to 4) did not run."}},
		check{"console.log('one')\nconst v = await Promise.reject(new Error('no node: here'))\nconsole.log('three')", []string{"one\n", "Error: no node: here", "Stopped at statement 2 of 3 (line 2)"}},
	)
	text := jsCell(t, r, "console.log('one')\nlet ok = 1\nlet = = 2")
	want(t, text, "SyntaxError", "Nothing ran: line 3 does not compile, so none of the cell's 3 statements ran.")
	wantNot(t, text, "one\n", "a cell that does not compile printed")
	text = jsCell(t, r, "console.log('one')\nimport { a } from\n'x' + 1")
	want(t, text, "Nothing ran", "statement 2 (line 2)", "import")
	text = jsCell(t, r, "console.log('one')\nwhile (true) {}\nconsole.log('three')")
	want(t, text, "Interrupted", "Stopped at statement 2 of 3 (line 2) by the interrupt; statement 3 (line 3) did not run.")

	cells(t, r, "",
		check{"print('one')\n1 / 0\nprint('three')", []string{"one\n", "ZeroDivisionError", "Stopped at statement 2 of 3 (line 2) by the error; statement 3 (line 3) did not run."}},
		check{"print('one')\nx = (\n", []string{"SyntaxError", "Nothing ran: line 2 does not compile"}},
		check{"print('one')\n%nosuchmagic\nprint('three')", []string{"unknown magic", "Nothing ran"}},
	)
	_, text = cell(t, r, tiers.Normal, "import time\nprint('one')\nwhile True:\n    time.sleep(0.1)\nprint('four')")
	want(t, text, "KeyboardInterrupt", "Stopped at statement 3 of 4 (lines 3 to 4) by the interrupt; statement 4 (line 5) did not run.")
	_, text = cell(t, r, tiers.Normal, "1 / 0")
	wantNot(t, text, "Stopped", "a one-statement cell's error needs no stop line")
}

// Issue 19 §1: Python cells may await at the top level, as in IPython,
// and what follows the await runs.
func TestPythonTopLevelAwait(t *testing.T) {
	r := newRun(t, eval.Config{})
	cells(t, r, "",
		check{"import asyncio\nprint('before')\nv = await asyncio.sleep(0.01, result=41)\nprint('after', v)\nawait asyncio.sleep(0, result=v + 1)", []string{"before\nafter 41\n42"}},
		check{"async def f():\n    return 7\n\nx = await f()\nx * 6", []string{"42"}},
	)
}
