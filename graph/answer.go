package graph

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Answer is one query's result, as data: the structured result a client
// reads (the JSON fields) and what the text needs beyond it (the fields
// the JSON leaves out). graph/answertext writes the text an agent reads.
type Answer struct {
	Op          string     `json:"operation"`
	Symbol      *Symbol    `json:"symbol,omitempty" jsonschema:"the definition the question was about"`
	Candidates  []Symbol   `json:"candidates,omitempty" jsonschema:"when the symbol was ambiguous: the definitions it may mean, ranked; ask again with file and line"`
	Definitions []Symbol   `json:"definitions,omitempty"`
	Sites       []Site     `json:"sites,omitempty" jsonschema:"callers: call sites; callees: calls made"`
	Values      []Site     `json:"values,omitempty" jsonschema:"callers: places the symbol is passed or stored as a value (calls through them are not seen); callees: the functions it passes or stores as values"`
	TypeUses    []Site     `json:"type_uses,omitempty" jsonschema:"callers of a type: where it is used as a type (annotations, bases), apart from its constructions"`
	Counts      Counts     `json:"counts"`
	Depths      []Depth    `json:"depths,omitempty"`
	LowerBound  bool       `json:"lower_bound,omitempty" jsonschema:"the true answer may hold more: the walk met value uses, candidates it did not follow, or an index still building"`
	Index       IndexState `json:"index"`
	Status      *Status    `json:"status,omitempty"`
	// File is outline's file, or the file whose impact was walked.
	File *FileInfo `json:"file,omitempty" jsonschema:"outline's file, or the file whose impact was walked"`
	// Confidence: what was measured of each class of edges the answer
	// holds, per language (graph/confidence.json).
	Confidence []Confidence `json:"confidence,omitempty" jsonschema:"callers, callees and impact: for each class of edges in the answer and each language, the precision (and recall) the accuracy benchmarks measured of that class; weigh an edge by its class's figures"`

	// Past here, data for the text only: the structured result is the
	// tool's contract and stays as it is.

	// Query is the name or query asked (find; an ambiguous name).
	Query string `json:"-"`
	// Lines go with the definitions outline, find and an ambiguous name
	// list (Definitions, or Candidates), one for each, in order.
	Lines []DefLine `json:"-"`
	// Matches counts find's matches; Definitions holds the best of them.
	Matches int `json:"-"`
	// Unplaced is the first of the calls named like a callers symbol that
	// lead to no definition (Counts.Unresolved counts them).
	Unplaced *Site `json:"-"`
	// Dispatched is the first of the calls counts.dispatch counts.
	Dispatched *Site `json:"-"`
	// NameOnlyReceivers: the symbol is a method in a package-scoped
	// language, whose candidate sites are calls of its name on receivers
	// of a type the index does not know.
	NameOnlyReceivers bool `json:"-"`
	// MaxDepth is the depth impact was asked to walk.
	MaxDepth int `json:"-"`
	// NotFollowed counts impact's candidate dependents, listed but not
	// walked further.
	NotFollowed int `json:"-"`
	// Macro is a definition impact walked that invokes a macro: calls in
	// the macro's expansion are not seen.
	Macro *MacroUse `json:"-"`
}

// DefLine is what a list shows of a definition besides its Symbol.
type DefLine struct {
	Code  string // its first line, trimmed
	Local string // outline: its name within the file (Type.Method)
	Depth int    // outline: how deep it nests
}

// FileInfo is what an answer says of one file.
type FileInfo struct {
	Rel         string `json:"path"`
	Language    string `json:"language"`
	Definitions int    `json:"definitions"`
	Errors      int    `json:"syntax_errors,omitempty" jsonschema:"syntax errors: the file is indexed as far as it parses"`
	FirstError  int    `json:"first_error_line,omitempty" jsonschema:"the line of the first syntax error"`
}

// MacroUse is a definition whose body invokes a macro.
type MacroUse struct {
	In    string // the definition, qualified
	Macro string // the macro, qualified
	File  string // where the macro is defined
	Line  int
}

