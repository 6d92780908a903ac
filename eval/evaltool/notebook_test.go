package evaltool_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/eval/evaltool"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// jupyterDump writes a notebook as nbformat does (one space of indent, keys
// sorted, non-ASCII kept, a final newline), with Python's json.
const jupyterDump = `
import json, sys
nb = json.load(sys.stdin)
sys.stdout.write(json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
`

func jupyterFormat(t testing.TB, data []byte) []byte {
	t.Helper()
	cmd := exec.Command(python, "-c", jupyterDump)
	cmd.Stdin = strings.NewReader(string(data))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python json: %v", err)
	}
	return out
}

func codeCell(src string) map[string]any {
	return map[string]any{"cell_type": "code", "execution_count": nil, "metadata": map[string]any{}, "outputs": []any{}, "source": src}
}

// writeNotebook puts a notebook of cells, as Jupyter writes it, at rel.
func writeNotebook(t testing.TB, root, rel, lang string, cells ...map[string]any) string {
	t.Helper()
	nb := map[string]any{"cells": cells, "metadata": map[string]any{"kernelspec": map[string]any{"display_name": "Python 3", "language": lang, "name": "python3"}},
		"nbformat": 4, "nbformat_minor": 5}
	b, _ := json.Marshal(nb)
	path := filepath.Join(root, rel)
	if err := os.WriteFile(path, jupyterFormat(t, b), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func nbCall(t *testing.T, r *registry.Run, args map[string]any) (string, bool) {
	t.Helper()
	_, text, isErr := nbCallResult(t, r, args)
	return text, isErr
}

type nbFile struct {
	Cells []struct {
		Type    string           `json:"cell_type"`
		Count   *int             `json:"execution_count"`
		Outputs []map[string]any `json:"outputs"`
	} `json:"cells"`
}

func readNB(t *testing.T, path string) ([]byte, nbFile) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var nb nbFile
	if err := json.Unmarshal(data, &nb); err != nil {
		t.Fatalf("the notebook no longer parses: %v\n%s", err, data)
	}
	return data, nb
}

// withoutOutputs is a notebook's JSON with every code cell's outputs and
// execution count taken out, to compare the rest.
func withoutOutputs(t *testing.T, data []byte) any {
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	for _, c := range v["cells"].([]any) {
		delete(c.(map[string]any), "outputs")
		delete(c.(map[string]any), "execution_count")
	}
	return v
}

// Issue 22 §2: eval runs a notebook's cells in the kernel and writes
// their outputs and execution counts back as Jupyter writes them (the file
// stays as nbformat would write it, the rest unchanged); markdown is
// skipped; a failing cell stops the run, its error written; later cells
// see the state earlier runs left.
func TestNotebookRun(t *testing.T) {
	r := newRun(t, eval.Config{})
	path := writeNotebook(t, r.Root(), "analysis.ipynb", "python",
		map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": "# Analysis — naïve"},
		codeCell("x = 6\nprint('x is', x)"),
		codeCell("x * 7"),
		codeCell("import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()"),
		codeCell("print('before')\n1 / 0"),
		codeCell("print('never')"),
	)
	before, _ := readNB(t, path)
	text, isErr := nbCall(t, r, map[string]any{"notebook": "analysis.ipynb", "cells": "1-3"})
	if isErr {
		t.Fatal(text)
	}
	want(t, text, "[notebook analysis.ipynb · ran 2 cells · kernel state: preserved", "── cell 2 · In [1] ──\nx is 6", "── cell 3 · In [2] ──\n42",
		"Not code, not run: cell 1.", "Wrote the outputs and execution counts of cells 2, 3 into analysis.ipynb.")
	after, nb := readNB(t, path)
	if got := jupyterFormat(t, after); string(got) != string(after) {
		t.Fatalf("the notebook is not as nbformat writes it:\n%s\nnbformat:\n%s", after, got)
	}
	if !reflect.DeepEqual(withoutOutputs(t, before), withoutOutputs(t, after)) {
		t.Fatalf("more than the outputs changed:\n%s", after)
	}
	if c := nb.Cells[1]; c.Count == nil || *c.Count != 1 || len(c.Outputs) != 1 || c.Outputs[0]["output_type"] != "stream" ||
		!reflect.DeepEqual(c.Outputs[0]["text"], []any{"x is 6\n"}) {
		t.Fatalf("cell 2: %+v", c)
	}
	if c := nb.Cells[2]; c.Count == nil || *c.Count != 2 || len(c.Outputs) != 1 || c.Outputs[0]["output_type"] != "execute_result" ||
		c.Outputs[0]["execution_count"] != float64(2) || !reflect.DeepEqual(c.Outputs[0]["data"], map[string]any{"text/plain": []any{"42"}}) {
		t.Fatalf("cell 3: %+v", c)
	}
	if nb.Cells[3].Count != nil || len(nb.Cells[3].Outputs) != 0 {
		t.Fatalf("cell 4 was not asked for: %+v", nb.Cells[3])
	}

	text, _ = nbCall(t, r, map[string]any{"notebook": "analysis.ipynb", "cells": "all"})
	want(t, text, "ran 4 cells", "── cell 5 · In [6] ──\nbefore\n", "ZeroDivisionError", "Stopped before cell 6: cell 5 did not finish cleanly", "1 figure returned as images")
	_, nb = readNB(t, path)
	if out := nb.Cells[3].Outputs; len(out) != 1 || out[0]["output_type"] != "display_data" || out[0]["data"].(map[string]any)["image/png"] == nil {
		t.Fatalf("cell 4's figure: %+v", out)
	}
	out := nb.Cells[4].Outputs
	if len(out) != 2 || out[1]["output_type"] != "error" || out[1]["ename"] != "ZeroDivisionError" || out[1]["evalue"] != "division by zero" {
		t.Fatalf("cell 5's error: %+v", out)
	}
	if nb.Cells[5].Count != nil {
		t.Fatalf("cell 6 ran after the error: %+v", nb.Cells[5])
	}
}

// A notebook another program writes while its cells run is not
// overwritten: the call says so and the other program's version stays.
func TestNotebookChangedMeanwhile(t *testing.T) {
	r := newRun(t, eval.Config{})
	path := writeNotebook(t, r.Root(), "nb.ipynb", "python",
		codeCell("with open('nb.ipynb', 'a') as f:\n    f.write('\\n')\nprint('touched')"))
	text, isErr := nbCall(t, r, map[string]any{"notebook": "nb.ipynb"})
	if !isErr {
		t.Fatalf("not refused: %s", text)
	}
	// R17 (L-9): "cell 1 ran", not "cells cell 1 ran".
	if !strings.HasPrefix(text, "cell 1 ran, but nb.ipynb changed on disk while it ran (another program wrote it), so its outputs were not written over it") {
		t.Fatalf("the refusal reads:\n%s", text)
	}
	data, _ := readNB(t, path)
	if !strings.HasSuffix(string(data), "}\n\n") || strings.Contains(string(data), "output_type") {
		t.Fatalf("the other program's version did not stay:\n%s", data)
	}
}

// Bad notebook calls say what to give instead.
func TestNotebookBadInput(t *testing.T) {
	r := newRun(t, eval.Config{})
	writeNotebook(t, r.Root(), "nb.ipynb", "python", codeCell("1"), map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": "hi"})
	writeNotebook(t, r.Root(), "r.ipynb", "R", codeCell("1"))
	os.WriteFile(filepath.Join(r.Root(), "list.ipynb"), []byte(`[1, 2]`), 0o644)
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"notebook": "nb.ipynb", "cells": "0"}, `"0" is not a range of cells from 1 up`},
		{map[string]any{"notebook": "nb.ipynb", "cells": "2-1"}, `"2-1" is not a range of cells from 1 up`},
		{map[string]any{"notebook": "nb.ipynb", "cells": "three"}, `"three" is not a cell number or a range such as 3-5`},
		{map[string]any{"notebook": "nb.ipynb", "cells": "1-9"}, "the notebook has 2 cells, so there is no cell 3"},
		{map[string]any{"notebook": "nb.ipynb", "cells": "2"}, `hold no code cell (cell 2)`},
		{map[string]any{"notebook": "notes.txt"}, "notes.txt: not a notebook: not valid JSON"},
		{map[string]any{"notebook": "list.ipynb"}, "list.ipynb: not a notebook"},
		{map[string]any{"notebook": "r.ipynb"}, "the notebook's kernel language is R; eval runs python, javascript, typescript notebooks"},
		{map[string]any{"notebook": "missing.ipynb"}, "cannot read the notebook missing.ipynb"},
		{map[string]any{"notebook": "nb.ipynb", "code": "1"}, "give `code` or `notebook`, not both"},
		{map[string]any{"notebook": "nb.ipynb", "language": "javascript"}, "`language` is the notebook's own"},
		{map[string]any{"cells": "1", "code": "1"}, "`cells` picks cells of a notebook: give `notebook` too"},
		{map[string]any{"notebook": "../outside.ipynb"}, "outside"},
	} {
		text, isErr := nbCall(t, r, tc.args)
		if !isErr || !strings.Contains(text, tc.want) {
			t.Errorf("%v: error %v, want %q in:\n%s", tc.args, isErr, tc.want, text)
		}
	}
}

