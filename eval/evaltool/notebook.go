package evaltool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/notebook"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

// maxNotebookBytes bounds a notebook eval runs.
const maxNotebookBytes = 64 << 20

// notebookLanguage is the eval language of a notebook's kernel language.
func notebookLanguage(lang string) (string, error) {
	switch strings.ToLower(lang) {
	case "", "python", "python3":
		return "python", nil
	case "javascript", "typescript":
		return strings.ToLower(lang), nil
	}
	return "", fmt.Errorf("the notebook's kernel language is %s; eval runs %s notebooks", lang, strings.Join(eval.Languages, ", "))
}

// runNotebook runs a notebook's cells in the kernel, one after another as
// Jupyter does (stopping at the first that fails), and writes their
// outputs and execution counts back into the notebook through the commit
// plan, the rest of the file as it was. A notebook another program changed
// while the cells ran is not overwritten.
func runNotebook(ctx context.Context, c *registry.Call, host *eval.Host, p evalParams, bridge eval.Bridge) (EvalResult, error) {
	if strings.TrimSpace(p.Code) != "" {
		return EvalResult{}, errors.New("give `code` or `notebook`, not both: with `notebook` the cells' sources are the code")
	}
	if p.Language != "" {
		return EvalResult{}, errors.New("`language` is the notebook's own (its kernelspec) when `notebook` is given; leave it out")
	}
	abs, err := c.Path(p.Notebook)
	if err != nil {
		return EvalResult{}, err
	}
	rel := c.Rel(abs)
	g := c.Run.Guard()
	data, _, err := g.ReadFile(abs, maxNotebookBytes)
	if err != nil {
		return EvalResult{}, fmt.Errorf("cannot read the notebook %s: %v", rel, err)
	}
	nb, err := notebook.Parse(data)
	if err != nil {
		return EvalResult{}, fmt.Errorf("%s: %v; `notebook` takes a Jupyter notebook (.ipynb, nbformat 4)", rel, err)
	}
	lang, err := notebookLanguage(nb.Language)
	if err != nil {
		return EvalResult{}, fmt.Errorf("%s: %v", rel, err)
	}
	which, err := notebook.Range(p.Cells, len(nb.Cells))
	if err != nil {
		return EvalResult{}, err
	}
	budget := c.Budget().Chars()
	r := EvalResult{Notebook: rel, State: "preserved"}
	var b strings.Builder
	var updates []notebook.Update
	var skipped []int
	stoppedAt := 0
	for i, n := range which {
		cell := nb.Cells[n-1]
		if cell.Type != "code" {
			skipped = append(skipped, n)
			continue
		}
		if ctx.Err() != nil {
			stoppedAt = n
			break
		}
		res, err := host.Run(ctx, lang, cell.Source, p.Reset && len(updates) == 0, bridge)
		if err != nil {
			return EvalResult{}, fmt.Errorf("cell %d of %s: %v", n, rel, err)
		}
		updates = append(updates, notebook.Update{N: n, Count: res.Cell, Outputs: outputs(res)})
		r.Ran = append(r.Ran, n)
		r.State, r.DurationMS = res.State, r.DurationMS+res.DurationMS
		one := format(host, res, max(budget/max(len(which), 1), 400))
		fmt.Fprintf(&b, "── cell %d · In [%d] ──\n%s\n", n, res.Cell, one.text[strings.Index(one.text, "\n")+1:])
		r.images = append(r.images, res.Images...)
		r.ImageN += res.ImageN
		if !res.Error.Empty() || res.Interrupted != "" || strings.HasPrefix(res.State, "lost") {
			if i+1 < len(which) {
				stoppedAt = which[i+1]
			}
			break
		}
	}
	if len(updates) == 0 {
		if stoppedAt > 0 {
			return EvalResult{}, fmt.Errorf("the call was cancelled before cell %d of %s ran", stoppedAt, rel)
		}
		return EvalResult{}, fmt.Errorf("cells %q of %s hold no code cell (%s); give the numbers read shows for code cells", p.Cells, rel, cellList(skipped))
	}
	newData, err := nb.Apply(updates)
	if err != nil {
		return EvalResult{}, err
	}
	// The outputs of cells that ran are written even when the call was
	// cancelled (its last cell interrupted); the lock wait is bounded.
	lockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	unlock, err := atomicfile.Lock(lockCtx, abs)
	if err != nil {
		return EvalResult{}, fmt.Errorf("the cells ran, but %s could not be locked to write their outputs: %v", rel, err)
	}
	_, err = atomicfile.Write(g, atomicfile.Change{Path: abs, Data: newData, Expect: data, Expected: true}, atomicfile.Options{
		ApproveExec: func(paths []string) error { return c.Escalate(ctx, tiers.Exec, strings.Join(paths, ", ")) }})
	unlock()
	if errors.Is(err, atomicfile.ErrChanged) {
		return EvalResult{}, fmt.Errorf("cells %s ran, but %s changed on disk while they ran (another program wrote it), so their outputs were not written over it: "+
			"read the notebook again and rerun the cells if its new version should have them", cellList(r.Ran), rel)
	}
	if err != nil {
		return EvalResult{}, fmt.Errorf("cells %s ran, but their outputs could not be written to %s: %v", cellList(r.Ran), rel, err)
	}
	c.Wrote(abs)
	r.Written = true
	head := fmt.Sprintf("[notebook %s · ran %s · kernel state: %s · %d ms]\n", rel, textcut.Count(len(r.Ran), "cell", "cells"), r.State, r.DurationMS)
	var foot []string
	if stoppedAt > 0 {
		why := fmt.Sprintf("cell %d did not finish cleanly, so the cells after it did not run (as Jupyter stops)", r.Ran[len(r.Ran)-1])
		if ctx.Err() != nil {
			why = "the call was cancelled"
		}
		foot = append(foot, fmt.Sprintf("Stopped before cell %d: %s.", stoppedAt, why))
	}
	if len(skipped) > 0 {
		foot = append(foot, fmt.Sprintf("Not code, not run: %s.", cellList(skipped)))
	}
	foot = append(foot, fmt.Sprintf("Wrote the outputs and execution counts of %s into %s.", cellList(r.Ran), rel))
	r.text = head + b.String() + strings.Join(foot, "\n")
	return r, nil
}

