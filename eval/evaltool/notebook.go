package evaltool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/atomicfile"
	"github.com/builtin-tools/builtin-tools/internal/notebook"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
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

// What a notebook run writes back (M-2): each output text at most
// maxOutputWritten bytes as stored in the file, else its head and tail
// around a note naming the file that holds all of it; at most
// maxRunWritten for all the outputs one run writes; and never a notebook
// larger than maxNotebookBytes, the most eval reads. The texts come from
// what the kernel host keeps in memory (a head and tail past 1 MiB), so
// no spill file is read back.
const (
	maxOutputWritten = 1 << 20
	maxRunWritten    = 16 << 20
)

// runNotebook runs a notebook's cells in the kernel, one after another as
// Jupyter does (stopping at the first that fails), and writes their
// outputs and execution counts back into the notebook through the commit
// plan, the rest of the file as it was, once the write gate lets it (a
// write=deny run shows the outputs and writes nothing). A notebook another
// program changed while the cells ran is not overwritten.
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
	if errors.Is(err, notebook.ErrDuplicateKey) {
		return EvalResult{}, fmt.Errorf("%s: %v; nothing ran", rel, err)
	}
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
	r := EvalResult{Notebook: rel, State: "preserved"}
	var b strings.Builder
	var updates []notebook.Update
	// What the new outputs may take: the run's cap, within what keeps the
	// notebook under the size eval reads (each cell run gives back the
	// room its old outputs took).
	wb := &writeBudget{left: min(maxRunWritten, maxNotebookBytes-len(data))}
	stoppedAt := -1 // the index in which of the first cell not run
	for i, n := range which {
		cell := nb.Cells[n-1]
		if cell.Type != "code" {
			r.NotCode = append(r.NotCode, n)
			continue
		}
		if ctx.Err() != nil {
			stoppedAt = i
			break
		}
		res, err := host.Run(ctx, lang, cell.Source, p.Reset && len(updates) == 0, bridge)
		if err != nil {
			return EvalResult{}, fmt.Errorf("cell %d of %s: %v", n, rel, err)
		}
		wb.left = min(wb.left+nb.OutputBytes(n), maxRunWritten-wb.used)
		updates = append(updates, notebook.Update{N: n, Count: res.Cell, Outputs: outputs(host, res, wb)})
		r.Ran = append(r.Ran, n)
		r.Cell, r.State, r.DurationMS = res.Cell, res.State, r.DurationMS+res.DurationMS
		one := format(host, res, c.Budget().Split(len(which)))
		fmt.Fprintf(&b, "── cell %d · In [%d] ──\n", n, res.Cell)
		// The cell's own header is the notebook's; what follows it, if
		// anything, is the cell's.
		if _, body, ok := strings.Cut(one.text, "\n"); ok {
			b.WriteString(body + "\n")
		}
		r.CellsDone = append(r.CellsDone, NotebookCell{Cell: n, Count: res.Cell, Output: one.Output, Result: one.Result, Error: one.Error,
			ImageN: one.ImageN, CellEnd: one.CellEnd})
		r.ImageN += res.ImageN
		r.images = append(r.images, res.Images[:min(len(res.Images), maxNotebookImages-len(r.images))]...)
		r.ToolCalls = append(r.ToolCalls, one.ToolCalls[:min(len(one.ToolCalls), maxListedCalls-len(r.ToolCalls))]...)
		r.ToolCallsTotal += max(one.ToolCallsTotal, len(one.ToolCalls))
		if !res.Error.Empty() || res.Interrupted != "" || strings.HasPrefix(res.State, "lost") {
			// What stopped the run, in the structured result as in the text.
			r.FailedCell, r.Error, r.ErrorSpilled = n, one.Error, one.ErrorSpilled
			r.Stopped, r.Interrupted, r.Memory = one.Stopped, one.Interrupted, one.Memory
			if r.Error == "" && strings.HasPrefix(res.State, "lost") {
				r.Error = "the kernel was lost: " + strings.TrimPrefix(res.State, "lost: ")
			}
			stoppedAt = i + 1
			break
		}
	}
	if r.ToolCallsTotal <= len(r.ToolCalls) {
		r.ToolCallsTotal = 0
	}
	if stoppedAt >= 0 {
		for _, n := range which[min(stoppedAt, len(which)):] {
			if nb.Cells[n-1].Type == "code" {
				r.NotRun = append(r.NotRun, n)
			} else {
				r.NotCode = append(r.NotCode, n)
			}
		}
	}
	if len(updates) == 0 {
		if len(r.NotRun) > 0 {
			return EvalResult{}, fmt.Errorf("the call was cancelled before cell %d of %s ran", r.NotRun[0], rel)
		}
		return EvalResult{}, fmt.Errorf("cells %q of %s hold no code cell (%s); give the numbers read shows for code cells", p.Cells, rel, cellList(r.NotCode))
	}
	if r.NotWritten = writeGate(ctx, c, rel); r.NotWritten == "" {
		if r.NotWritten, err = writeOutputs(ctx, c, g, nb, abs, rel, data, updates, r.Ran); err != nil {
			return EvalResult{}, err
		}
	}
	r.Written = r.NotWritten == ""
	if r.Written {
		c.Wrote(abs)
	}
	head := fmt.Sprintf("[notebook %s · ran %s · kernel state: %s · %d ms]\n", rel, textcut.Count(len(r.Ran), "cell", "cells"), r.State, r.DurationMS)
	var foot []string
	if len(r.NotRun) > 0 {
		why := fmt.Sprintf("cell %d did not finish cleanly, so the cells after it did not run (as Jupyter stops)", r.FailedCell)
		if r.FailedCell == 0 || ctx.Err() != nil {
			why = "the call was cancelled"
		}
		foot = append(foot, fmt.Sprintf("Stopped before cell %d: %s.", r.NotRun[0], why))
	} else if r.FailedCell > 0 {
		foot = append(foot, fmt.Sprintf("Cell %d did not finish cleanly.", r.FailedCell))
	}
	if len(r.NotCode) > 0 {
		foot = append(foot, fmt.Sprintf("Not code, not run: %s.", cellList(r.NotCode)))
	}
	if r.ImageN > len(r.images) {
		foot = append(foot, fmt.Sprintf("%s returned as images (%d not returned: a result carries at most %d).",
			textcut.Count(r.ImageN, "figure", "figures"), r.ImageN-len(r.images), maxNotebookImages))
	}
	if r.Written {
		foot = append(foot, fmt.Sprintf("Wrote the outputs and execution counts of %s into %s.", cellList(r.Ran), rel))
	} else {
		foot = append(foot, fmt.Sprintf("Not written: %s; the outputs are only in this result.", r.NotWritten))
	}
	r.text = head + b.String() + strings.Join(foot, "\n")
	return r, nil
}