// nbclientRunner executes a notebook in place with Jupyter's nbclient and
// its python3 kernel (ipykernel), as `jupyter nbconvert --execute` does.
const nbclientRunner = `
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
try:
    NotebookClient(nb, kernel_name="python3", timeout=120, resources={"metadata": {"path": sys.argv[2]}}).execute()
except Exception as e:
    if type(e).__name__ != "CellExecutionError":
        raise
nbformat.write(nb, sys.argv[1])
`

func nbclientRun(t testing.TB, path, dir string) {
	t.Helper()
	if err := exec.Command(python, "-c", "import nbclient, nbformat, ipykernel").Run(); err != nil {
		testenv.Missing(t, "nbclient and ipykernel for "+python, "apt-get install python3-nbclient python3-nbformat python3-ipykernel (scripts/install-eval.sh)")
	}
	cmd := exec.Command(python, "-c", nbclientRunner, path, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("nbclient: %v\n%s", err, out)
	}
}

// shape is what a cell's outputs say, as the two runners both can say it:
// the text printed (streams joined: eval keeps stdout and stderr in one
// order), each value's text, a figure's presence, the error's name and
// value.
func shape(outputs []map[string]any) []string {
	var out []string
	text := ""
	join := func(v any) string {
		switch x := v.(type) {
		case string:
			return x
		case []any:
			var b strings.Builder
			for _, p := range x {
				b.WriteString(p.(string))
			}
			return b.String()
		}
		return ""
	}
	for _, o := range outputs {
		switch o["output_type"] {
		case "stream":
			text += join(o["text"])
		case "execute_result":
			out = append(out, "result: "+join(o["data"].(map[string]any)["text/plain"]))
		case "display_data":
			if _, ok := o["data"].(map[string]any)["image/png"]; ok {
				out = append(out, "figure")
			}
		case "error":
			out = append(out, "error: "+o["ename"].(string)+": "+o["evalue"].(string))
		}
	}
	if text != "" {
		out = append([]string{"printed: " + text}, out...)
	}
	return out
}

