// Package evaltool puts package eval on a run's tool surface: the `eval`
// tool (exec), a persistent Python cell per call whose tool() calls run as
// children of the eval call, through the run's one call path.
package evaltool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/eval"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/textfit"
	"github.com/builtin-tools/builtin-tools/tiers"
	"github.com/mark3labs/mcp-go/mcp"
)

// Key is the kernel host's resource key.
var Key = registry.NewKey[*eval.Host]("eval")

// Family is the eval tool; its setting is an eval.Config.
var Family = registry.Family[*eval.Host]{
	Key: Key,
	Doc: "eval: a persistent Python interpreter whose cells can call the run's tools",
	Open: registry.Configured(Key, func(env *registry.Env, cfg eval.Config) (*eval.Host, error) {
		return eval.NewHost(env.Root, cfg), nil
	}),
	Tools: []registry.Descriptor{EvalTool},
}

type evalParams struct {
	Code        string `json:"code,omitempty" jsonschema:"the cell: Python (or JavaScript, TypeScript) statements; the last expression's value is shown (required unless notebook is given)"`
	Description string `json:"description" jsonschema:"what the cell does, 5 to 10 words, for the transcript"`
	Language    string `json:"language,omitempty" jsonschema:"python (the default), javascript (node, one persistent context; top-level await; static and dynamic imports, from the checkout's node_modules too) or typescript (compiled with types stripped, not checked, then run in the javascript context)" enum:"python,javascript,typescript"`
	Reset       bool   `json:"reset,omitempty" jsonschema:"discard the interpreter's state first"`
	Notebook    string `json:"notebook,omitempty" jsonschema:"a Jupyter notebook (.ipynb) under the root whose cells to run instead of code, in the notebook's language; their outputs (each kept to 1 MiB, its head and tail) and execution counts are written back into it when the write policy allows"`
	Cells       string `json:"cells,omitempty" jsonschema:"with notebook: which cells, numbered as read shows them: 3, 3-5, 1,4-6 or all (the default)"`
}

// EvalTool is the `eval` tool (EV-1, EV-2, EV-4, EV-5).
var EvalTool = registry.Descriptor{
	Name:  "eval",
	Title: "run code",
	Tier:  tiers.Exec,
	// Cells run code that reaches anything the machine does.
	OpenWorld: true,
	Description: "Run a Python (or, with `language: javascript`, a Node; with `language: typescript`, TypeScript compiled for Node, types not checked) cell in a persistent interpreter: variables, imports and loaded data stay for the next cell (`reset: true` discards them). " +
		"The checkout's root is the working folder and first on the import path; cells may await at the top level. " +
		"The last expression is shown as in a notebook; a cell that stops early says at which statement and what did not run; display(obj) shows one mid-cell; pandas DataFrames come back as compact tables and " +
		"matplotlib figures as images. IPython habits work: !cmd, x = !cmd, %cd, %env, %time, %timeit, %%timeit, %%bash, %pip install, %who, %whos, and %load_ext autoreload with %autoreload 2 (modules edited on disk are reloaded before each cell). tool(name, args) calls this run's tools (tool(\"read\", {\"path\": \"go.mod\"})) under the same " +
		"rules as your own calls, also from threads, and raises ToolError when one fails. By default a cell is interrupted after 5 minutes without output " +
		"(tool calls do not count), 60 minutes in all, or 64 MiB printed, and the interpreter runs under an address-space limit (8 GiB or less by default); " +
		"the result says whether the interpreter's state survived. Output past the budget is cut and kept whole in a file the result names.",
	Serial:  true,
	Asks:    true, // its tool() calls may need approval
	Handler: registry.With(Key, run),
}

