// Package answertext is what the code graph's answers say to the agent:
// graph's data (package graph's Answer: an outline, definitions found,
// callers, callees, impact, status, candidates) rendered as the text a model
// reads within the output budget, with notes of what was left out and how
// to get it. It runs no query and knows nothing of calls or tools; package
// graph/graphtool hands it the answers.
package answertext

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/registry/textfit"
)

// Render writes an answer as an agent reads it, within budget characters
// (0: no bound), with notes of what was left out and how to get more. The
// lists of the structured result are cut to what the text shows (REG-12):
// outline's definitions, callers' sites, value and type uses, callees'
// sites.
func Render(a *graph.Answer, budget int) string {
	w := &writer{budget: budget}
	if a.Candidates != nil {
		return ambiguous(w, a)
	}
	switch a.Op {
	case "outline":
		return outline(w, a)
	case "find":
		return find(w, a)
	case "callers":
		return callers(w, a)
	case "callees":
		return callees(w, a)
	case "impact":
		return impact(w, a)
	case "status":
		return status(w, a)
	}
	return fmt.Sprintf("(no text for operation %q)", a.Op)
}

// more says, per operation, how to get what an answer left out at the
// output budget: only arguments and operations the tools have (the run's
// budget is the harness's, not the agent's).
var more = map[string]string{
	"ambiguous": "qualify the name to narrow the list",
	"outline":   "ask find or callers about one definition",
	"find":      "lower limit, give a kind, or narrow the query",
	"callers":   "impact with depth 1 lists each calling definition once; lsp references lists the server's references",
	"callees":   "read the definition's lines for the rest",
	"impact":    "lower depth or limit, or ask callers about one symbol",
	"status":    "the lists are in the structured result",
}

// Fit cuts a text over budget at a line, with a note of what was cut and
// how to get it, so that the registry's generic cut never stands in for
// the operation's own advice.
func Fit(text string, budget textfit.Budget, op string) string {
	return budget.Head(text, func(left int) string {
		return fmt.Sprintf("\n(%d more characters not shown: the output budget was reached; %s)", left, more[op])
	})
}

// writer builds an answer's text within a budget of characters.
type writer struct {
	b      strings.Builder
	chars  int // characters written
	budget int
	cut    int // lines left out
}