// The cells whose outputs Jupyter and eval must agree on.
var nbTable = []string{
	"x = 6\nprint('x is', x)",
	"x * 7",
	"import sys\nprint('to stderr', file=sys.stderr)",
	"for i in range(3):\n    print(i)",
	"'text'",
	"[1, 'two', {'three': 3}]",
	"y = None",
	"import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.show()",
	"print('last')\nraise ValueError('bad value')",
}

// Issue 22 §2 cross-check: a notebook executed by Jupyter's nbclient and
// by eval yields the same outputs for a table of cells: printed text,
// values, figures, errors, and execution counts 1 to n.
func TestNotebookMatchesNbclient(t *testing.T) {
	r := newRun(t, eval.Config{})
	var cells []map[string]any
	for _, src := range nbTable {
		cells = append(cells, codeCell(src))
	}
	ours := writeNotebook(t, r.Root(), "ours.ipynb", "python", cells...)
	theirs := writeNotebook(t, r.Root(), "theirs.ipynb", "python", cells...)
	nbclientRun(t, theirs, r.Root())
	text, isErr := nbCall(t, r, map[string]any{"notebook": "ours.ipynb", "reset": true})
	if isErr {
		t.Fatal(text)
	}
	_, a := readNB(t, ours)
	_, b := readNB(t, theirs)
	for i := range nbTable {
		if got, want := shape(a.Cells[i].Outputs), shape(b.Cells[i].Outputs); !reflect.DeepEqual(got, want) {
			t.Errorf("cell %d %q:\nnbclient: %q\neval:     %q", i+1, nbTable[i], want, got)
		}
		if a.Cells[i].Count == nil || b.Cells[i].Count == nil || *a.Cells[i].Count != *b.Cells[i].Count {
			t.Errorf("cell %d: execution counts %v (eval) and %v (nbclient)", i+1, a.Cells[i].Count, b.Cells[i].Count)
		}
	}
}

