package graph

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Answer is one query's result: data for a program and text for a model.
type Answer struct {
	Op          string     `json:"operation"`
	Symbol      *Symbol    `json:"symbol,omitempty" jsonschema:"the definition the question was about"`
	Candidates  []Symbol   `json:"candidates,omitempty" jsonschema:"when the symbol was ambiguous: the definitions it may mean, ranked; ask again with file and line"`
	Definitions []Symbol   `json:"definitions,omitempty"`
	Sites       []Site     `json:"sites,omitempty" jsonschema:"callers: call sites; callees: calls made"`
	Values      []Site     `json:"values,omitempty" jsonschema:"places the symbol is passed or stored as a value: calls through them are not seen"`
	TypeUses    []Site     `json:"type_uses,omitempty" jsonschema:"callers of a type: where it is used as a type (annotations, bases), apart from its constructions"`
	Counts      Counts     `json:"counts"`
	Depths      []Depth    `json:"depths,omitempty"`
	LowerBound  bool       `json:"lower_bound,omitempty" jsonschema:"the true answer may hold more: the walk met value uses, candidates it did not follow, or an index still building"`
	Index       IndexState `json:"index"`
	Status      *Status    `json:"status,omitempty"`
	text        string
}

// Counts split an answer's edges by how they were resolved.
type Counts struct {
	Exact     int `json:"exact"`
	Import    int `json:"import"`
	Candidate int `json:"candidate"`
	// Implementation counts calls through an interface (or a base
	// class's method) that may run this definition.
	Implementation int `json:"implementation,omitempty"`
	Unresolved     int `json:"unresolved"`
	Values         int `json:"values,omitempty"`
	TypeUses       int `json:"type_uses,omitempty"`
	Elsewhere      int `json:"elsewhere,omitempty" jsonschema:"references with this name that resolve to other definitions"`
	Shown          int `json:"shown"`
}

func (c *Counts) add(class string) {
	switch class {
	case Exact:
		c.Exact++
	case ViaImport:
		c.Import++
	case Candidate:
		c.Candidate++
	case Implementation:
		c.Implementation++
	default:
		c.Unresolved++
	}
}

func (c Counts) total() int {
	return c.Exact + c.Import + c.Candidate + c.Implementation + c.Unresolved
}

// IndexState says how complete the index was when the answer was made.
type IndexState struct {
	Ready  bool `json:"ready"`
	Files  int  `json:"files" jsonschema:"files indexed"`
	Found  int  `json:"found" jsonschema:"files the build found"`
	Synced int  `json:"synced,omitempty" jsonschema:"files re-read before answering because they changed"`
	Ahead  int  `json:"ahead,omitempty" jsonschema:"the answer was computed, ahead of the index still building, from this many files: those whose text holds the name and the folders that define it"`
	// NamesOnly: find ahead of the index lists the names that hold the
	// query; names holding only its letters in order wait for the index.
	NamesOnly bool `json:"names_only,omitempty" jsonschema:"find answered ahead of the index: names holding the query's letters only in order are left out until the index is ready"`
}

// Text is the answer for a model.
func (a *Answer) Text() string { return a.text }

func (x *Index) state(synced int) IndexState {
	if p := x.parent; p != nil {
		p.mu.RLock()
		defer p.mu.RUnlock()
		return IndexState{Ready: false, Files: len(p.files), Found: max(p.total, x.total), Synced: synced, Ahead: len(x.parsed), NamesOnly: x.namesOnly}
	}
	return IndexState{Ready: x.Ready(), Files: len(x.files), Found: x.total, Synced: synced}
}

// writer builds an answer's text within a budget of characters.
type writer struct {
	b      strings.Builder
	budget int
	cut    int // lines left out
}

func (w *writer) line(format string, args ...any) bool {
	if w.cut > 0 {
		// Past the budget every later line is left out too, uncounted in
		// bytes: formatting them would cost what the budget saves.
		w.cut++
		return false
	}
	s := fmt.Sprintf(format, args...)
	if w.budget > 0 && w.b.Len()+len(s)+1 > w.budget {
		w.cut++
		return false
	}
	w.b.WriteString(s)
	w.b.WriteByte('\n')
	return true
}