// maxNotebookImages bounds the figures one notebook result carries.
const maxNotebookImages = 20

// writeGate says why the outputs may not be written into the notebook
// ("" when they may): running cells is exec, writing the file is write,
// and the run's policy for writes decides (REG-7) — under ask, the
// operator is asked.
func writeGate(ctx context.Context, c *registry.Call, rel string) string {
	if c.Policy()[tiers.Write] == registry.Deny {
		return fmt.Sprintf("this run's approval policy denies writes (write=deny), so %s was left as it was", rel)
	}
	if err := c.Escalate(ctx, tiers.Write, rel); err != nil {
		return fmt.Sprintf("writing the outputs into %s was not approved (%v)", rel, strings.TrimSuffix(err.Error(), "."))
	}
	return ""
}

// writeOutputs commits the notebook with its new outputs. It returns why
// nothing was written when the new notebook would be too large for eval to
// read again, and an error when the write itself failed.
func writeOutputs(ctx context.Context, c *registry.Call, g *pathguard.Guard, nb *notebook.Notebook, abs, rel string, data []byte, updates []notebook.Update, cells []int) (string, error) {
	newData, err := nb.Apply(updates)
	if err != nil {
		return "", err
	}
	if len(newData) > maxNotebookBytes {
		return fmt.Sprintf("with the new outputs %s would be %d bytes, over the %d eval reads", rel, len(newData), maxNotebookBytes), nil
	}
	// The outputs of cells that ran are written even when the call was
	// cancelled (its last cell interrupted); the lock wait is bounded.
	lockCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	// "cell 2 ran, … its outputs", "cells 2, 3 ran, … their outputs".
	ran, they, their := cellList(cells), "they", "their"
	if len(cells) == 1 {
		they, their = "it", "its"
	}
	unlock, err := atomicfile.Lock(lockCtx, abs)
	if err != nil {
		return "", fmt.Errorf("%s ran, but %s could not be locked to write %s outputs: %v", ran, rel, their, err)
	}
	_, err = atomicfile.Write(g, atomicfile.Change{Path: abs, Data: newData, Expect: data, Expected: true}, atomicfile.Options{
		ApproveExec: func(paths []string) error { return c.Escalate(ctx, tiers.Exec, strings.Join(paths, ", ")) }})
	unlock()
	if errors.Is(err, atomicfile.ErrChanged) {
		return "", fmt.Errorf("%s ran, but %s changed on disk while %s ran (another program wrote it), so %s outputs were not written over it: "+
			"read the notebook again and rerun the cells if its new version should have them", ran, rel, they, their)
	}
	if err != nil {
		return "", fmt.Errorf("%s ran, but %s outputs could not be written to %s: %v", ran, their, rel, err)
	}
	return "", nil
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

// writeBudget is what the outputs of a notebook run may still take in the
// file, in bytes.
type writeBudget struct {
	left, used int
}

func (w *writeBudget) take(n int) {
	w.left -= n
	w.used += n
}

// outputs are a cell's results as nbformat outputs, sized by w: what it
// printed (one stream: the kernel keeps stdout and stderr in one order),
// its figures, its value, its error.
func outputs(host *eval.Host, res *eval.CellResult, w *writeBudget) []notebook.Output {
	var out []notebook.Output
	if !res.Output.Empty() {
		s := written(host, res.Cell, "output", res.Output, w)
		out = append(out, notebook.Output{Type: "stream", Name: "stdout", Text: notebook.Lines(s)})
	}
	for _, png := range res.Images {
		b64 := base64.StdEncoding.EncodeToString(png)
		if n := len(b64) + 200; n <= w.left {
			w.take(n)
			q, _ := json.Marshal(b64)
			out = append(out, notebook.Output{Type: "display_data", Data: map[string]json.RawMessage{"image/png": q, "text/plain": notebook.TextData("<Figure>")}})
			continue
		}
		note := fmt.Sprintf("[a figure of %d bytes, not written: this run's outputs reached the %s written into a notebook]", len(png), sizeWords(maxRunWritten))
		w.take(len(note) + 100)
		out = append(out, notebook.Output{Type: "display_data", Data: map[string]json.RawMessage{"text/plain": notebook.TextData(note)}})
	}
	if !res.Result.Empty() {
		n := res.Cell
		s := written(host, res.Cell, "result", res.Result, w)
		out = append(out, notebook.Output{Type: "execute_result", Count: &n, Data: map[string]json.RawMessage{"text/plain": notebook.TextData(s)}})
	}
	if !res.Error.Empty() {
		s := written(host, res.Cell, "error", res.Error, w)
		lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
		ename, evalue, _ := strings.Cut(lines[len(lines)-1], ": ")
		w.take(len(ename) + len(evalue) + 100)
		out = append(out, notebook.Output{Type: "error", EName: ename, EValue: evalue, Trace: lines})
	}
	return out
}

// written is t as written into the notebook: whole when it fits the
// output's share of w, else its head and tail around a note naming the
// file with all of it (kept while the run lasts).
func written(host *eval.Host, cell int, kind string, t eval.Text, w *writeBudget) string {
	limit := max(min(maxOutputWritten, w.left), 0)
	s := t.Head
	if t.Cut || storedSize(t.Head) > limit {
		path := t.Path
		if !t.Cut && path == "" {
			path, _ = host.Spill(cell, kind, t.Head)
		}
		where := "the whole " + kind + " is in " + path + " while this eval run lasts"
		if path == "" {
			where = "the rest could not be saved to a file"
		}
		room := max(limit-300, 0)
		head := storedPrefix(t.Head, room*2/3)
		rest := t.Tail // a cut text's end, apart from its head
		if !t.Cut {
			rest = t.Head[len(head):]
		}
		tail := storedSuffix(rest, room-storedSize(head))
		left := t.Chars - int64(utf8.RuneCountInString(head)+utf8.RuneCountInString(tail))
		s = head
		if s != "" && !strings.HasSuffix(s, "\n") {
			s += "\n"
		}
		s += fmt.Sprintf("[… %d characters not written into the notebook; %s]\n", left, where) + tail
	}
	if t.Dropped > 0 {
		s = strings.TrimRight(s, "\n") + fmt.Sprintf("\n[… and %d bytes past the output cap, not kept]\n", t.Dropped)
	}
	w.take(storedSize(s))
	return s
}

// storedSize is the bytes s takes as a notebook stores a text: a JSON
// string per line, each with its quotes, comma, line break and indent.
func storedSize(s string) int {
	n := 0
	for _, r := range s {
		n += runeCost(r)
	}
	return n
}

// runeCost is the bytes r takes in a stored text (a line break ends one
// JSON string and starts the next).
func runeCost(r rune) int {
	switch {
	case r == '\n':
		return 2 + lineCost
	case r == '"' || r == '\\' || r == '\t' || r == '\r' || r == '\b' || r == '\f':
		return 2
	case r < 0x20 || r == '\u2028' || r == '\u2029' || r == utf8.RuneError:
		return 6
	}
	return utf8.RuneLen(r)
}

// lineCost is what a line costs besides its characters: quotes, a comma,
// a line break, and an indent of up to a dozen spaces.
const lineCost = 16

// storedPrefix is the longest start of s, on a character boundary, whose
// stored size is at most n.
func storedPrefix(s string, n int) string {
	used := 0
	for i, r := range s {
		if used += runeCost(r); used > n {
			return s[:i]
		}
	}
	return s
}

// storedSuffix is the longest end of s, on a character boundary, whose
// stored size is at most n.
func storedSuffix(s string, n int) string {
	used := 0
	for i := len(s); i > 0; {
		r, size := utf8.DecodeLastRuneInString(s[:i])
		if used += runeCost(r); used > n {
			return s[i:]
		}
		i -= size
	}
	return s
}

func sizeWords(n int) string { return fmt.Sprintf("%d MiB", n>>20) }
