package graphtool

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/answertext"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/tiers"
)

type params struct {
	Op     string `json:"operation" jsonschema:"what to ask"`
	Symbol string `json:"symbol,omitempty" jsonschema:"a name, Type.Method, pkg.Func or path/file.go:Func; with file and line, the text of the symbol on that line (a definition there, or a call whose target is meant); for find, the query"`
	File   string `json:"file,omitempty" jsonschema:"file relative to the root: outline's file, or where the symbol is"`
	Line   int    `json:"line,omitempty" jsonschema:"1-based line of the symbol in file"`
	Kind   string `json:"kind,omitempty" jsonschema:"for find: only definitions of this kind (function, method, getter, class, struct, interface, type, constant, variable, ...)"`
	Depth  int    `json:"depth,omitempty" jsonschema:"for impact: how many rings of callers to walk (default 3, at most 6)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"for find: most results (default 20); for impact: dependents listed per depth (default 30)"`
	// Confirm is for callers and impact.
	Confirm bool `json:"confirm,omitempty" jsonschema:"for callers and impact: ask the language server (as lsp does) for the definition at each candidate site and mark it confirmed, rejected or unchecked (by default at most 200 sites and 10 s)"`
}

// op is one operation of code_graph: the table the enum, the description
// and the dispatch come from.
type op struct {
	name string
	doc  string
	wait bool // waits (bounded) for a build in progress
	run  func(v graph.View, x *index.Index, p params) (*graph.Answer, error)
}

func (o op) ChoiceName() string { return o.name }
func (o op) ChoiceDoc() string  { return o.doc }

func spec(p params) graph.Spec { return graph.Spec{Symbol: p.Symbol, File: p.File, Line: p.Line} }

var ops = []op{
	{"outline", "outline (file: its definitions as a tree)", true, func(v graph.View, _ *index.Index, p params) (*graph.Answer, error) {
		if p.File == "" {
			return nil, fmt.Errorf("outline needs file (a path relative to the root)")
		}
		return graph.Outline(v, p.File)
	}},
	{"find", "find (symbol: a name or part of one, ranked; kind narrows)", true, func(v graph.View, _ *index.Index, p params) (*graph.Answer, error) {
		return graph.Find(v, p.Symbol, p.Kind, p.Limit)
	}},
	{"callers", "callers (of symbol, or file+line: every call site, each marked exact / import / candidate)", true, func(v graph.View, _ *index.Index, p params) (*graph.Answer, error) {
		return graph.Callers(v, spec(p))
	}},
	{"callees", "callees (what symbol calls, each resolved, and the functions it passes or stores as values)", true, func(v graph.View, _ *index.Index, p params) (*graph.Answer, error) {
		return graph.Callees(v, spec(p))
	}},
	{"impact", "impact (of symbol or of a whole file: what depends on it, by depth, with counts per class and whether the count is a lower bound)", true, func(v graph.View, _ *index.Index, p params) (*graph.Answer, error) {
		if p.Depth > 6 {
			p.Depth = 6
		}
		return graph.Impact(v, spec(p), p.Depth, p.Limit)
	}},
	{"status", "status (files indexed, skipped and why, syntax errors, languages, build time)", false, func(v graph.View, x *index.Index, p params) (*graph.Answer, error) {
		return graph.StatusAnswer(v, x.Stats()), nil
	}},
}

// Tool is code_graph (GRAPH-1, GRAPH-2).
var Tool = registry.Descriptor{
	Name:  "code_graph",
	Title: "code graph",
	Tier:  tiers.Read,
	Description: "Ask the code graph of this checkout: a tree-sitter index of definitions, call sites, type uses and imports " +
		"(Go, Python, JavaScript, TypeScript, Rust, C, C++, Java). No types: every edge says how it was resolved — exact (one " +
		"definition in scope), import, interface (a call through an interface: dispatch, its implementations listed as " +
		"implementation), or candidate (by name only, ranked, with the reason) — and an unknown or ambiguous name is " +
		"answered with candidates, never guessed; each answer gives the measured precision of the classes it holds. Fresh after every write. For type-accurate answers use lsp. Operations: " +
		registry.ChoiceDocs(ops) + ".",
	Renamed: map[string]string{"op": "operation"},
	Handler: registry.With(Key, query).WithEnum("operation", registry.ChoiceNames(ops)),
}