// head writes a line outside the budget (summaries that must show).
func (w *writer) head(format string, args ...any) {
	fmt.Fprintf(&w.b, format, args...)
	w.b.WriteByte('\n')
}

func (w *writer) String(more string) string {
	s := strings.TrimRight(w.b.String(), "\n")
	if w.cut > 0 {
		s += fmt.Sprintf("\n(%d more lines not shown: the output budget was reached; %s)", w.cut, more)
	}
	return s
}

// lines reads files' lines for quoting, once per answer.
type lines struct {
	x     *Index
	files map[string][][]byte
}

func (x *Index) lineOf(rel string, n int) string {
	l := lines{x: x}
	return l.get(rel, n)
}

func (l *lines) get(rel string, n int) string {
	if l.files == nil {
		l.files = map[string][][]byte{}
	}
	ls, ok := l.files[rel]
	if !ok {
		data, _, err := l.x.guard.ReadFile(filepath.Join(l.x.root, filepath.FromSlash(rel)), l.x.opts.MaxFileSize)
		if err == nil {
			ls = bytes.Split(data, []byte("\n"))
		}
		l.files[rel] = ls
	}
	if n < 1 || n > len(ls) {
		return ""
	}
	s := strings.TrimSpace(string(ls[n-1]))
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

func quoteLine(s string) string {
	if s == "" {
		return "(empty)"
	}
	return "`" + s + "`"
}

func (x *Index) partialNote(w *writer, st IndexState) {
	if st.Ahead > 0 {
		w.head("(computed from %d files ahead of the index, which is still building (%d of %d files indexed so far): the files whose text holds the name and the folders that define it)", st.Ahead, st.Files, st.Found)
		if st.NamesOnly {
			w.head("(names that hold the query's letters only in order are left out until the index is ready)")
		}
		return
	}
	if !st.Ready {
		w.head("(index still building: %s; this answer covers only those)", x.progressText())
	}
}

func describe(s Symbol) string {
	return fmt.Sprintf("%s %s (%s:%d)", s.Kind, s.Qualified, s.File, s.Line)
}

// ambiguous answers a spec that names several definitions.
func (x *Index) ambiguous(op string, spec Spec, ts []Target, budget int, st IndexState) *Answer {
	a := &Answer{Op: op, Index: st}
	w := &writer{budget: budget}
	name := spec.Symbol
	w.head("%q names %d definitions; which one? Ask again with file and line (or a qualified name such as Type.Method or pkg.Func):", name, len(ts))
	l := lines{x: x}
	for i, t := range ts {
		s := symbolOf(t)
		a.Candidates = append(a.Candidates, s)
		if !w.line("%d. %s  %s", i+1, describe(s), quoteLine(l.get(s.File, s.Line))) {
			continue
		}
	}
	x.partialNote(w, st)
	a.text = w.String("qualify the name to narrow the list")
	return a
}

// one locates the single definition a spec names; when it names several,
// the answer is the ranked list (ambiguous). x.mu is held.
func (x *Index) one(op string, spec Spec, budget, synced int) (Target, IndexState, *Answer, error) {
	st := x.state(synced)
	ts, err := x.locate(spec)
	if err != nil {
		return Target{}, st, nil, err
	}
	if len(ts) > 1 {
		return Target{}, st, x.ambiguous(op, spec, ts, budget, st), nil
	}
	return ts[0], st, nil, nil
}

// Outline lists a file's definitions as a tree.
func (x *Index) Outline(file string, budget int, synced int) (*Answer, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	file = strings.TrimPrefix(filepath.ToSlash(file), "./")
	f := x.files[file]
	if f == nil {
		return nil, x.fileProblem(file)
	}
	st := x.state(synced)
	a := &Answer{Op: "outline", Index: st}
	w := &writer{budget: budget}
	w.head("%s (%s): %d definitions", f.Rel, f.Lang.ID, len(f.Defs))
	if f.Errors > 0 {
		w.head("(%d syntax errors, first at line %v: indexed as far as it parses)", f.Errors, f.ErrorAt[0])
	}
	// Nesting by range; Go methods sit under their type when it is here.
	depth := make([]int, len(f.Defs))
	var stack []int
	for i := range f.Defs {
		d := &f.Defs[i]
		for len(stack) > 0 && f.Defs[stack[len(stack)-1]].end <= d.start {
			stack = stack[:len(stack)-1]
		}
		depth[i] = len(stack)
		stack = append(stack, i)
	}
	order := make([]int, len(f.Defs))
	for i := range order {
		order[i] = i
	}
	typeAt := map[string]int{}
	for i := range f.Defs {
		if classLike[f.Defs[i].Kind] && depth[i] == 0 {
			typeAt[f.Defs[i].Name] = i
		}
	}
	under := map[int][]int{}
	var top []int
	for _, i := range order {
		d := &f.Defs[i]
		if j, ok := typeAt[d.Container]; ok && depth[i] == 0 && d.Container != "" {
			under[j] = append(under[j], i)
			continue
		}
		top = append(top, i)
	}
	l := lines{x: x}
	var emit func(i, indent int)
	emit = func(i, indent int) {
		d := &f.Defs[i]
		span := fmt.Sprintf("%d", d.Line)
		if d.EndLine > d.Line {
			span = fmt.Sprintf("%d-%d", d.Line, d.EndLine)
		}
		// The structured list holds what the text shows (REG-12).
		if w.line("%s%s %s [%s]  %s", indentOf(indent), d.Kind, d.Qualified(), span, quoteLine(l.get(f.Rel, int(d.Line)))) {
			a.Definitions = append(a.Definitions, symbolOf(Target{f, int32(i)}))
		}
		for _, j := range under[i] {
			emit(j, indent+1)
		}
	}
	for _, i := range top {
		emit(i, depth[i])
	}
	a.Counts.Shown = len(a.Definitions)
	x.partialNote(w, st)
	a.text = w.String("ask find or callers about one definition")
	return a, nil
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

// Find ranks definitions whose names match query (exact, prefix,
// substring, then letters in order), optionally of one kind.
func (x *Index) Find(query, kind string, limit, budget, synced int) (*Answer, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	q := strings.TrimSpace(query)
	if q == "" {
		return nil, &LookupError{"find needs a query: part of a name, or Type.Method"}
	}
	if limit <= 0 {
		limit = 20
	}
	name, qual := q, ""
	if i := strings.LastIndex(q, "."); i > 0 {
		name, qual = q[i+1:], q[:i]
	}
	low := strings.ToLower(name)
	type hit struct {
		t     Target
		score int
	}
	var hits []hit
	otherKinds := map[string]int{} // matches left out by kind
	for _, f := range x.files {
		for i := range f.Defs {
			d := &f.Defs[i]
			s := nameScore(d.Name, name, low)
			if s == 0 || s == scoreLettersInOrder && x.namesOnly {
				continue
			}
			if kind != "" && d.Kind != kind {
				if qual == "" || qualifies(Target{f, int32(i)}, qual) {
					otherKinds[d.Kind]++
				}
				continue
			}
			t := Target{f, int32(i)}
			if qual != "" {
				if !qualifies(t, qual) {
					continue
				}
				s += 5
			}
			hits = append(hits, hit{t, s})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		ni, nj := hits[i].t.D().Name, hits[j].t.D().Name
		if len(ni) != len(nj) {
			return len(ni) < len(nj)
		}
		if hits[i].t.File.Rel != hits[j].t.File.Rel {
			return hits[i].t.File.Rel < hits[j].t.File.Rel
		}
		return hits[i].t.Def < hits[j].t.Def
	})
	st := x.state(synced)
	a := &Answer{Op: "find", Index: st}
	w := &writer{budget: budget}
	if len(hits) == 0 && len(otherKinds) > 0 {
		kinds := make([]string, 0, len(otherKinds))
		for k, n := range otherKinds {
			kinds = append(kinds, fmt.Sprintf("%s (%d)", k, n))
		}
		sort.Strings(kinds)
		return nil, &LookupError{fmt.Sprintf("no %s matches %q; definitions of other kinds do: %s (ask again with one of those kinds, or without kind)",
			kind, q, strings.Join(kinds, ", "))}
	}
	if len(hits) == 0 {
		return nil, &LookupError{fmt.Sprintf("no definition matches %q%s", q, x.nearNames(name))}
	}
	shown := min(limit, len(hits))
	w.head("%d definitions match %q; best %d:", len(hits), q, shown)
	l := lines{x: x}
	for _, h := range hits[:shown] {
		s := symbolOf(h.t)
		a.Definitions = append(a.Definitions, s)
		w.line("%s  %s", describe(s), quoteLine(l.get(s.File, s.Line)))
	}
	a.Counts.Shown = shown
	if len(hits) > shown {
		w.head("(%d more: raise limit, give a kind, or qualify the name)", len(hits)-shown)
	}
	x.partialNote(w, st)
	a.text = w.String("raise the budget or narrow the query")
	return a, nil
}

// scoreLettersInOrder is nameScore's for a name that holds the query's
// letters only in order.
const scoreLettersInOrder = 20

func nameScore(n, q, low string) int {
	switch {
	case n == q:
		return 100
	case strings.EqualFold(n, q):
		return 90
	case strings.HasPrefix(n, q):
		return 70
	}
	ln := strings.ToLower(n)
	switch {
	case strings.HasPrefix(ln, low):
		return 60
	case strings.Contains(n, q):
		return 50
	case strings.Contains(ln, low):
		return 40
	case len(low) >= 3 && subsequence(ln, low):
		return scoreLettersInOrder
	}
	return 0
}

func subsequence(s, sub string) bool {
	j := 0
	for i := 0; i < len(s) && j < len(sub); i++ {
		if s[i] == sub[j] {
			j++
		}
	}
	return j == len(sub)
}

// Callers answers who calls the symbol.
func (x *Index) Callers(spec Spec, budget, synced int) (*Answer, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t, st, amb, err := x.one("callers", spec, budget, synced)
	if amb != nil || err != nil {
		return amb, err
	}
	sym := symbolOf(t)
	cs := x.callersOf([]Target{t})[t]
	calls, values, elsewhere, nowhere := cs.calls, cs.values, cs.elsewhere, cs.nowhere
	a := &Answer{Op: "callers", Symbol: &sym, Index: st, Sites: []Site{}}
	a.Counts.TypeUses = len(cs.types)
	for _, s := range calls {
		a.Counts.add(s.Class)
	}
	a.Counts.Values, a.Counts.Elsewhere = len(values), elsewhere
	a.Counts.Unresolved = len(nowhere)
	w := &writer{budget: budget}
	impl := ""
	if a.Counts.Implementation > 0 {
		impl = fmt.Sprintf(", %d through an interface or base", a.Counts.Implementation)
	}
	w.head("callers of %s: %d call sites (%d exact, %d import, %d candidate%s)", describe(sym), len(calls), a.Counts.Exact, a.Counts.Import, a.Counts.Candidate, impl)
	if len(calls) == 0 {
		w.head("no call site in the index leads here")
	}
	l := lines{x: x}
	for _, s := range calls {
		s.Code = l.get(s.File, s.Line)
		if w.line("%s:%d  in %s  [%s]  %s", s.File, s.Line, s.In, classNote(s), quoteLine(s.Code)) {
			a.Sites = append(a.Sites, s)
		}
	}
	a.Counts.Shown = len(a.Sites)
	if len(values) > 0 {
		a.LowerBound = true
		w.line("passed or stored as a value at %d places (calls through those are not seen):", len(values))
		for _, s := range values {
			s.Code = l.get(s.File, s.Line)
			if w.line("%s:%d  in %s  %s", s.File, s.Line, s.In, quoteLine(s.Code)) {
				a.Values = append(a.Values, s)
			}
		}
	}
	if len(cs.types) > 0 {
		w.line("used as a type at %d places (annotations, bases; not calls):", len(cs.types))
		for _, s := range cs.types {
			s.Code = l.get(s.File, s.Line)
			if w.line("%s:%d  in %s  [%s]  %s", s.File, s.Line, s.In, classNote(s), quoteLine(s.Code)) {
				a.TypeUses = append(a.TypeUses, s)
			}
		}
	}
	if elsewhere > 0 {
		w.head("%d other references named %s lead to other definitions", elsewhere, sym.Name)
	}
	if len(nowhere) > 0 {
		s := nowhere[0]
		w.head("%d calls named %s lead to no definition in the index (external, or a receiver it cannot place), first %s:%d %s", len(nowhere), sym.Name, s.File, s.Line, quoteLine(l.get(s.File, s.Line)))
	}
	if t.D().Container != "" && t.File.Lang.Scope == "directory" && a.Counts.Candidate > 0 {
		w.head("candidate sites call a method of this name on a receiver whose type the index does not know (an interface, a field, a variable)")
	}
	x.partialNote(w, st)
	a.LowerBound = a.LowerBound || !st.Ready
	a.text = w.String("ask about one file with file and line, or raise the budget")
	return a, nil
}

func classNote(s Site) string {
	switch {
	case s.Class == Candidate:
		return fmt.Sprintf("candidate %d of %d: %s", s.Rank, s.Of, s.Reason)
	case s.Class == Implementation:
		return fmt.Sprintf("implementation %d of %d: %s", s.Rank, s.Of, s.Reason)
	case s.Reason != "":
		return s.Class + ": " + s.Reason
	}
	return s.Class
}

// Callees answers what the symbol calls.
func (x *Index) Callees(spec Spec, budget, synced int) (*Answer, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t, st, amb, err := x.one("callees", spec, budget, synced)
	if amb != nil || err != nil {
		return amb, err
	}
	sym := symbolOf(t)
	sites := x.callees(t)
	a := &Answer{Op: "callees", Symbol: &sym, Index: st, Sites: []Site{}}
	for _, s := range sites {
		a.Counts.add(s.Class)
	}
	w := &writer{budget: budget}
	w.head("calls made by %s: %d (%d exact, %d import, %d candidate, %d unresolved)", describe(sym), len(sites), a.Counts.Exact, a.Counts.Import, a.Counts.Candidate, a.Counts.Unresolved)
	l := lines{x: x}
	for _, s := range sites {
		s.Code = l.get(s.File, s.Line)
		var to string
		switch s.Class {
		case Unresolved:
			to = "unresolved: " + s.Why
		case Candidate:
			var names []string
			for i, c := range s.Targets {
				if i == 3 {
					names = append(names, fmt.Sprintf("+%d more", len(s.Targets)-3))
					break
				}
				names = append(names, fmt.Sprintf("%s (%s:%d; %s)", c.Qualified, c.File, c.Line, c.Reason))
			}
			to = fmt.Sprintf("candidates: %s", strings.Join(names, ", "))
		default:
			c := s.Targets[0]
			to = fmt.Sprintf("%s: %s (%s:%d)", s.Class, c.Qualified, c.File, c.Line)
			if n := len(s.Targets) - 1; n > 0 && s.Targets[1].Reason == Implementation {
				to += fmt.Sprintf(", implemented by %s (%s:%d)", s.Targets[1].Qualified, s.Targets[1].File, s.Targets[1].Line)
				if n > 1 {
					to += fmt.Sprintf(" and %d more", n-1)
				}
			}
			if s.Reason != "" {
				to += "; " + s.Reason
			}
		}
		if w.line("%d  %s -> %s  %s", s.Line, s.Call, to, quoteLine(s.Code)) {
			a.Sites = append(a.Sites, s)
		}
	}
	a.Counts.Shown = len(a.Sites)
	x.partialNote(w, st)
	a.text = w.String("raise the budget")
	return a, nil
}

// Depth is one ring of an impact walk.
type Depth struct {
	Depth      int         `json:"depth"`
	Counts     Counts      `json:"counts"`
	Dependents []Dependent `json:"dependents"`
	Truncated  int         `json:"truncated,omitempty" jsonschema:"dependents at this depth not listed"`
}

type depNodeKey struct {
	f *File
	d int32
}

// Dependent is one definition (or a file's top level) that depends on
// the walk's previous ring, with the call that connects them.
type Dependent struct {
	Symbol Symbol `json:"symbol"`
	Via    Site   `json:"via"`
	On     string `json:"on" jsonschema:"the definition it calls"`
}

// Impact walks callers outward from a symbol, or from every definition in
// a file, to depth.
func (x *Index) Impact(spec Spec, depth, perDepth, budget, synced int) (*Answer, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if depth <= 0 {
		depth = 3
	}
	if perDepth <= 0 {
		perDepth = 30
	}
	st := x.state(synced)
	var start []Target
	var what string
	if spec.Symbol == "" && spec.Line == 0 && spec.File != "" {
		file := strings.TrimPrefix(filepath.ToSlash(spec.File), "./")
		f := x.files[file]
		if f == nil {
			return nil, x.fileProblem(file)
		}
		for i := range f.Defs {
			start = append(start, Target{f, int32(i)})
		}
		what = fmt.Sprintf("file %s (%d definitions)", f.Rel, len(f.Defs))
	} else {
		t, _, amb, err := x.one("impact", spec, budget, synced)
		if amb != nil || err != nil {
			return amb, err
		}
		start = []Target{t}
		what = describe(symbolOf(t))
	}
	a := &Answer{Op: "impact", Index: st}
	if len(start) == 1 {
		s := symbolOf(start[0])
		a.Symbol = &s
	}
	visited := map[depNodeKey]bool{}
	inStart := map[*File]bool{}
	for _, t := range start {
		visited[depNodeKey{t.File, t.Def}] = true
		if len(start) > 1 {
			inStart[t.File] = true
		}
	}
	frontier := start
	macro := "" // a walked definition that invokes a macro, and the macro
	notFollowed := 0
	l := lines{x: x}
	for dep := 1; dep <= depth && len(frontier) > 0; dep++ {
		ring := Depth{Depth: dep, Dependents: []Dependent{}}
		var next []Target
		for _, t := range frontier {
			if macro == "" {
				macro = x.macroUse(t)
			}
		}
		sets := x.callersOf(frontier)
		for _, t := range frontier {
			cs := sets[t]
			// A type's users depend on it as much as a function's callers.
			calls, values := append(slices.Clip(cs.calls), cs.types...), cs.values
			ring.Counts.Values += len(values)
			for _, s := range calls {
				if inStart[s.fileRef] {
					continue // a file's impact is on other files
				}
				key := depNodeKey{s.fileRef, -1}
				var dsym Symbol
				if s.hasEncl {
					key.d = s.encl.Def
					dsym = symbolOf(s.encl)
				} else {
					dsym = Symbol{Name: "(top level)", Qualified: s.File + " (top level)", Kind: "file", File: s.File, Line: s.Line, EndLine: s.Line, Language: s.fileRef.Lang.ID}
				}
				if visited[key] {
					continue
				}
				visited[key] = true
				ring.Counts.add(s.Class)
				if len(ring.Dependents) < perDepth {
					s.Code = l.get(s.File, s.Line)
					ring.Dependents = append(ring.Dependents, Dependent{Symbol: dsym, Via: s, On: qualified(t)})
				} else {
					ring.Truncated++
				}
				if s.Class == Exact || s.Class == ViaImport {
					if s.hasEncl {
						next = append(next, s.encl)
					}
				} else {
					notFollowed++
				}
			}
		}
		ring.Counts.Shown = len(ring.Dependents)
		a.Counts.Exact += ring.Counts.Exact
		a.Counts.Import += ring.Counts.Import
		a.Counts.Candidate += ring.Counts.Candidate
		a.Counts.Values += ring.Counts.Values
		a.Depths = append(a.Depths, ring)
		frontier = next
	}
	for _, t := range frontier { // the last ring, not walked further
		if macro == "" {
			macro = x.macroUse(t)
		}
	}
	a.LowerBound = a.Counts.Values > 0 || notFollowed > 0 || !st.Ready || macro != ""
	w := &writer{budget: budget}
	total := a.Counts.total()
	bound := "exact count"
	if a.LowerBound {
		bound = "lower bound"
	}
	w.head("impact of %s, to depth %d: %d dependents (%d exact, %d import, %d candidate) — %s", what, depth, total, a.Counts.Exact, a.Counts.Import, a.Counts.Candidate, bound)
	for _, ring := range a.Depths {
		w.head("depth %d: %d (%d exact, %d import, %d candidate; %d value uses not followed)", ring.Depth, ring.Counts.total(), ring.Counts.Exact, ring.Counts.Import, ring.Counts.Candidate, ring.Counts.Values)
		for _, d := range ring.Dependents {
			w.line("  %s  via %s:%d %s [%s]  %s", d.Symbol.Qualified, d.Via.File, d.Via.Line, d.Via.Call, classNote(d.Via), quoteLine(d.Via.Code))
		}
		if ring.Truncated > 0 {
			w.head("  (+%d more at depth %d; raise limit to list them)", ring.Truncated, ring.Depth)
		}
	}
	if notFollowed > 0 {
		w.head("%d candidate dependents (name-only matches) were listed but not followed further", notFollowed)
	}
	if a.Counts.Values > 0 {
		w.head("%d value uses (callbacks, stored functions) may call into this from places not counted", a.Counts.Values)
	}
	if macro != "" {
		w.head("%s: calls made inside a macro's expansion are not seen", macro)
	}
	x.partialNote(w, st)
	a.text = w.String("lower depth or limit, or ask callers about one symbol")
	return a, nil
}

// Status describes the index.
type Status struct {
	Root       string         `json:"root"`
	Ready      bool           `json:"ready"`
	Files      int            `json:"files"`
	Found      int            `json:"found"`
	Languages  map[string]int `json:"languages" jsonschema:"files indexed per language"`
	Defs       int            `json:"definitions"`
	Refs       int            `json:"references"`
	Skipped    map[string]int `json:"skipped,omitempty" jsonschema:"files left out, counted by reason"`
	SkipList   []string       `json:"skipped_files,omitempty"`
	ParseFail  []string       `json:"syntax_errors,omitempty" jsonschema:"files with syntax errors, indexed as far as they parse"`
	BuildTime  string         `json:"build_time,omitempty"`
	Refreshed  int            `json:"refreshed" jsonschema:"files re-read after writes or outside changes since the build"`
	Snapshot   int            `json:"from_snapshot,omitempty" jsonschema:"files the build took unchanged from the on-disk snapshot"`
	Freshness  string         `json:"freshness" jsonschema:"how changes made outside the tools are noticed"`
	MemoryMiB  float64        `json:"memory_mib" jsonschema:"estimated size of the index's records"`
	Supported  []string       `json:"supported"`
	Generation uint64         `json:"generation"`
}

// StatusAnswer describes what is indexed.
func (x *Index) StatusAnswer(budget, synced int) *Answer {
	x.mu.RLock()
	defer x.mu.RUnlock()
	s := &Status{Root: x.root, Ready: x.Ready(), Files: len(x.files), Found: x.total, Languages: map[string]int{}, Skipped: map[string]int{},
		Refreshed: x.refreshed, Snapshot: x.fromSnapshot, MemoryMiB: float64(x.bytes) / (1 << 20), Supported: x.langs.IDs(), Generation: x.gen}
	var errs []string
	for _, f := range x.files {
		s.Languages[f.Lang.ID]++
		s.Defs += len(f.Defs)
		s.Refs += len(f.Refs)
		if f.Errors > 0 {
			errs = append(errs, fmt.Sprintf("%s (%d errors, first at line %d)", f.Rel, f.Errors, f.ErrorAt[0]))
		}
	}
	sort.Strings(errs)
	s.ParseFail = errs
	var skips []string
	for rel, why := range x.skipped {
		key := why
		if i := strings.Index(key, ":"); i > 0 && !strings.HasPrefix(key, "not indexed") {
			key = key[:i]
		}
		s.Skipped[key]++
		skips = append(skips, rel+": "+why)
	}
	sort.Strings(skips)
	s.SkipList = skips
	if s.Ready {
		s.BuildTime = x.took.Round(time.Millisecond).String()
	}
	a := &Answer{Op: "status", Index: x.state(synced), Status: s}
	w := &writer{budget: budget}
	state := "ready"
	if !s.Ready {
		state = "building: " + x.progressText()
	}
	w.head("code graph of %s: %s", x.root, state)
	s.Freshness = "file events (inotify), checked before every answer"
	if x.watch == nil {
		s.Freshness = "every file's size and modification time, checked before every answer (" + x.watchNote + ")"
	}
	if s.Ready {
		w.head("built in %s; %d files re-read since, after writes or outside changes", s.BuildTime, s.Refreshed)
		if s.Snapshot > 0 {
			w.head("%d files taken unchanged from the snapshot in the cache folder", s.Snapshot)
		}
		if x.saveErr != nil {
			w.head("the snapshot could not be written: %v", x.saveErr)
		}
	}
	w.head("changes outside the tools are noticed by %s", s.Freshness)
	var langs []string
	for id, n := range s.Languages {
		langs = append(langs, fmt.Sprintf("%s %d", id, n))
	}
	sort.Strings(langs)
	w.head("files indexed: %d (%s); %d definitions, %d references; about %.1f MiB", s.Files, strings.Join(langs, ", "), s.Defs, s.Refs, s.MemoryMiB)
	w.head("languages read: %s", strings.Join(s.Supported, ", "))
	if len(skips) > 0 {
		var reasons []string
		for r, n := range s.Skipped {
			reasons = append(reasons, fmt.Sprintf("%d %s", n, r))
		}
		sort.Strings(reasons)
		w.head("skipped: %d files (%s)", len(skips), strings.Join(reasons, "; "))
		for _, sk := range skips {
			w.line("  %s", sk)
		}
	}
	if len(errs) > 0 {
		w.head("syntax errors in %d files (indexed as far as they parse):", len(errs))
		for _, e := range errs {
			w.line("  %s", e)
		}
	}
	a.text = w.String("the lists are in the structured result")
	return a
}

// Definitions lists every definition in the index, sorted by file and
// line (for measurement programs).
func (x *Index) Definitions() []Symbol {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []Symbol
	for _, f := range x.files {
		for i := range f.Defs {
			out = append(out, symbolOf(Target{f, int32(i)}))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// macroUse names the first macro t's body invokes ("f invokes macro M"),
// or "".
func (x *Index) macroUse(t Target) string {
	f, d := t.File, t.D()
	if !functionLike[d.Kind] {
		return ""
	}
	for ri := range f.Refs {
		r := &f.Refs[ri]
		if r.Kind != RefCall || r.at < d.start || r.at >= d.end {
			continue
		}
		for _, u := range x.resolve(f, r).Targets {
			if u.D().Kind == "macro" {
				return qualified(t) + " invokes macro " + qualified(u) + " (" + u.File.Rel + ":" + itoa(int(u.D().Line)) + ")"
			}
		}
	}
	return ""
}