// Counts split an answer's edges by how they were resolved.
type Counts struct {
	Exact     int `json:"exact"`
	Import    int `json:"import"`
	Candidate int `json:"candidate"`
	// Interface counts calls through an interface to its own method
	// (dispatch: what runs is one of its implementations).
	Interface int `json:"interface,omitempty"`
	// Implementation counts calls through an interface (or a base
	// class's method) that may run this definition.
	Implementation int `json:"implementation,omitempty"`
	Unresolved     int `json:"unresolved"`
	Values         int `json:"values,omitempty"`
	TypeUses       int `json:"type_uses,omitempty"`
	Elsewhere      int `json:"elsewhere,omitempty" jsonschema:"references with this name that resolve to other definitions"`
	// Dispatch counts calls of this name on values of a type declared
	// outside the index that may be an interface (net.Conn): not listed,
	// and the answer is a lower bound.
	Dispatch int `json:"dispatch,omitempty" jsonschema:"calls of this name through a type declared outside the index that may be an interface, so may run this method: not listed; the answer is a lower bound"`
	Shown    int `json:"shown"`
}

func (c *Counts) add(class string) {
	switch class {
	case Exact:
		c.Exact++
	case ViaImport:
		c.Import++
	case Candidate:
		c.Candidate++
	case Interface:
		c.Interface++
	case Implementation:
		c.Implementation++
	default:
		c.Unresolved++
	}
}

// Total counts the edges of every class.
func (c Counts) Total() int {
	return c.Exact + c.Import + c.Candidate + c.Interface + c.Implementation + c.Unresolved
}

// IndexState says how complete the index was when the answer was made.
type IndexState struct {
	Ready   bool `json:"ready"`
	Files   int  `json:"files" jsonschema:"files indexed"`
	Found   int  `json:"found" jsonschema:"files the build found"`
	Synced  int  `json:"synced,omitempty" jsonschema:"files re-read before answering because they changed"`
	Pending int  `json:"pending,omitempty" jsonschema:"files changed outside the tools still being re-read in the background: the answer does not reflect them yet; ask again in a moment for the full answer"`
	Ahead   int  `json:"ahead,omitempty" jsonschema:"the answer was computed, ahead of the index still building, from this many files: those whose text holds the name and the folders that define it"`
	// NamesOnly: find ahead of the index lists the names that hold the
	// query; names holding only its letters in order wait for the index.
	NamesOnly bool `json:"names_only,omitempty" jsonschema:"find answered ahead of the index: names holding the query's letters only in order are left out until the index is ready"`
	// The build's progress then, as Index.Progress gives it.
	Done  int `json:"-"`
	Total int `json:"-"`
}

// lines reads files' lines for quoting, once per answer.
type lines struct {
	src   LineSource
	snap  *snap.Snapshot
	files map[string][][]byte
}

// sharedLines is a LineSource that keeps files' lines between answers
// (index.Index.Lines): those of e's file when it is still as e was read,
// ok false otherwise.
type sharedLines interface {
	Lines(e *snap.Entry) (lines [][]byte, ok bool)
}

func (v View) lines() lines { return lines{src: v.Lines, snap: v.Snap} }

func (v View) lineOf(rel string, n int) string {
	l := v.lines()
	return l.get(rel, n)
}