// EvalResult is what a cell did. Its texts are cut as the text the agent
// reads is, to one output budget (REG-12); each cut text's whole is in the
// file its *_spilled field names.
type EvalResult struct {
	Cell int `json:"cell"`
	// Output is stdout and stderr in order, with displays in place.
	Output string `json:"output,omitempty"`
	// Result is the last expression's repr, when it has one.
	Result string `json:"result,omitempty"`
	// Error is the exception as a short traceback, lines the cell's own.
	Error  string `json:"error,omitempty"`
	ImageN int    `json:"images,omitempty" jsonschema:"figures returned as image content"`
	// ToolCalls lists the cell's first 50 tool() calls; ToolCallsTotal
	// counts them all.
	ToolCalls      []eval.ToolCall `json:"tool_calls,omitempty"`
	ToolCallsTotal int             `json:"tool_calls_total,omitempty"`
	// State is preserved, or lost with why.
	State string `json:"kernel_state"`
	CellEnd
	// Notebook is the notebook run, Ran its cells that ran, Written
	// whether their outputs were written into it, NotWritten why not.
	// For a notebook, Cell is the kernel's number of the last cell run
	// (its In [n]); Error, ErrorSpilled, Stopped, Interrupted and Memory
	// are FailedCell's, the cell whose failure stopped the run.
	Notebook   string         `json:"notebook,omitempty"`
	Ran        []int          `json:"cells_run,omitempty"`
	CellsDone  []NotebookCell `json:"cell_results,omitempty" jsonschema:"what each notebook cell that ran did, as the text shows it"`
	FailedCell int            `json:"failed_cell,omitempty" jsonschema:"the notebook cell whose error, interrupt or lost kernel stopped the run"`
	NotRun     []int          `json:"cells_not_run,omitempty" jsonschema:"code cells asked for that did not run, because the run stopped before them"`
	NotCode    []int          `json:"cells_not_code,omitempty" jsonschema:"cells asked for that are not code (markdown, raw), so not run"`
	Written    bool           `json:"written,omitempty"`
	NotWritten string         `json:"not_written,omitempty" jsonschema:"why the outputs were not written into the notebook (the write policy, a refused approval, the size eval reads)"`
	text       string
	images     [][]byte
}