// R13 (L-5): a notebook with two top-level "cells" lists is refused before
// anything runs: Jupyter shows only the last, and the first ran unseen.
func TestNotebookDuplicateKeys(t *testing.T) {
	r := newRun(t, eval.Config{})
	hidden := `{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "open('hidden-ran.txt', 'w').close()"}`
	shown := `{"cell_type": "code", "execution_count": null, "metadata": {}, "outputs": [], "source": "print('shown')"}`
	nb := `{"cells": [` + hidden + `], "cells": [` + shown + `], "metadata": {"kernelspec": {"language": "python"}}, "nbformat": 4, "nbformat_minor": 5}`
	os.WriteFile(filepath.Join(r.Root(), "dup.ipynb"), []byte(nb), 0o644)
	text, isErr := nbCall(t, r, map[string]any{"notebook": "dup.ipynb"})
	if !isErr {
		t.Fatalf("not refused: %s", text)
	}
	want(t, text, `dup.ipynb: the key "cells" is given twice at the top level: Jupyter keeps only the last`)
	if _, err := os.Stat(filepath.Join(r.Root(), "hidden-ran.txt")); err == nil {
		t.Fatal("the hidden cell ran")
	}
}

// nbCallResult is nbCall with the structured result.
func nbCallResult(t *testing.T, r *registry.Run, args map[string]any) (evaltool.EvalResult, string, bool) {
	t.Helper()
	args["description"] = "run cells of the notebook at hand"
	b, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := r.Call(ctx, tiers.Normal, "eval", b)
	if err != nil {
		t.Fatal(err)
	}
	er, _ := res.StructuredContent.(evaltool.EvalResult)
	return er, registry.ResultText(res), res.IsError
}

// R4 (M-2): what a notebook run writes back is bounded: an output over
// 1 MiB is written as its head and tail around a note naming the file
// with all of it, a run writes at most 16 MiB of outputs, and the notebook
// stays one eval reads again.
func TestNotebookOutputsBounded(t *testing.T) {
	r := newRun(t, eval.Config{})
	const big = "import sys\nline = 'x' * 999 + '\\n'\nfor i in range(5_000):\n    sys.stdout.write(line)\nprint('the end')"
	// 18 cells of 1,000,000 bytes each: under a MiB each, 18 MB in all.
	const mb = "import sys\nline = 'y' * 999 + '\\n'\nfor i in range(1_000):\n    sys.stdout.write(line)"
	cells := []map[string]any{codeCell(big)}
	for i := 0; i < 18; i++ {
		cells = append(cells, codeCell(mb))
	}
	path := writeNotebook(t, r.Root(), "big.ipynb", "python", cells...)
	er, text, isErr := nbCallResult(t, r, map[string]any{"notebook": "big.ipynb"})
	if isErr || !er.Written {
		t.Fatalf("not written: %s", text)
	}
	data, nb := readNB(t, path)
	if len(data) > 17<<20 {
		t.Fatalf("the notebook is %d bytes", len(data))
	}
	first := shape(nb.Cells[0].Outputs)
	if len(first) != 1 || len(first[0]) > 1<<20 || !strings.Contains(first[0], "characters not written into the notebook; the whole output is in ") ||
		!strings.HasSuffix(first[0], "the end\n") || !strings.HasPrefix(first[0], "printed: xxxx") {
		t.Fatalf("cell 1's output (%d bytes): %.300q … %.300q", len(first[0]), first[0], first[0][max(0, len(first[0])-300):])
	}
	spill := regexp.MustCompile(`the whole output is in (\S+) while`).FindStringSubmatch(first[0])
	if fi, err := os.Stat(spill[1]); err != nil || fi.Size() != int64(5_000_000+len("the end\n")) {
		t.Fatalf("the file the note names: %v %v", fi, err)
	}
	if whole := shape(nb.Cells[1].Outputs); len(whole) != 1 || len(whole[0]) != len("printed: ")+1_000_000 {
		t.Fatalf("cell 2's output is not whole: %d bytes", len(whole[0]))
	}
	last := shape(nb.Cells[18].Outputs)
	if len(last) != 1 || !strings.Contains(last[0], "characters not written into the notebook") {
		t.Fatalf("the last cell's output was written past the run's cap: %d bytes", len(last[0]))
	}
	// eval reads what it wrote.
	if text, isErr := nbCall(t, r, map[string]any{"notebook": "big.ipynb", "cells": "2"}); isErr {
		t.Fatalf("the notebook cannot be run again: %s", text)
	}
}