func query(ctx context.Context, c *registry.Call, g *Graph, p params) (Result, error) {
	o, ok := registry.FindChoice(ops, p.Op)
	if !ok {
		return Result{}, fmt.Errorf("unknown operation %q; use one of %s", p.Op, strings.Join(registry.ChoiceNames(ops), ", "))
	}
	if p.Confirm && o.name != "callers" && o.name != "impact" {
		return Result{}, fmt.Errorf("confirm is for callers and impact, not %s; call %s without it", o.name, o.name)
	}
	if p.File != "" {
		abs, err := c.Path(p.File)
		if err != nil {
			return Result{}, err
		}
		p.File = c.Rel(abs)
	}
	x := g.H.Index()
	// The few files of an answer ahead of the index are read before the
	// build starts (when this query is the first): the two would share
	// the parse workers.
	a := ahead(ctx, c, g, x, o, p)
	x.Start(nil)
	if a != nil {
		g.announceWhenReady(c.Run)
		return Result{Answer: a, text: answertext.Fit(answertext.Render(a, c.Budget().Reserve(400).Chars()), c.Budget(), textOp(a))}, nil
	}
	if o.wait {
		// Wait for a build in progress, bounded, telling the client how far
		// it got; past the bound the answer says it is partial.
		deadline := time.Now().Add(g.Wait)
		for !x.Wait(ctx, min(250*time.Millisecond, time.Until(deadline))) && ctx.Err() == nil && time.Now().Before(deadline) {
			done, total := x.Progress()
			c.Progress(ctx, float64(done), float64(total), "code graph: "+x.ProgressText())
		}
	}
	if !x.Ready() {
		g.announceWhenReady(c.Run)
	}
	synced, err := x.Sync(ctx)
	if err != nil {
		return Result{}, err
	}
	budget := c.Budget()
	if p.Confirm {
		// The marks need a third of the room, after the answer.
		budget = budget.Reserve(budget.Chars() / 3)
	}
	// One view per answer: the snapshot and resolver the whole answer (and
	// confirm's outlines) read.
	v := g.H.View(synced)
	a, err = o.run(v, x, p)
	if err != nil {
		if le := (*graph.LookupError)(nil); errors.As(err, &le) && !x.Ready() {
			return Result{}, fmt.Errorf("%w — but the index is still building (%s); ask again when status says ready", le, x.ProgressText())
		}
		return Result{}, err
	}
	// answertext.Render cuts the answer's lists to what the text shows, so confirm
	// asks about the sites the agent sees.
	r := Result{Answer: a, text: answertext.Render(a, budget.Reserve(400).Chars())}
	// An ambiguous symbol's answer is the list of definitions: nothing to
	// confirm until one is chosen.
	if p.Confirm && len(a.Candidates) == 0 {
		r.Confirm = confirm(ctx, c, g, v, a)
		room := c.Budget().Reserve(utf8.RuneCountInString(r.text) + 200)
		r.text += "\n" + confirmText(r.Confirm, o.name, room)
	}
	r.text = answertext.Fit(r.text, c.Budget(), textOp(a))
	return r, nil
}

// textOp is the operation whose advice an answer's text ends with.
func textOp(a *graph.Answer) string {
	if a.Candidates != nil {
		return "ambiguous"
	}
	return a.Op
}

// ahead answers callers, callees and find on a cold tree at once, from
// the files that hold the name (graph.Ahead), while the build goes on. nil: the index is ready, the operation needs the whole index, or
// the few files did not name the symbol (the usual path then waits and
// says what it found).
func ahead(ctx context.Context, c *registry.Call, g *Graph, x *index.Index, o op, p params) *graph.Answer {
	// confirm decides on the whole index's outline of each file, so it
	// waits for the index as before.
	if x.Ready() || p.Confirm || strings.TrimSpace(p.Symbol) == "" {
		return nil
	}
	var sub *graph.View
	var err error
	switch o.name {
	case "callers", "callees":
		sym := p.Symbol
		if p.File != "" {
			sym = p.File + ":" + sym // the file is read whatever it holds
		}
		sub, err = graph.Ahead(ctx, x, sym, o.name == "callees")
	case "find":
		sub, err = graph.AheadFind(ctx, x, p.Symbol)
	default:
		return nil
	}
	if err != nil || sub == nil || x.Ready() {
		return nil
	}
	a, err := o.run(*sub, x, p)
	if err != nil {
		return nil
	}
	return a
}