func cellList(ns []int) string {
	if len(ns) == 0 {
		return "none"
	}
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = fmt.Sprint(n)
	}
	word := "cells "
	if len(ns) == 1 {
		word = "cell "
	}
	return word + strings.Join(parts, ", ")
}

// outputs are a cell's results as nbformat outputs: what it printed (one
// stream: the kernel keeps stdout and stderr in one order), its figures,
// its value, its error.
func outputs(res *eval.CellResult) []notebook.Output {
	var out []notebook.Output
	if s := whole(res.Output); s != "" {
		out = append(out, notebook.Output{Type: "stream", Name: "stdout", Text: notebook.Lines(s)})
	}
	for _, png := range res.Images {
		b64, _ := json.Marshal(base64.StdEncoding.EncodeToString(png))
		out = append(out, notebook.Output{Type: "display_data", Data: map[string]json.RawMessage{"image/png": b64, "text/plain": notebook.TextData("<Figure>")}})
	}
	if s := whole(res.Result); s != "" {
		n := res.Cell
		out = append(out, notebook.Output{Type: "execute_result", Count: &n, Data: map[string]json.RawMessage{"text/plain": notebook.TextData(s)}})
	}
	if s := whole(res.Error); s != "" {
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		ename, evalue, _ := strings.Cut(lines[len(lines)-1], ": ")
		out = append(out, notebook.Output{Type: "error", EName: ename, EValue: evalue, Trace: lines})
	}
	return out
}

// whole is a cell's text whole: from its spill file when it was cut.
func whole(t eval.Text) string {
	if t.Cut && t.Path != "" {
		if b, err := os.ReadFile(t.Path); err == nil {
			return string(b)
		}
	}
	return t.String()
}