// NotebookCell is what one cell of a notebook run did, its texts cut as
// the text the agent reads shows them.
type NotebookCell struct {
	Cell   int    `json:"cell" jsonschema:"the cell's number in the notebook, as read shows it"`
	Count  int    `json:"execution_count" jsonschema:"the kernel's number of the run, its In [n]"`
	Output string `json:"output,omitempty"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
	ImageN int    `json:"images,omitempty"`
	CellEnd
}

// CellEnd is how a cell ended and where its cut texts are kept whole, the
// same for the cell eval ran and for each cell of a notebook run.
type CellEnd struct {
	// Interrupted says which limit stopped the cell.
	Interrupted string `json:"interrupted,omitempty"`
	// Memory says the cell ran out of memory, under which limit.
	Memory string `json:"memory,omitempty"`
	// Stopped says where a cell of several statements stopped when not
	// all of it ran, and what did not run.
	Stopped    *eval.Stop `json:"stopped,omitempty"`
	DurationMS int64      `json:"duration_ms"`
	// Spilled names the file holding the whole output when it was cut;
	// ResultSpilled and ErrorSpilled the same for the result and the error.
	Spilled       string `json:"spilled,omitempty"`
	ResultSpilled string `json:"result_spilled,omitempty"`
	ErrorSpilled  string `json:"error_spilled,omitempty"`
}

// Text is what the agent reads.
func (r EvalResult) Text() string { return r.text }

// MoreContent returns the figures as PNG images.
func (r EvalResult) MoreContent() []mcp.Content {
	var out []mcp.Content
	for _, png := range r.images {
		out = append(out, mcp.NewImageContent(base64.StdEncoding.EncodeToString(png), "image/png"))
	}
	return out
}

func run(ctx context.Context, c *registry.Call, host *eval.Host, p evalParams) (EvalResult, error) {
	if n := len(strings.Fields(p.Description)); n < 5 || n > 10 {
		return EvalResult{}, fmt.Errorf("`description` has %d words; give 5 to 10 saying what the cell does (it labels the cell in the transcript)", n)
	}
	if p.Cells != "" && p.Notebook == "" {
		return EvalResult{}, errors.New("`cells` picks cells of a notebook: give `notebook` too")
	}
	if p.Language != "" && !slices.Contains(eval.Languages, p.Language) {
		return EvalResult{}, fmt.Errorf("`language` %q is not available; eval runs %s", p.Language, strings.Join(eval.Languages, ", "))
	}
	if strings.TrimSpace(p.Code) == "" && p.Notebook == "" {
		return EvalResult{}, errors.New("`code` is empty: give the statements to run (or a `notebook` whose cells to run)")
	}
	bridge := func(ctx context.Context, name string, args json.RawMessage) (any, error) {
		res := c.Call(ctx, "an eval cell", name, args)
		if res.IsError {
			return nil, errors.New(registry.ResultText(res))
		}
		if res.StructuredContent != nil {
			return res.StructuredContent, nil
		}
		return registry.ResultText(res), nil
	}
	if p.Notebook != "" {
		return runNotebook(ctx, c, host, p, bridge)
	}
	res, err := host.Run(ctx, p.Language, p.Code, p.Reset, bridge)
	if err != nil {
		return EvalResult{}, err
	}
	return format(host, res, c.Budget()), nil
}

// maxListedCalls bounds the tool calls listed one by one.
const maxListedCalls = 50

// format cuts the cell's texts to share budget and writes what the agent
// reads.
func format(host *eval.Host, res *eval.CellResult, budget textfit.Budget) EvalResult {
	r := EvalResult{Cell: res.Cell, ImageN: res.ImageN, State: res.State, images: res.Images,
		CellEnd: CellEnd{Interrupted: res.Interrupted, Memory: res.Memory, Stopped: res.Stopped, DurationMS: res.DurationMS}}
	for _, tc := range res.ToolCalls[:min(len(res.ToolCalls), maxListedCalls)] {
		tc.Error = textcut.Ellipsis(tc.Error, 300)
		r.ToolCalls = append(r.ToolCalls, tc)
	}
	if len(res.ToolCalls) > maxListedCalls {
		r.ToolCallsTotal = len(res.ToolCalls)
	}
	head := fmt.Sprintf("[cell %d · kernel state: %s · %d ms]\n", r.Cell, r.State, r.DurationMS)
	var foot strings.Builder
	if r.Stopped != nil {
		foot.WriteString(r.Stopped.Text() + "\n")
	}
	if r.Interrupted != "" {
		foot.WriteString("Interrupted: " + r.Interrupted + ".\n")
	}
	if r.Memory != "" {
		foot.WriteString("Memory: " + r.Memory + ".\n")
	}
	if r.ImageN > 0 {
		fmt.Fprintf(&foot, "%s returned as images", textcut.Count(r.ImageN, "figure", "figures"))
		if n := r.ImageN - len(r.images); n > 0 {
			fmt.Fprintf(&foot, " (%d not returned: a result carries at most %d)", n, len(r.images))
		}
		foot.WriteString(".\n")
	}
	if res.Dropped > 0 {
		fmt.Fprintf(&foot, "Dropped: %s on the kernel's private channel that its driver did not send (code in the cell wrote there).\n",
			textcut.Count(res.Dropped, "message", "messages"))
	}
	if s := callsLine(res.ToolCalls); s != "" {
		foot.WriteString(s + "\n")
	}

	texts := []struct {
		kind  string
		t     eval.Text
		shown *string
		path  *string
	}{
		{"output", res.Output, &r.Output, &r.Spilled},
		{"result", res.Result, &r.Result, &r.ResultSpilled},
		{"error", res.Error, &r.Error, &r.ErrorSpilled},
	}
	lens := make([]int, len(texts))
	total, parts := 0, 0
	for i, x := range texts {
		lens[i] = int(min(x.t.Chars, 1<<40))
		total += lens[i]
		if lens[i] > 0 {
			parts++
		}
	}
	// What the texts may take: the budget less the fixed lines and, when
	// something is cut, the notes that say where the rest is (about 150
	// characters each); Reserve keeps a floor, so a small budget still
	// shows something (code review §2.1); the run's own cut is the backstop.
	fixed := utf8.RuneCountInString(head) + utf8.RuneCountInString(foot.String())
	if total > budget.Chars()-fixed {
		fixed += parts * cutNote
	}
	shares := budget.Reserve(fixed).Share(lens)
	var b strings.Builder
	b.WriteString(head)
	for i, x := range texts {
		if x.t.Empty() {
			continue
		}
		*x.shown, *x.path = cut(host, res.Cell, x.kind, x.t, shares[i].Chars())
		b.WriteString(strings.TrimRight(*x.shown, "\n") + "\n")
	}
	b.WriteString(foot.String())
	r.text = strings.TrimRight(b.String(), "\n")
	return r
}

// cutNote is about what the note on a cut text takes ("[… N characters
// cut; the whole output is in F]").
const cutNote = 150

// cut returns t as shown within share characters: whole, or its head and
// tail around a note naming the file with all of it.
func cut(host *eval.Host, cell int, kind string, t eval.Text, share int) (shown, path string) {
	if !t.Cut && t.Chars <= int64(share) && t.Dropped == 0 {
		return t.Head, ""
	}
	var note string
	if t.Chars <= int64(share) && !t.Cut {
		shown = t.Head
	} else {
		end := t.Head
		if t.Cut {
			path = t.Path
			end = t.Tail
		} else if p, err := host.Spill(cell, kind, t.Head); err == nil {
			path = p
		}
		headN := share * 2 / 3
		h := textcut.Runes(t.Head, headN)
		tl := lastRunes(end, share-headN)
		left := t.Chars - int64(utf8.RuneCountInString(h)+utf8.RuneCountInString(tl))
		where := "the whole " + kind + " is in " + path
		if path == "" {
			where = "they could not be saved to a file"
		}
		note = fmt.Sprintf("[… %d characters cut; %s]", left, where)
		shown = h + "\n" + note + "\n" + tl
	}
	if t.Dropped > 0 {
		shown = strings.TrimRight(shown, "\n") + fmt.Sprintf("\n[… and %d bytes past the output cap, not kept]", t.Dropped)
	}
	return shown, path
}

func lastRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	i := len(s)
	for ; i > 0 && n > 0; n-- {
		_, size := utf8.DecodeLastRuneInString(s[:i])
		i -= size
	}
	return s[i:]
}

// callsLine lists a cell's tool calls, or sums them up by tool when there
// are many.
func callsLine(calls []eval.ToolCall) string {
	if len(calls) == 0 {
		return ""
	}
	if len(calls) <= 8 {
		var parts []string
		for _, tc := range calls {
			s := fmt.Sprintf("%s %d ms ok", tc.Name, tc.MS)
			if !tc.OK {
				s = fmt.Sprintf("%s %d ms error", tc.Name, tc.MS)
			}
			parts = append(parts, s)
		}
		return "tool calls: " + strings.Join(parts, "; ")
	}
	type sum struct {
		name     string
		n, fails int
	}
	var sums []*sum
	by := map[string]*sum{}
	var ms int64
	for _, tc := range calls {
		s := by[tc.Name]
		if s == nil {
			s = &sum{name: tc.Name}
			by[tc.Name] = s
			sums = append(sums, s)
		}
		s.n++
		if !tc.OK {
			s.fails++
		}
		ms += tc.MS
	}
	var parts []string
	for i, s := range sums {
		if i == 10 {
			parts = append(parts, fmt.Sprintf("%d more tools", len(sums)-10))
			break
		}
		parts = append(parts, fmt.Sprintf("%s ×%d (%d ok, %s)", s.name, s.n, s.n-s.fails, textcut.Count(s.fails, "error", "errors")))
	}
	return fmt.Sprintf("tool calls: %d, %d ms in all: %s", len(calls), ms, strings.Join(parts, "; "))
}