// R16 (L-8): under write=deny the cells run and their outputs come back,
// but the notebook is not written, and the result says so; under write=ask
// the write-back is asked about, and a denial leaves the file as it was.
func TestNotebookWriteGate(t *testing.T) {
	var cards []string
	answer := "Deny"
	port := askuser.Func(func(ctx context.Context, q askuser.Question) (askuser.Answer, error) {
		cards = append(cards, q.Question)
		return askuser.Answer{Outcome: askuser.Answered, Choices: []string{answer}}, nil
	})
	for _, tc := range []struct {
		policy    registry.Decision
		answer    string
		written   bool
		want      string
		cardCount int
	}{
		{registry.Deny, "", false, "Not written: this run's approval policy denies writes (write=deny), so nb.ipynb was left as it was; the outputs are only in this result.", 0},
		{registry.Ask, "Deny", false, "Not written: writing the outputs into nb.ipynb was not approved (eval is refused: the operator denied it", 1},
		{registry.Ask, "Allow", true, "Wrote the outputs and execution counts of cell 1 into nb.ipynb.", 1},
	} {
		t.Run(string(tc.policy)+tc.answer, func(t *testing.T) {
			cards, answer = nil, tc.answer
			root := t.TempDir()
			r, err := builtintools.NewRun(builtintools.Options{Root: root, Without: []string{"lsp", "structural"}, Ask: port,
				Policy: registry.Policy{tiers.Write: tc.policy}, Settings: map[string]any{"eval": eval.Config{Python: python}}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { r.Close() })
			path := writeNotebook(t, root, "nb.ipynb", "python", codeCell("print('ran')"))
			before, _ := readNB(t, path)
			er, text, isErr := nbCallResult(t, r, map[string]any{"notebook": "nb.ipynb"})
			if isErr {
				t.Fatal(text)
			}
			want(t, text, "── cell 1 · In [1] ──\nran\n", tc.want)
			after, _ := readNB(t, path)
			if changed := string(after) != string(before); changed != tc.written || er.Written != tc.written || (er.NotWritten == "") != tc.written {
				t.Fatalf("file changed %v, structured %+v:\n%s", changed, er, text)
			}
			if len(cards) != tc.cardCount || (tc.cardCount > 0 && cards[0] != "Allow eval nb.ipynb? (a write tool)") {
				t.Fatalf("cards: %q", cards)
			}
		})
	}
}

// Issue 26: a notebook run that a cell stopped says so in its structured
// result as in its text: which cell, its error, the cells that did not
// run. R17 (L-9): a cell without output shows no header of its own.
func TestNotebookFailureStructured(t *testing.T) {
	r := newRun(t, eval.Config{})
	writeNotebook(t, r.Root(), "nb.ipynb", "python",
		codeCell("x = 1"),
		map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": "note"},
		codeCell("y = 2\n1 / 0\nz = 3"),
		codeCell("print('never')"),
		map[string]any{"cell_type": "markdown", "metadata": map[string]any{}, "source": "end"},
	)
	er, text, isErr := nbCallResult(t, r, map[string]any{"notebook": "nb.ipynb"})
	if isErr {
		t.Fatal(text)
	}
	want(t, text, "── cell 1 · In [1] ──\n── cell 3 · In [2] ──\nTraceback", "ZeroDivisionError",
		"Stopped before cell 4: cell 3 did not finish cleanly", "Not code, not run: cells 2, 5.")
	wantNot(t, text, "[cell 1 ·", "a cell's own header shown as its output")
	if er.FailedCell != 3 || !strings.Contains(er.Error, "ZeroDivisionError: division by zero") || er.Stopped == nil || er.Stopped.Statement != 2 ||
		!reflect.DeepEqual(er.NotRun, []int{4}) || !reflect.DeepEqual(er.NotCode, []int{2, 5}) || !reflect.DeepEqual(er.Ran, []int{1, 3}) || er.Cell != 2 || !er.Written {
		t.Fatalf("structured: %+v", er)
	}
	if c := er.CellsDone; len(c) != 2 || c[0].Cell != 1 || c[0].Count != 1 || c[0].Error != "" || c[1].Cell != 3 || c[1].Error != er.Error {
		t.Fatalf("cell_results: %+v", c)
	}
}