func (l *lines) get(rel string, n int) string {
	if l.files == nil {
		l.files = map[string][][]byte{}
	}
	ls, ok := l.files[rel]
	if !ok {
		if sh, can := l.src.(sharedLines); can && l.snap != nil {
			if e := l.snap.Entry(rel); e != nil {
				ls, ok = sh.Lines(e)
			}
		}
		if !ok {
			data, err := l.src.ReadFile(rel)
			if err == nil {
				ls = bytes.Split(data, []byte("\n"))
			}
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

// quoteLine quotes a source line in an error message.
func quoteLine(s string) string {
	if s == "" {
		return "(empty)"
	}
	return "`" + s + "`"
}

// ambiguous answers a spec that names several definitions.
func (v View) ambiguous(op string, spec Spec, ts []snap.Target, st IndexState) *Answer {
	a := &Answer{Op: op, Index: st, Query: spec.Symbol}
	l := v.lines()
	for _, t := range ts {
		s := symbolOf(t)
		a.Candidates = append(a.Candidates, s)
		a.Lines = append(a.Lines, DefLine{Code: l.get(s.File, s.Line)})
	}
	return a
}

// one locates the single definition a spec names; when it names several,
// the answer is the ranked list (ambiguous).
func (v View) one(op string, spec Spec) (snap.Target, IndexState, *Answer, error) {
	st := v.State
	ts, err := v.locate(spec)
	if err != nil {
		return snap.Target{}, st, nil, err
	}
	if len(ts) > 1 {
		return snap.Target{}, st, v.ambiguous(op, spec, ts, st), nil
	}
	return ts[0], st, nil, nil
}

// Outline lists a file's definitions as a tree: in its order, each with
// its depth (Lines).
func Outline(v View, file string) (*Answer, error) {
	file = strings.TrimPrefix(filepath.ToSlash(file), "./")
	f := v.Snap.Entry(file)
	if f == nil {
		return nil, v.fileProblem(file)
	}
	st := v.State
	a := &Answer{Op: "outline", Index: st, File: &FileInfo{Rel: f.Rel, Language: f.Lang.ID, Definitions: len(f.Defs), Errors: f.Errors}}
	if f.Errors > 0 {
		a.File.FirstError = f.ErrorAt[0]
	}
	// Nesting by range; Go methods sit under their type when it is here.
	depth := make([]int, len(f.Defs))
	var stack []int
	for i := range f.Defs {
		d := &f.Defs[i]
		for len(stack) > 0 && f.Defs[stack[len(stack)-1]].End <= d.Start {
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
		if record.ClassLike(f.Defs[i].Kind) && depth[i] == 0 {
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
	a.Definitions = make([]Symbol, 0, len(f.Defs))
	a.Lines = make([]DefLine, 0, len(f.Defs))
	l := v.lines()
	var emit func(i, indent int)
	emit = func(i, indent int) {
		d := &f.Defs[i]
		a.Definitions = append(a.Definitions, symbolOf(snap.Target{File: f, Def: int32(i)}))
		a.Lines = append(a.Lines, DefLine{Code: l.get(f.Rel, int(d.Line)), Local: d.Qualified(), Depth: indent})
		for _, j := range under[i] {
			emit(j, indent+1)
		}
	}
	for _, i := range top {
		emit(i, depth[i])
	}
	a.Counts.Shown = len(a.Definitions)
	return a, nil
}

// Find ranks definitions whose names match query (exact, prefix,
// substring, then letters in order), optionally of one kind.
func Find(v View, query, kind string, limit int) (*Answer, error) {
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
		t     snap.Target
		score int
	}
	var hits []hit
	otherKinds := map[string]int{} // matches left out by kind
	for f := range v.Snap.Files() {
		for i := range f.Defs {
			d := &f.Defs[i]
			s := nameScore(d.Name, name, low)
			if s == 0 || s == scoreLettersInOrder && v.State.NamesOnly {
				continue
			}
			if kind != "" && d.Kind != kind {
				if qual == "" || qualifies(snap.Target{File: f, Def: int32(i)}, qual) {
					otherKinds[d.Kind]++
				}
				continue
			}
			t := snap.Target{File: f, Def: int32(i)}
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
	st := v.State
	a := &Answer{Op: "find", Index: st, Query: q, Matches: len(hits)}
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
		return nil, &LookupError{fmt.Sprintf("no definition matches %q%s", q, v.nearNames(name))}
	}
	shown := min(limit, len(hits))
	l := v.lines()
	for _, h := range hits[:shown] {
		s := symbolOf(h.t)
		a.Definitions = append(a.Definitions, s)
		a.Lines = append(a.Lines, DefLine{Code: l.get(s.File, s.Line)})
	}
	a.Counts.Shown = shown
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
func Callers(v View, spec Spec) (*Answer, error) {
	t, st, amb, err := v.one("callers", spec)
	if amb != nil || err != nil {
		return amb, err
	}
	sym := symbolOf(t)
	cs := v.callersOf([]snap.Target{t})[t]
	calls, values, elsewhere, nowhere := cs.calls, cs.values, cs.elsewhere, cs.nowhere
	a := &Answer{Op: "callers", Symbol: &sym, Index: st, Sites: []Site{}}
	a.Counts.TypeUses = len(cs.types)
	for _, s := range calls {
		a.Counts.add(s.Class)
	}
	a.Counts.Values, a.Counts.Elsewhere = len(values), elsewhere
	a.Counts.Unresolved = len(nowhere)
	l := v.lines()
	for _, s := range calls {
		s.Code = l.get(s.File, s.Line)
		a.Sites = append(a.Sites, s)
	}
	a.Counts.Shown = len(a.Sites)
	if len(values) > 0 {
		a.LowerBound = true
		for _, s := range values {
			s.Code = l.get(s.File, s.Line)
			a.Values = append(a.Values, s)
		}
	}
	for _, s := range cs.types {
		s.Code = l.get(s.File, s.Line)
		a.TypeUses = append(a.TypeUses, s)
	}
	if len(nowhere) > 0 {
		s := nowhere[0]
		s.Code = l.get(s.File, s.Line)
		a.Unplaced = &s
	}
	if len(cs.dispatch) > 0 {
		a.Counts.Dispatch = len(cs.dispatch)
		s := cs.dispatch[0]
		s.Code = l.get(s.File, s.Line)
		a.Dispatched = &s
		a.LowerBound = true
	}
	a.NameOnlyReceivers = t.D().Container != "" && t.File.Lang.Scope == "directory"
	a.Confidence = confidenceOf(classesOf(a.Sites, a.Values))
	a.LowerBound = a.LowerBound || !st.Ready
	return a, nil
}

// Callees answers what the symbol calls.
func Callees(v View, spec Spec) (*Answer, error) {
	t, st, amb, err := v.one("callees", spec)
	if amb != nil || err != nil {
		return amb, err
	}
	sym := symbolOf(t)
	sites, values := v.callees(t)
	a := &Answer{Op: "callees", Symbol: &sym, Index: st, Sites: []Site{}}
	for _, s := range sites {
		a.Counts.add(s.Class)
	}
	l := v.lines()
	for _, s := range sites {
		s.Code = l.get(s.File, s.Line)
		a.Sites = append(a.Sites, s)
	}
	a.Counts.Shown = len(a.Sites)
	a.Counts.Values = len(values)
	for _, s := range values {
		s.Code = l.get(s.File, s.Line)
		a.Values = append(a.Values, s)
	}
	a.Confidence = confidenceOf(classesOf(a.Sites, a.Values))
	return a, nil
}

// Depth is one ring of an impact walk.
type Depth struct {
	Depth      int         `json:"depth"`
	Counts     Counts      `json:"counts"`
	Dependents []Dependent `json:"dependents"`
	Truncated  int         `json:"truncated,omitempty" jsonschema:"dependents at this depth not listed"`
	// NotFollowed says, by reason, what the ring met and did not walk on
	// from; any makes the ring (and the answer) a lower bound.
	NotFollowed []Unfollowed `json:"not_followed,omitempty" jsonschema:"what this ring met and did not walk on from, by reason, with how many; any makes the ring a lower bound"`
	LowerBound  bool         `json:"lower_bound,omitempty" jsonschema:"this ring may miss dependents: see not_followed"`
}

// Unfollowed counts what an impact ring did not follow for one reason.
type Unfollowed struct {
	Reason string `json:"reason" jsonschema:"candidate (name-only call sites, listed, not walked), candidate value (a function value of a name-only match), value calls (a function value passed or stored: its passer is a dependent, but the calls later made through it by whatever receives it are not followed, but a known callee's calls of the parameter it is passed as are), dispatch (calls through a type declared outside the index that may be an interface), implementations (of an interface method: ask impact of each)"`
	Count  int    `json:"count" jsonschema:"call sites, or for implementations the methods"`
}

// The reasons an impact ring does not follow something.
const (
	notCandidate      = "candidate"
	notCandidateValue = "candidate value"
	notValueCalls     = "value calls"
	notDispatch       = "dispatch"
	notImplementation = "implementations"
)

type depNodeKey struct {
	f *snap.Entry
	d int32
}

// Dependent is one definition (or a file's top level) that depends on
// the walk's previous ring, with the call that connects them.
type Dependent struct {
	Symbol Symbol `json:"symbol"`
	Via    Site   `json:"via"`
	On     string `json:"on" jsonschema:"the definition it calls"`
	// Value: Via passes or stores On as a function value (sort.Slice(xs,
	// less), http.HandleFunc("/", h)) rather than calling it.
	Value bool `json:"value,omitempty" jsonschema:"via passes or stores the definition as a function value (a callback) instead of calling it"`
	// More are its other candidate calls on the ring before, when Via is
	// a candidate too: any of them may be the true call.
	More     []DepSite `json:"more,omitempty" jsonschema:"when via is a candidate: the dependent's other candidate calls on the ring before (at most 8); any of them may be the true call"`
	MoreLeft int       `json:"more_left,omitempty" jsonschema:"candidate calls past the 8 in more"`
}

// DepSite is one more call by which a dependent may depend on the ring
// before.
type DepSite struct {
	Site
	On string `json:"on" jsonschema:"the definition it calls"`
}

// maxMore bounds a dependent's More.
const maxMore = 8

// Impact walks callers outward from a symbol, or from every definition in
// a file, to depth.
func Impact(v View, spec Spec, depth, perDepth int) (*Answer, error) {
	if depth <= 0 {
		depth = 3
	}
	if perDepth <= 0 {
		perDepth = 30
	}
	st := v.State
	var start []snap.Target
	var fi *FileInfo
	if spec.Symbol == "" && spec.Line == 0 && spec.File != "" {
		file := strings.TrimPrefix(filepath.ToSlash(spec.File), "./")
		f := v.Snap.Entry(file)
		if f == nil {
			return nil, v.fileProblem(file)
		}
		for i := range f.Defs {
			start = append(start, snap.Target{File: f, Def: int32(i)})
		}
		fi = &FileInfo{Rel: f.Rel, Language: f.Lang.ID, Definitions: len(f.Defs)}
	} else {
		t, _, amb, err := v.one("impact", spec)
		if amb != nil || err != nil {
			return amb, err
		}
		start = []snap.Target{t}
	}
	a := &Answer{Op: "impact", Index: st, File: fi, MaxDepth: depth}
	if len(start) == 1 {
		s := symbolOf(start[0])
		a.Symbol = &s
	}
	visited := map[depNodeKey]bool{}
	inStart := map[*snap.Entry]bool{}
	for _, t := range start {
		visited[depNodeKey{t.File, t.Def}] = true
		if len(start) > 1 {
			inStart[t.File] = true
		}
	}
	frontier := start
	var macro *MacroUse // a walked definition that invokes a macro
	// Each dependent's class and language as last counted: the classes
	// the answer's confidence covers.
	depClass := map[depNodeKey]langClass{}
	l := v.lines()
	for dep := 1; dep <= depth && len(frontier) > 0; dep++ {
		ring := Depth{Depth: dep, Dependents: []Dependent{}}
		var next []snap.Target
		// This ring's dependents whose first call is a candidate: their
		// index in ring.Dependents, -1 past the limit.
		weak := map[depNodeKey]int{}
		for _, t := range frontier {
			if macro == nil {
				macro = v.macroUse(t)
			}
		}
		sets := v.callersOf(frontier)
		// Candidate sites per dependent not (yet) made sure.
		candSites := map[depNodeKey]int{}
		not := map[string]int{}
		for _, t := range frontier {
			cs := sets[t]
			if d := t.D(); d.Member() && record.FunctionLike(d.Kind) {
				// A change to an interface's method changes what each
				// implementation must be; their callers are not walked
				// (ask impact of each), only counted.
				if c, ok := v.R.ContainerType(t); ok && (c.D().Kind == "interface" || c.D().Kind == "trait") {
					not[notImplementation] += len(v.R.Implementations(t))
				}
			}
			// A type's users depend on it as much as a function's callers;
			// a function passing t as a value (a callback) depends on it
			// as much as one calling it.
			calls := slices.Concat(cs.calls, cs.types)
			// A call through the language's own interface (Go's
			// err.Error()) may run t as an implementation's call does:
			// walked on as a candidate that is dispatch.
			for _, s := range cs.dispatch {
				if s.dispatch {
					s.Class, s.Rank, s.Of = Candidate, 1, 1
					s.Reason = s.Why + "; the language's own interface, of this one method: " + t.Qualified() + " satisfies it and may run here"
					s.Why = ""
					calls = append(calls, s)
					continue
				}
				ring.Counts.Dispatch++
				not[notDispatch]++
				if a.Dispatched == nil {
					s.Code = l.get(s.File, s.Line)
					a.Dispatched = &s
				}
			}
			nCalls := len(calls)
			calls = append(calls, cs.values...)
			ring.Counts.Values += len(cs.values)
			for si, s := range calls {
				value := si >= nCalls
				if inStart[s.fileRef] {
					continue // a file's impact is on other files
				}
				if value && !follows(s) {
					not[notCandidateValue]++
					continue
				}
				if value && !s.reached {
					// Whatever receives the value may call it: those calls
					// are not seen (but a known callee's calls of the
					// parameter it is passed as, which are in calls).
					not[notValueCalls]++
				}
				key := depNodeKey{s.fileRef, -1}
				var dsym Symbol
				if s.hasEncl {
					key.d = s.encl.Def
					dsym = symbolOf(s.encl)
				} else {
					dsym = Symbol{Name: "(top level)", Qualified: s.File + " (top level)", Kind: "file", File: s.File, Line: s.Line, EndLine: s.Line, Language: s.fileRef.Lang.ID}
				}
				if s.Class == Candidate && !s.dispatch && !s.passed {
					candSites[key]++
				}
				if visited[key] {
					i, ok := weak[key]
					switch {
					case !ok:
					case follows(s):
						// A sure call makes the dependent sure: counted and
						// walked as such.
						delete(weak, key)
						ring.Counts.Candidate--
						ring.Counts.add(s.Class)
						depClass[key] = s.langClass()
						a.NotFollowed--
						if i >= 0 {
							s.Code = l.get(s.File, s.Line)
							ring.Dependents[i] = Dependent{Symbol: ring.Dependents[i].Symbol, Via: s, On: t.Qualified(), Value: value}
						}
						if s.hasEncl {
							next = append(next, s.encl)
						}
					case s.Class == Candidate && i >= 0:
						d := &ring.Dependents[i]
						if len(d.More) < maxMore {
							s.Code = l.get(s.File, s.Line)
							d.More = append(d.More, DepSite{Site: s, On: t.Qualified()})
						} else {
							d.MoreLeft++
						}
					}
					continue
				}
				visited[key] = true
				ring.Counts.add(s.Class)
				depClass[key] = s.langClass()
				i := -1
				if len(ring.Dependents) < perDepth {
					s.Code = l.get(s.File, s.Line)
					i = len(ring.Dependents)
					ring.Dependents = append(ring.Dependents, Dependent{Symbol: dsym, Via: s, On: t.Qualified(), Value: value})
				} else {
					ring.Truncated++
				}
				if !follows(s) {
					weak[key] = i
				}
				if follows(s) {
					if s.hasEncl {
						next = append(next, s.encl)
					}
				} else {
					a.NotFollowed++
				}
			}
		}
		for key := range weak {
			not[notCandidate] += candSites[key]
		}
		for _, r := range []string{notCandidate, notCandidateValue, notValueCalls, notDispatch, notImplementation} {
			if not[r] > 0 {
				ring.NotFollowed = append(ring.NotFollowed, Unfollowed{Reason: r, Count: not[r]})
			}
		}
		ring.LowerBound = len(ring.NotFollowed) > 0
		ring.Counts.Shown = len(ring.Dependents)
		a.Counts.Exact += ring.Counts.Exact
		a.Counts.Import += ring.Counts.Import
		a.Counts.Candidate += ring.Counts.Candidate
		a.Counts.Interface += ring.Counts.Interface
		a.Counts.Implementation += ring.Counts.Implementation
		a.Counts.Dispatch += ring.Counts.Dispatch
		a.Counts.Values += ring.Counts.Values
		a.Depths = append(a.Depths, ring)
		frontier = next
	}
	for _, t := range frontier { // the last ring, not walked further
		if macro == nil {
			macro = v.macroUse(t)
		}
	}
	a.Macro = macro
	set := map[langClass]bool{}
	for _, lc := range depClass {
		set[lc] = true
	}
	a.Confidence = confidenceOf(set)
	a.LowerBound = a.Counts.Values > 0 || a.NotFollowed > 0 || a.Counts.Dispatch > 0 || !st.Ready || macro != nil
	for _, r := range a.Depths {
		a.LowerBound = a.LowerBound || r.LowerBound
	}
	return a, nil
}

// sure says whether an impact walk follows an edge of class: a call of
// the definition itself, of the interface method it declares (a caller
// through the interface depends on its declaration), or through an
// interface (or a base class's method) the definition implements (what
// runs there may be this definition).
func sure(class string) bool {
	return class == Exact || class == ViaImport || class == Interface || class == Implementation
}

// follows says whether an impact walk walks on from a site: a sure edge,
// or a candidate that is dispatch through an interface the definition may
// satisfy (w.Write with w an io.Writer), which may run it as an
// implementation's call does.
func follows(s Site) bool {
	return sure(s.Class) || s.Class == Candidate && (s.dispatch || s.passed)
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
	FromStore  int            `json:"from_store,omitempty" jsonschema:"files whose records the build took from the graph store, not parsed"`
	Freshness  string         `json:"freshness" jsonschema:"how changes made outside the tools are noticed"`
	MemoryMiB  float64        `json:"memory_mib" jsonschema:"estimated size of the index's records"`
	Supported  []string       `json:"supported"`
	Generation uint64         `json:"generation"`
	// StoreError says why the graph store is not read or written.
	StoreError string `json:"-"`
	// BuildError says why the build stopped short (its walk failed).
	BuildError string `json:"-"`
}

// StatusAnswer describes what is indexed: v's snapshot, and st, what the index
// says of itself (index.Index.Stats).
func StatusAnswer(v View, st index.Stats) *Answer {
	s := &Status{Root: st.Root, Ready: v.State.Ready, Files: v.Snap.Len(), Found: st.Found, Languages: map[string]int{}, Skipped: map[string]int{},
		Refreshed: st.Refreshed, FromStore: st.FromStore, MemoryMiB: float64(v.Snap.Bytes()) / (1 << 20), Supported: append([]string{}, v.Snap.Langs.IDs()...), Generation: v.Snap.Gen}
	var errs []string
	for f := range v.Snap.Files() {
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
	v.Snap.EachSkipped(func(rel, why string) {
		key := why
		if i := strings.Index(key, ":"); i > 0 && !strings.HasPrefix(key, "not indexed") {
			key = key[:i]
		}
		s.Skipped[key]++
		skips = append(skips, rel+": "+why)
	})
	sort.Strings(skips)
	s.SkipList = skips
	if s.Ready {
		s.BuildTime = st.Took.Round(time.Millisecond).String()
	}
	s.Freshness = "file events (inotify), checked before every answer"
	if !st.Watching {
		s.Freshness = "every file's size and modification time, checked before every answer (" + st.WatchNote + ")"
	}
	s.StoreError, s.BuildError = st.StoreError, st.BuildError
	return &Answer{Op: "status", Index: v.State, Status: s}
}

// Definitions lists every definition in the index, sorted by file and
// line (for measurement programs).
func Definitions(v View) []Symbol {
	var out []Symbol
	for f := range v.Snap.Files() {
		for i := range f.Defs {
			out = append(out, symbolOf(snap.Target{File: f, Def: int32(i)}))
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

// macroUse is the first macro t's body invokes, or nil.
func (v View) macroUse(t snap.Target) *MacroUse {
	f, d := t.File, t.D()
	if !record.FunctionLike(d.Kind) {
		return nil
	}
	for ri := range f.Refs {
		r := &f.Refs[ri]
		if r.Kind != record.RefCall || r.At < d.Start || r.At >= d.End {
			continue
		}
		for _, u := range v.R.Resolve(f, r).Targets {
			if u.D().Kind == "macro" {
				return &MacroUse{In: t.Qualified(), Macro: u.Qualified(), File: u.File.Rel, Line: int(u.D().Line)}
			}
		}
	}
	return nil
}