func (w *writer) line(format string, args ...any) bool {
	if w.cut > 0 {
		// Past the budget every later line is left out too, unmeasured:
		// formatting them would cost what the budget saves.
		w.cut++
		return false
	}
	s := fmt.Sprintf(format, args...)
	n := utf8.RuneCountInString(s) + 1
	if w.budget > 0 && w.chars+n > w.budget {
		w.cut++
		return false
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
	w.chars += n
	return true
}

// head writes a line outside the budget (summaries that must show).
func (w *writer) head(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	w.b.WriteString(s)
	w.b.WriteByte('\n')
	w.chars += utf8.RuneCountInString(s) + 1
}

// String is the text, with a note of the lines left out and what more
// says about getting them.
func (w *writer) String(more string) string {
	s := strings.TrimRight(w.b.String(), "\n")
	if w.cut > 0 {
		s += fmt.Sprintf("\n(%d more lines not shown: the output budget was reached; %s)", w.cut, more)
	}
	return s
}

func quoteLine(s string) string {
	if s == "" {
		return "(empty)"
	}
	return "`" + s + "`"
}

// defLine is what the answer says of its i-th listed definition besides
// its Symbol (nothing, for an answer made without it).
func defLine(a *graph.Answer, i int) graph.DefLine {
	if i < len(a.Lines) {
		return a.Lines[i]
	}
	return graph.DefLine{}
}

func describe(s graph.Symbol) string {
	return fmt.Sprintf("%s %s (%s:%d)", s.Kind, s.Qualified, s.File, s.Line)
}

func progress(st graph.IndexState) string {
	if st.Total == 0 {
		return "still listing the files"
	}
	return fmt.Sprintf("%d of %d files indexed so far", st.Done, st.Total)
}

// partialNote says an answer came from part of the tree, or from a tree
// some of whose changed files are still being re-read.
func partialNote(w *writer, st graph.IndexState) {
	pendingNote(w, st)
	if st.Ahead > 0 {
		w.head("(computed from %d files ahead of the index, which is still building (%d of %d files indexed so far): the files whose text holds the name and the folders that define it)", st.Ahead, st.Files, st.Found)
		if st.NamesOnly {
			w.head("(names that hold the query's letters only in order are left out until the index is ready)")
		}
		return
	}
	if !st.Ready {
		w.head("(index still building: %s; this answer covers only those)", progress(st))
	}
}

// pendingNote says how many files changed outside the tools the answer
// does not reflect yet.
func pendingNote(w *writer, st graph.IndexState) {
	if st.Pending > 0 {
		w.head("(%d changed files are being re-read in the background: this answer does not reflect them yet; ask again in a moment for the full answer)", st.Pending)
	}
}

func ambiguous(w *writer, a *graph.Answer) string {
	w.head("%q names %d definitions; which one? Ask again with file and line (or a qualified name such as Type.Method or pkg.Func):", a.Query, len(a.Candidates))
	for i, d := range a.Candidates {
		w.line("%d. %s  %s", i+1, describe(d), quoteLine(defLine(a, i).Code))
	}
	partialNote(w, a.Index)
	return w.String(more["ambiguous"])
}

// maxIndent is the deepest nesting drawn as indentation; deeper levels are
// numbered, so a line's length does not grow with the depth (N20: 40,000
// nested functions made the outline quadratic).
const maxIndent = 24

func indentOf(depth int) string {
	if depth <= maxIndent {
		return strings.Repeat("  ", depth)
	}
	return strings.Repeat("  ", maxIndent) + fmt.Sprintf("(depth %d) ", depth)
}

func outline(w *writer, a *graph.Answer) string {
	f := a.File
	w.head("%s (%s): %d definitions", f.Rel, f.Language, f.Definitions)
	if f.Errors > 0 {
		w.head("(%d syntax errors, first at line %v: indexed as far as it parses)", f.Errors, f.FirstError)
	}
	shown := 0
	for i, d := range a.Definitions {
		if w.cut > 0 {
			w.cut++ // left out, unformatted (N20: 40,000 nested functions)
			continue
		}
		span := fmt.Sprintf("%d", d.Line)
		if d.EndLine > d.Line {
			span = fmt.Sprintf("%d-%d", d.Line, d.EndLine)
		}
		l := defLine(a, i)
		if w.line("%s%s %s [%s]  %s", indentOf(l.Depth), d.Kind, l.Local, span, quoteLine(l.Code)) {
			shown++
		}
	}
	a.Definitions = a.Definitions[:shown]
	a.Counts.Shown = shown
	partialNote(w, a.Index)
	return w.String(more["outline"])
}

func find(w *writer, a *graph.Answer) string {
	w.head("%d definitions match %q; best %d:", a.Matches, a.Query, len(a.Definitions))
	for i, d := range a.Definitions {
		w.line("%s  %s", describe(d), quoteLine(defLine(a, i).Code))
	}
	if a.Matches > len(a.Definitions) {
		w.head("(%d more: raise limit, give a kind, or qualify the name)", a.Matches-len(a.Definitions))
	}
	partialNote(w, a.Index)
	return w.String(more["find"])
}

func classNote(s graph.Site) string {
	switch {
	case s.Class == graph.Candidate:
		return fmt.Sprintf("candidate %d of %d: %s", s.Rank, s.Of, s.Reason)
	case s.Class == graph.Implementation:
		return fmt.Sprintf("implementation %d of %d: %s", s.Rank, s.Of, s.Reason)
	case s.Reason != "":
		return s.Class + ": " + s.Reason
	}
	return s.Class
}

// ifaceCount is a head's count of calls through an interface, when
// there are any.
func ifaceCount(c graph.Counts) string {
	if c.Interface == 0 {
		return ""
	}
	return fmt.Sprintf(", %d interface (dispatch)", c.Interface)
}

// implCount is a count's calls through an interface or base the symbol
// implements.
func implCount(c graph.Counts) string {
	if c.Implementation == 0 {
		return ""
	}
	return fmt.Sprintf(", %d through an interface or base", c.Implementation)
}

// notFollowed says what an impact ring met and did not walk on from.
func notFollowed(ring graph.Depth) string {
	if len(ring.NotFollowed) == 0 {
		return ""
	}
	var parts []string
	for _, n := range ring.NotFollowed {
		switch n.Reason {
		case "candidate":
			parts = append(parts, textcut.Count(n.Count, "candidate site", "candidate sites")+" (name-only)")
		case "candidate value":
			parts = append(parts, textcut.Count(n.Count, "value use", "value uses")+" of a name-only match")
		case "value calls":
			parts = append(parts, "the calls made through "+textcut.Count(n.Count, "function value", "function values")+" passed or stored")
		case "dispatch":
			parts = append(parts, textcut.Count(n.Count, "call", "calls")+" through a type outside the index")
		case "implementations":
			parts = append(parts, "the callers of "+textcut.Count(n.Count, "implementation", "implementations")+" (ask impact of each)")
		default:
			parts = append(parts, fmt.Sprintf("%d %s", n.Count, n.Reason))
		}
	}
	return "; not followed: " + strings.Join(parts, ", ") + " — lower bound"
}

func callers(w *writer, a *graph.Answer) string {
	sym, c := a.Symbol, a.Counts
	impl := ifaceCount(c) + implCount(c)
	w.head("callers of %s: %d call sites (%d exact, %d import, %d candidate%s)", describe(*sym), len(a.Sites), c.Exact, c.Import, c.Candidate, impl)
	confidence(w, a)
	if len(a.Sites) == 0 {
		w.head("no call site in the index leads here")
	}
	shown := 0
	for _, s := range a.Sites {
		if w.line("%s:%d  in %s  [%s]  %s", s.File, s.Line, s.In, classNote(s), quoteLine(s.Code)) {
			shown++
		}
	}
	a.Sites = a.Sites[:shown]
	a.Counts.Shown = shown
	if len(a.Values) > 0 {
		w.line("passed or stored as a value at %d places (calls through a local bound to it are listed above; calls by whatever receives it are not seen):", len(a.Values))
		shown := 0
		for _, s := range a.Values {
			if w.line("%s:%d  in %s  %s", s.File, s.Line, s.In, quoteLine(s.Code)) {
				shown++
			}
		}
		a.Values = a.Values[:shown]
	}
	if len(a.TypeUses) > 0 {
		w.line("used as a type at %d places (annotations, bases; not calls):", len(a.TypeUses))
		shown := 0
		for _, s := range a.TypeUses {
			if w.line("%s:%d  in %s  [%s]  %s", s.File, s.Line, s.In, classNote(s), quoteLine(s.Code)) {
				shown++
			}
		}
		a.TypeUses = a.TypeUses[:shown]
	}
	if c.Elsewhere > 0 {
		w.head("%d other references named %s lead to other definitions", c.Elsewhere, sym.Name)
	}
	if s := a.Unplaced; s != nil {
		w.head("%d calls named %s lead to no definition in the index (external, or a receiver it cannot place), first %s:%d %s", c.Unresolved, sym.Name, s.File, s.Line, quoteLine(s.Code))
	}
	dispatchNote(w, a)
	if a.NameOnlyReceivers && c.Candidate > 0 {
		w.head("candidate sites call a method of this name on a receiver whose type the index does not know (an interface, a field, a variable)")
	}
	partialNote(w, a.Index)
	return w.String(more["callers"])
}

// dispatchNote says how many calls through a type outside the index may
// run the symbol and were not counted.
func dispatchNote(w *writer, a *graph.Answer) {
	if s := a.Dispatched; s != nil && a.Counts.Dispatch > 0 {
		w.head("%s through a type declared outside the index that may be an interface (first %s:%d %s, %s) may run this too: not counted, a lower bound", textcut.Count(a.Counts.Dispatch, "call", "calls"), s.File, s.Line, s.Call, quoteLine(s.Code))
	}
}

// callTo says where a call leads.
func callTo(s graph.Site) string {
	switch s.Class {
	case graph.Unresolved:
		return "unresolved: " + s.Why
	case graph.Candidate:
		var names []string
		for i, c := range s.Targets {
			if i == 3 {
				names = append(names, fmt.Sprintf("+%d more", len(s.Targets)-3))
				break
			}
			names = append(names, fmt.Sprintf("%s (%s:%d; %s)", c.Qualified, c.File, c.Line, c.Reason))
		}
		return fmt.Sprintf("candidates: %s", strings.Join(names, ", "))
	}
	c := s.Targets[0]
	to := fmt.Sprintf("%s: %s (%s:%d)", s.Class, c.Qualified, c.File, c.Line)
	if n := len(s.Targets) - 1; n > 0 && s.Targets[1].Reason == graph.Implementation {
		to += fmt.Sprintf(", implemented by %s (%s:%d)", s.Targets[1].Qualified, s.Targets[1].File, s.Targets[1].Line)
		if n > 1 {
			to += fmt.Sprintf(" and %d more", n-1)
		}
	}
	if s.Reason != "" {
		to += "; " + s.Reason
	}
	return to
}

func callees(w *writer, a *graph.Answer) string {
	c := a.Counts
	w.head("calls made by %s: %d (%d exact, %d import, %d candidate, %d unresolved%s)", describe(*a.Symbol), len(a.Sites), c.Exact, c.Import, c.Candidate, c.Unresolved, ifaceCount(c))
	confidence(w, a)
	shown := 0
	for _, s := range a.Sites {
		if w.cut > 0 {
			w.cut++ // left out: callTo's formatting would cost what the budget saves
			continue
		}
		if w.line("%d  %s -> %s  %s", s.Line, s.Call, callTo(s), quoteLine(s.Code)) {
			shown++
		}
	}
	a.Sites = a.Sites[:shown]
	a.Counts.Shown = shown
	if len(a.Values) > 0 {
		w.line("passes or stores as a value %s (a call through a local bound to one is listed above; calls made through them elsewhere are not seen):", textcut.Count(len(a.Values), "function", "functions"))
		shown := 0
		for _, s := range a.Values {
			if w.line("%d  %s -> %s  %s", s.Line, s.Call, callTo(s), quoteLine(s.Code)) {
				shown++
			}
		}
		a.Values = a.Values[:shown]
	}
	partialNote(w, a.Index)
	return w.String(more["callees"])
}

func impact(w *writer, a *graph.Answer) string {
	c := a.Counts
	what := ""
	if a.File != nil {
		what = fmt.Sprintf("file %s (%d definitions)", a.File.Rel, a.File.Definitions)
	} else {
		what = describe(*a.Symbol)
	}
	bound := "exact count"
	if a.LowerBound {
		bound = "lower bound"
	}
	w.head("impact of %s, to depth %d: %d dependents (%d exact, %d import, %d candidate%s%s) — %s", what, a.MaxDepth, c.Total(), c.Exact, c.Import, c.Candidate, ifaceCount(c), implCount(c), bound)
	confidence(w, a)
	for _, ring := range a.Depths {
		rc := ring.Counts
		values := ""
		if rc.Values > 0 {
			values = fmt.Sprintf("; %s", textcut.Count(rc.Values, "function value passed or stored", "function values passed or stored"))
		}
		w.head("depth %d: %d (%d exact, %d import, %d candidate%s%s%s)%s", ring.Depth, rc.Total(), rc.Exact, rc.Import, rc.Candidate, ifaceCount(rc), implCount(rc), values, notFollowed(ring))
		for _, d := range ring.Dependents {
			more := ""
			if n := len(d.More) + d.MoreLeft; n > 0 {
				more = fmt.Sprintf(" (and %s)", textcut.Count(n, "more candidate call", "more candidate calls"))
			}
			call := d.Via.Call
			if d.Value {
				call += " (as a value)"
			}
			w.line("  %s  via %s:%d %s [%s]%s  %s", d.Symbol.Qualified, d.Via.File, d.Via.Line, call, classNote(d.Via), more, quoteLine(d.Via.Code))
		}
		if ring.Truncated > 0 {
			w.head("  (+%d more at depth %d; raise limit to list them)", ring.Truncated, ring.Depth)
		}
	}
	if a.NotFollowed > 0 {
		w.head("%d candidate dependents (name-only matches) were listed but not followed further", a.NotFollowed)
	}
	if c.Values > 0 {
		w.head("%d value uses (callbacks, stored functions): the functions passing them are walked, the calls made through them later are not seen", c.Values)
	}
	dispatchNote(w, a)
	if m := a.Macro; m != nil {
		w.head("%s invokes macro %s (%s:%d): calls made inside a macro's expansion are not seen", m.In, m.Macro, m.File, m.Line)
	}
	partialNote(w, a.Index)
	return w.String(more["impact"])
}

func status(w *writer, a *graph.Answer) string {
	s := a.Status
	state := "ready"
	if !s.Ready {
		state = "building: " + progress(a.Index)
	}
	w.head("code graph of %s: %s", s.Root, state)
	if s.Ready {
		w.head("built in %s; %d files re-read since, after writes or outside changes", s.BuildTime, s.Refreshed)
		if s.FromStore > 0 {
			w.head("%d files' records taken from the graph store, not parsed", s.FromStore)
		}
		if s.StoreError != "" {
			w.head("the graph store is not used in full (%s): the index works in memory all the same", s.StoreError)
		}
		if s.BuildError != "" {
			w.head("the build stopped short: %s", s.BuildError)
		}
	}
	w.head("changes outside the tools are noticed by %s", s.Freshness)
	pendingNote(w, a.Index)
	var langs []string
	for id, n := range s.Languages {
		langs = append(langs, fmt.Sprintf("%s %d", id, n))
	}
	sort.Strings(langs)
	w.head("files indexed: %d (%s); %d definitions, %d references; about %.1f MiB", s.Files, strings.Join(langs, ", "), s.Defs, s.Refs, s.MemoryMiB)
	w.head("languages read: %s", strings.Join(s.Supported, ", "))
	if len(s.SkipList) > 0 {
		var reasons []string
		for r, n := range s.Skipped {
			reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
		}
		sort.Strings(reasons)
		w.head("skipped: %d files (%s)", len(s.SkipList), strings.Join(reasons, "; "))
		for _, sk := range s.SkipList {
			w.line("  %s", sk)
		}
	}
	if len(s.ParseFail) > 0 {
		w.head("syntax errors in %d files (indexed as far as they parse):", len(s.ParseFail))
		for _, e := range s.ParseFail {
			w.line("  %s", e)
		}
	}
	return w.String(more["status"])
}

// confidence says in one line, once per class of edges the answer holds,
// what the benchmarks measured of that class in that language: per
// language the references, then each class's precision beside each ("–"
// where one did not measure it). Recall and the rest are in the
// structured result.
func confidence(w *writer, a *graph.Answer) {
	if len(a.Confidence) == 0 {
		return
	}
	var parts []string
	for i := 0; i < len(a.Confidence); {
		lang := a.Confidence[i].Language
		j := i
		var refs []string
		for ; j < len(a.Confidence) && a.Confidence[j].Language == lang; j++ {
			for _, m := range a.Confidence[j].Measured {
				if !slices.Contains(refs, m.Against) {
					refs = append(refs, m.Against)
				}
			}
		}
		sort.Strings(refs)
		var classes []string
		for _, c := range a.Confidence[i:j] {
			if len(c.Measured) == 0 {
				classes = append(classes, c.Class+" not measured")
				continue
			}
			var fs []string
			for _, ref := range refs {
				f := "–"
				for _, m := range c.Measured {
					if m.Against == ref {
						f = fmt.Sprintf("%s of %d", percent(m.Precision), m.Edges)
					}
				}
				fs = append(fs, f)
			}
			classes = append(classes, c.Class+" "+strings.Join(fs, " / "))
		}
		if len(refs) == 0 {
			parts = append(parts, lang+": "+strings.Join(classes, ", "))
		} else {
			parts = append(parts, fmt.Sprintf("%s beside %s: %s", lang, strings.Join(refs, " / "), strings.Join(classes, ", ")))
		}
		i = j
	}
	w.head("measured precision (more in the structured result's confidence): %s", strings.Join(parts, "; "))
}

// percent writes a share as a percentage, 100 % only when it is whole.
func percent(f float64) string {
	switch {
	case f >= 1:
		return "100 %"
	case f >= 0.999:
		return "99.9 %"
	}
	return fmt.Sprintf("%.1f %%", 100*f)
}
