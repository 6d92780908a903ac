package graph

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"

	"github.com/builtin-tools/builtin-tools/internal/similar"
)

// Spec names a symbol: a name, a qualified name (Type.Method, pkg.Func,
// dir/file.go:Func), or a file with a line and/or a name on it.
type Spec struct {
	Symbol string
	File   string // relative to the root
	Line   int
}

// LookupError is a symbol that could not be found; its message says what
// to try instead.
type LookupError struct{ Msg string }

func (e *LookupError) Error() string { return e.Msg }

// Symbol is a definition as results show it.
type Symbol struct {
	Name      string `json:"name"`
	Qualified string `json:"qualified"`
	Kind      string `json:"kind"`
	File      string `json:"file"`
	Line      int    `json:"line"`
	EndLine   int    `json:"end_line"`
	Language  string `json:"language"`
	Reason    string `json:"reason,omitempty" jsonschema:"why a candidate is ranked where it is"`
}

func symbolOf(t snap.Target) Symbol {
	d := t.D()
	return Symbol{Name: d.Name, Qualified: t.Qualified(), Kind: d.Kind, File: t.File.Rel, Line: int(d.Line), EndLine: int(d.EndLine), Language: t.File.Lang.ID}
}

// locate finds the definitions a spec names. More than one means the spec
// is ambiguous; the caller answers with them as candidates.
func (v View) locate(s Spec) ([]snap.Target, error) {
	sym := strings.TrimSpace(s.Symbol)
	file := strings.TrimPrefix(filepath.ToSlash(strings.TrimSpace(s.File)), "./")
	if file == "" {
		if i := strings.LastIndex(sym, ":"); i > 0 && !strings.Contains(sym[:i], ":") && v.Snap.Langs.ForFile(sym[:i]) != nil {
			file, sym = sym[:i], sym[i+1:]
		}
	}
	if file != "" {
		f := v.Snap.Entry(file)
		if f == nil {
			return nil, v.fileProblem(file)
		}
		return v.locateInFile(f, sym, s.Line)
	}
	if sym == "" {
		return nil, &LookupError{"name a symbol (a name, Type.Method or pkg.Func), or a file and line"}
	}
	name, qual := sym, ""
	for _, sep := range []string{"::", "."} {
		if i := strings.LastIndex(sym, sep); i > 0 {
			name, qual = sym[i+len(sep):], sym[:i]
			break
		}
	}
	var out []snap.Target
	best := 0
	for _, l := range v.Snap.Langs.All() {
		for _, id := range v.Snap.Tables(l).Defs.Get(name) {
			g := v.Snap.ByID(id)
			for _, i := range g.DefsNamed(name) {
				t := snap.Target{File: g, Def: i}
				level := 2
				if qual != "" {
					level = qualifyLevel(t, qual)
				}
				switch {
				case level == 0 || level < best:
				case level > best:
					best, out = level, []snap.Target{t}
				default:
					out = append(out, t)
				}
			}
		}
	}
	if len(out) == 0 {
		near := ""
		if qual != "" {
			near = v.nearQualified(qual, name)
		}
		if near == "" {
			near = v.nearNames(name)
		}
		return nil, &LookupError{fmt.Sprintf("no definition named %q in the index%s", sym, near)}
	}
	outcome.SortTargets(out)
	return out, nil
}

// qualifies says whether qual (Type, pkg, pkg.Type, a folder, a module
// file) names t's container or package.
func qualifies(t snap.Target, qual string) bool { return qualifyLevel(t, qual) > 0 }

// qualifyLevel says how well qual names t's place: 2 by its package,
// folder or container, 1 only by its file's name (a Python module), 0 not
// at all.
func qualifyLevel(t snap.Target, qual string) int {
	d := t.D()
	parts := strings.Split(strings.ReplaceAll(qual, "::", "."), ".")
	last := parts[len(parts)-1]
	pkgLevel := func(p string) int {
		switch {
		case p == t.File.Package || p == path.Base(t.File.Dir) || p == t.File.Dir || strings.HasSuffix(t.File.Dir, "/"+p):
			return 2
		case p == strings.TrimSuffix(path.Base(t.File.Rel), path.Ext(t.File.Rel)):
			return 1
		}
		return 0
	}
	if d.Container != "" {
		if last != d.Container {
			return 0
		}
		if len(parts) == 1 {
			return 2
		}
		return pkgLevel(strings.Join(parts[:len(parts)-1], "."))
	}
	return max(pkgLevel(qual), pkgLevel(strings.Join(parts, "/")))
}

// headOn is the definitions named sym whose head, not their first line,
// is the line: the line of the name node, or the one right after it when
// the value written there repeats the name (X.prototype.m =⏎ function m()).
func (v View) headOn(f *snap.Entry, sym string, line int) []snap.Target {
	name := record.LastSegment(sym)
	if !containsWord(v.lineOf(f.Rel, line), name) {
		return nil
	}
	data, err := v.Lines.ReadFile(f.Rel)
	if err != nil {
		return nil
	}
	var out []snap.Target
	for i := range f.Defs {
		d := &f.Defs[i]
		if int(d.Line) >= line || line > int(d.EndLine) || d.Name != name || (sym != name && d.Qualified() != sym) || int(d.NameAt) > len(data) {
			continue
		}
		nameLine := 1 + bytes.Count(data[:d.NameAt], []byte("\n"))
		if line == nameLine || line == nameLine+1 {
			out = append(out, snap.Target{File: f, Def: int32(i)})
		}
	}
	return out
}

// containsWord says s has w with no identifier character either side.
func containsWord(s, w string) bool {
	for from := 0; w != ""; {
		i := strings.Index(s[from:], w)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(w)
		if (i == 0 || !identByte(s[i-1])) && (j == len(s) || !identByte(s[j])) {
			return true
		}
		from = i + 1
	}
	return false
}

func identByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (v View) locateInFile(f *snap.Entry, sym string, line int) ([]snap.Target, error) {
	if line > 0 {
		var onLine []snap.Target
		for i := range f.Defs {
			d := &f.Defs[i]
			if int(d.Line) == line && (sym == "" || strings.Contains(d.Name, sym) || strings.Contains(d.Qualified(), sym)) {
				onLine = append(onLine, snap.Target{File: f, Def: int32(i)})
			}
		}
		if len(onLine) > 0 {
			return onLine, nil
		}
		if sym != "" {
			// A reference on the line: the symbol it leads to.
			for i := range f.Refs {
				r := &f.Refs[i]
				if int(r.Line) == line && strings.Contains(f.RefName(r), sym) {
					res := v.R.Resolve(f, r)
					if len(res.Targets) > 0 {
						return res.Targets, nil
					}
					return nil, &LookupError{fmt.Sprintf("%s:%d calls %s, which has no definition in the index (%s)", f.Rel, line, f.RefName(r), res.Why)}
				}
			}
			// A definition that starts above the line its name is on (a
			// decorator above it, X.prototype.m =⏎ function m() {).
			if ts := v.headOn(f, sym, line); len(ts) > 0 {
				return ts, nil
			}
			// A declaration without a body (a TypeScript overload
			// signature, a C prototype, a method declared in a C++ class):
			// the definition it declares.
			if ts := v.R.Declared(f, sym, line, v.lineOf(f.Rel, line)); len(ts) > 0 {
				return ts, nil
			}
			return nil, &LookupError{fmt.Sprintf("%q is not on line %d of %s; that line reads: %s%s", sym, line, f.Rel, quoteLine(v.lineOf(f.Rel, line)), v.nearDefs(f, line))}
		}
		// No name: the innermost definition around the line.
		best := -1
		for i := range f.Defs {
			d := &f.Defs[i]
			if int(d.Line) <= line && line <= int(d.EndLine) && (best < 0 || d.Line >= f.Defs[best].Line) {
				best = i
			}
		}
		if best < 0 {
			return nil, &LookupError{fmt.Sprintf("line %d of %s is in no definition; it reads: %s%s", line, f.Rel, quoteLine(v.lineOf(f.Rel, line)), v.nearDefs(f, line))}
		}
		return []snap.Target{{File: f, Def: int32(best)}}, nil
	}
	if sym == "" {
		return nil, &LookupError{"with a file, give a line or a symbol name"}
	}
	var exact, partial []snap.Target
	for i := range f.Defs {
		d := &f.Defs[i]
		switch {
		case d.Name == sym || d.Qualified() == sym:
			exact = append(exact, snap.Target{File: f, Def: int32(i)})
		case strings.Contains(d.Qualified(), sym):
			partial = append(partial, snap.Target{File: f, Def: int32(i)})
		}
	}
	if len(exact) > 0 {
		return exact, nil
	}
	if len(partial) > 0 {
		return partial, nil
	}
	return nil, &LookupError{fmt.Sprintf("%s defines nothing named %q%s", f.Rel, sym, v.nearInFile(f, sym))}
}

func (v View) fileProblem(file string) error {
	if v.Snap.Langs.ForFile(file) == nil {
		return &LookupError{fmt.Sprintf("%s is not in a language the code graph reads; supported: %s", file, strings.Join(v.Snap.Langs.IDs(), ", "))}
	}
	if why, ok := v.Snap.Skipped(file); ok {
		return &LookupError{fmt.Sprintf("%s is not indexed: %s", file, why)}
	}
	return &LookupError{fmt.Sprintf("%s is not in the index (no such file, or left out by .gitignore, hidden or vendored folders)", file)}
}

func (v View) nearDefs(f *snap.Entry, line int) string {
	var near []string
	for i := range f.Defs {
		d := &f.Defs[i]
		if abs(int(d.Line)-line) <= 30 {
			near = append(near, fmt.Sprintf("%s (line %d)", d.Qualified(), d.Line))
		}
		if len(near) == 8 {
			break
		}
	}
	if len(near) == 0 {
		return ""
	}
	return "; definitions near it: " + strings.Join(near, ", ")
}

func (v View) nearInFile(f *snap.Entry, sym string) string {
	var near []string
	low := strings.ToLower(sym)
	for i := range f.Defs {
		d := &f.Defs[i]
		if strings.Contains(strings.ToLower(d.Name), low) || editDistance(strings.ToLower(d.Name), low) <= 2 {
			near = append(near, fmt.Sprintf("%s (line %d)", d.Qualified(), d.Line))
		}
	}
	if len(near) == 0 {
		return ""
	}
	if len(near) > 8 {
		near = near[:8]
	}
	return "; similar: " + strings.Join(near, ", ")
}

// nearNames suggests definitions whose names look like name.
func (v View) nearNames(name string) string {
	type cand struct {
		name  string
		score int
	}
	low := strings.ToLower(name)
	best := map[string]int{}
	for _, l := range v.Snap.Langs.All() {
		v.Snap.Tables(l).Defs.Each(func(n string, _ []snap.FileID) bool {
			s := likeness(strings.ToLower(n), low, false)
			if s > best[n] {
				best[n] = s
			}
			return true
		})
	}
	var cs []cand
	for n, s := range best {
		if s > 0 {
			cs = append(cs, cand{n, s})
		}
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].name < cs[j].name
	})
	if len(cs) == 0 {
		return "; nothing with a similar name either (code_graph status shows what is indexed)"
	}
	var names []string
	for i := 0; i < len(cs) && i < 8; i++ {
		names = append(names, cs[i].name)
	}
	return "; similar names: " + strings.Join(names, ", ")
}

// likeness scores how much a name looks like a query, both in lower case:
// 100 the same, 60 one starts the other, 40 one holds the other, 50 less
// the edit distance for a misspelling (queries of 4 letters or more, at
// most 2 edits; with narrow, as within one type's members, queries of 2
// or 3 letters at 1 edit too); 0 not alike.
func likeness(ln, low string, narrow bool) int {
	switch {
	case ln == low:
		return 100
	case strings.HasPrefix(ln, low) || strings.HasPrefix(low, ln) && len(ln) >= 3:
		return 60
	case strings.Contains(ln, low):
		return 40
	case len(low) >= 4 && editDistance(ln, low) <= 2:
		return 50 - editDistance(ln, low)
	case narrow && len(low) >= 2 && len(low) < 4 && editDistance(ln, low) <= 1:
		return 49
	}
	return 0
}

// nearQualified suggests definitions for a qualified name (Type.member,
// pkg.Func) that names nothing, matching each part as nearNames matches a
// name: members of what qual names whose names look like name, and
// definitions named name whose type or package looks like qual's last
// part. "" when nothing is alike.
func (v View) nearQualified(qual, name string) string {
	low := strings.ToLower(name)
	parts := strings.Split(strings.ReplaceAll(qual, "::", "."), ".")
	lowQual := strings.ToLower(parts[len(parts)-1])
	best := map[string]int{}
	for _, l := range v.Snap.Langs.All() {
		for _, n := range v.Snap.Tables(l).Defs.Keys() {
			ns := likeness(strings.ToLower(n), low, true)
			if ns == 0 {
				continue
			}
			for _, id := range v.Snap.Tables(l).Defs.Get(n) {
				f := v.Snap.ByID(id)
				for _, i := range f.DefsNamed(n) {
					t := snap.Target{File: f, Def: i}
					score := 0
					if qualifies(t, qual) {
						score = 100 + ns
					} else if place := cmp.Or(t.D().Container, f.Package); place != "" && ns == 100 {
						if ts := likeness(strings.ToLower(place), lowQual, false); ts > 0 {
							score = ns + ts
						}
					}
					if q := t.Qualified(); score > best[q] {
						best[q] = score
					}
				}
			}
		}
	}
	type cand struct {
		name  string
		score int
	}
	var cs []cand
	for n, s := range best {
		if s > 0 {
			cs = append(cs, cand{n, s})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].score != cs[j].score {
			return cs[i].score > cs[j].score
		}
		return cs[i].name < cs[j].name
	})
	var names []string
	for i := 0; i < len(cs) && i < 8; i++ {
		names = append(names, cs[i].name)
	}
	return "; similar names: " + strings.Join(names, ", ")
}

// editDistance is similar.Distance, skipped (99) for lengths too far
// apart to be a misspelling.
func editDistance(a, b string) int {
	if abs(len(a)-len(b)) > 3 {
		return 99
	}
	return similar.Distance(a, b)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// Site is one reference as results show it.
type Site struct {
	File    string   `json:"file"`
	Line    int      `json:"line"`
	Column  int      `json:"column"`
	Code    string   `json:"code" jsonschema:"the source line"`
	Call    string   `json:"call" jsonschema:"what is called (receiver.name)"`
	In      string   `json:"in" jsonschema:"the enclosing definition, or (top level)"`
	Class   string   `json:"class" jsonschema:"exact, import, interface (a call through an interface: dispatch to its implementations), implementation, candidate or unresolved"`
	Rank    int      `json:"rank,omitempty" jsonschema:"for a candidate: its place among the definitions of that name"`
	Of      int      `json:"of,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	Targets []Symbol `json:"targets,omitempty" jsonschema:"for callees: where the call leads (ranked candidates when unsure)"`
	Why     string   `json:"why,omitempty" jsonschema:"for unresolved: builtin, external module, no definition"`
	encl    snap.Target
	hasEncl bool
	fileRef *snap.Entry
	// dispatch: a candidate that is a call through an interface the
	// definition may satisfy (one declared outside the index, or a
	// structural one no class names), or a dispatch site through the
	// language's own interface (Go's err.Error()): impact walks on from
	// it.
	dispatch bool
	// passed: a call of a parameter the definition is passed to (G(F),
	// G calls its f): impact walks on from it. reached: a value use
	// passed to a call whose callee's calls of it are listed.
	passed, reached bool
	ri              int32 // the reference, in fileRef
}

func (v View) site(f *snap.Entry, ri int32) Site {
	r := &f.Refs[ri]
	s := Site{File: f.Rel, Line: int(r.Line), Column: int(r.Col), Call: f.RefName(r), In: "(top level)", fileRef: f, ri: ri}
	if r.Recv != 0 {
		s.Call = f.RefReceiver(r) + "." + s.Call
	}
	if r.Encl >= 0 {
		s.encl = snap.Target{File: f, Def: r.Encl}
		s.hasEncl = true
		s.In = s.encl.Qualified()
	}
	return s
}

func (s *Site) setClass(res outcome.Resolution, t snap.Target) {
	s.Class = res.Class
	if res.Class != Candidate {
		s.Reason = res.Reason
	}
	for i, u := range res.Impls {
		if u == t {
			s.Class, s.Rank, s.Of = Implementation, i+1, len(res.Impls)
			s.Reason = "a call of " + res.Targets[0].Qualified() + ", which " + t.Qualified() + " implements"
			if res.Reason != "" {
				s.Reason += " (" + res.Reason + ")"
			}
		}
	}
	for i, u := range res.Targets {
		if u == t {
			if res.Class == Candidate {
				s.Rank, s.Of = i+1, len(res.Targets)
				s.Reason = res.Reasons[i]
			}
		}
	}
}

var classOrder = map[string]int{Exact: 0, ViaImport: 1, Interface: 2, Implementation: 3, PassedClass: 4, Candidate: 4, Unresolved: 5}

func sortSites(ss []Site) {
	sort.SliceStable(ss, func(i, j int) bool {
		if classOrder[ss[i].Class] != classOrder[ss[j].Class] {
			return classOrder[ss[i].Class] < classOrder[ss[j].Class]
		}
		if ss[i].File != ss[j].File {
			return ss[i].File < ss[j].File
		}
		return ss[i].Line < ss[j].Line
	})
}

// callerSet is what leads to one definition.
type callerSet struct {
	calls, values []Site
	types         []Site // a class's uses as a type (annotations, bases)
	elsewhere     int
	nowhere       []Site
	// dispatch: calls of this name on a value of a type declared outside
	// the index that may be an interface (Resolution.Dispatch).
	dispatch []Site
}

// callersOf answers callers for many definitions at once, reading the
// references of each name once.
// refFiles lists the files whose references named name may lead to a
// definition of language l: its own files, and those of the languages
// importing by the same rule (a .tsx file imports a .ts one, C++ includes
// a C header), whose imports resolve across them.
func (v View) refFiles(l *lang.Language, name string) []snap.FileID {
	ids := v.Snap.Tables(l).Refs.Get(name)
	if l.Imports == "" || l.Imports == "none" {
		return ids
	}
	for _, o := range v.Snap.Langs.All() {
		if o != l && o.Imports == l.Imports {
			if more := v.Snap.Tables(o).Refs.Get(name); len(more) > 0 {
				ids = append(slices.Clip(ids), more...)
			}
		}
	}
	return ids
}

func (v View) callersOf(ts []snap.Target) map[snap.Target]*callerSet {
	out := make(map[snap.Target]*callerSet, len(ts))
	type group struct {
		l    *lang.Language
		name string
	}
	byName := map[group][]snap.Target{}
	for _, t := range ts {
		if out[t] != nil {
			continue
		}
		out[t] = &callerSet{}
		k := group{t.File.Lang, t.D().Name}
		byName[k] = append(byName[k], t)
	}
	// A definition is also called by the names imports give it (import
	// {f as g}; export {f as g} from): those references are read too, and
	// each is kept only if it resolves to the definition.
	keys := make([]group, 0, len(byName))
	for k := range byName {
		keys = append(keys, k)
	}
	// A constructor runs where its class is constructed (new C(), C()):
	// the references to the class's name are read too.
	ctor := map[snap.Target]bool{}
	for _, t := range ts {
		if d := t.D(); d.Container != "" && (d.Kind == "constructor" || d.Name == t.File.Lang.Constructor && d.Member()) {
			ctor[t] = true
			if d.Name != d.Container {
				ck := group{t.File.Lang, d.Container}
				byName[ck] = append(byName[ck], t)
			}
			for _, sup := range t.File.Lang.Super { // super(...) in a subclass
				if record.IsIdent(sup) {
					sk := group{t.File.Lang, sup}
					byName[sk] = append(byName[sk], t)
				}
			}
		}
	}
	// A class is constructed where a class method calls its class by the
	// language's name for it (Python's cls()): those references are read
	// too, for the class and its constructor.
	for _, t := range ts {
		if record.ClassLike(t.D().Kind) || ctor[t] {
			for _, cs := range t.File.Lang.ClassSelf {
				ck := group{t.File.Lang, cs}
				byName[ck] = append(byName[ck], t)
			}
		}
	}
	for _, k := range keys {
		for _, a := range v.R.Aliases(k.l, k.name) {
			ak := group{k.l, a}
			byName[ak] = append(byName[ak], byName[k]...)
		}
	}
	aliased := map[snap.Target][]snap.Target{} // a class: the variables set to it
	for k, group := range byName {
		anyType, anyGetter, anyMethod := false, false, false
		for _, t := range group {
			anyType = anyType || record.ClassLike(t.D().Kind)
			anyGetter = anyGetter || t.D().Kind == "getter"
			anyMethod = anyMethod || t.D().Kind == "method"
		}
		for _, id := range v.refFiles(k.l, k.name) {
			g := v.Snap.ByID(id)
			for _, ri := range g.RefsNamed(k.name) {
				r := &g.Refs[ri]
				if r.Kind == record.RefType && !anyType || r.Kind == record.RefRead && !anyGetter && !anyMethod {
					continue
				}
				if anyType && r.Kind == record.RefValue {
					// Alias = Store: calls of Alias construct Store.
					if h := aliasHolder(g, r); h >= 0 {
						for _, t := range group {
							if d := t.D(); d.Name == k.name && record.ClassLike(d.Kind) && !t.File.Lang.Conversions {
								aliased[t] = append(aliased[t], snap.Target{File: g, Def: h})
							}
						}
					}
				}
				if r.Kind == record.RefRead && !anyGetter {
					// obj.m read, not called: a method value.
					v := *r
					v.Kind = record.RefValue
					r = &v
				}
				res := v.R.SiteLazy(g, ri, r.Kind)
				for _, t := range group {
					cs := out[t]
					if r.Kind == record.RefType && !record.ClassLike(t.D().Kind) {
						continue
					}
					found := false
					rank, of, reason := 0, 0, ""
					if res.Pending != nil {
						if v.R.Accepts(res.Pending, t.D()) {
							rank, of, reason = v.R.SiteRank(g, ri, r.Kind, res.Pending, t)
							found = rank > 0
						}
					} else {
						for _, u := range res.Targets {
							if u == t || ctor[t] && r.Kind == record.RefCall && resolve.Constructs(u, t) {
								found = true
								break
							}
						}
						for _, u := range res.Impls {
							found = found || u == t
						}
					}
					if !found && v.R.ConformsTo(res, t) {
						// A structural interface with no declared
						// implementation: t may be what runs.
						s := v.site(g, ri)
						s.Class, s.Rank, s.Of, s.dispatch = Candidate, 1, 1, true
						s.Reason = "a call of " + res.Targets[0].Qualified() + ", an interface no class names as a base; " + t.Qualified() + " has a method of this name, and any object with one conforms"
						cs.calls = append(cs.calls, s)
						continue
					}
					if !found {
						unresolved := res.Class == Unresolved
						if res.Pending != nil {
							unresolved = v.R.SiteCandidates(g, ri, r.Kind, res.Pending) == 0
						}
						switch {
						case r.Kind == record.RefType, r.Kind == record.RefRead:
						case res.Dispatch != "" && r.Kind == record.RefCall && t.D().Member() && record.FunctionLike(t.D().Kind):
							// conn.Close(), conn a net.Conn: if an
							// interface, t may be what runs.
							s := v.site(g, ri)
							s.Class, s.Why, s.dispatch = Unresolved, res.Why, res.DispatchBuiltin
							cs.dispatch = append(cs.dispatch, s)
						case unresolved && r.Kind == record.RefCall:
							cs.nowhere = append(cs.nowhere, v.site(g, ri))
						case !unresolved:
							cs.elsewhere++
						}
						continue
					}
					s := v.site(g, ri)
					if res.Pending != nil {
						s.Class, s.Rank, s.Of, s.Reason = Candidate, rank, of, reason
						s.dispatch = res.Pending.Dispatch()
					} else {
						s.setClass(res, t)
					}
					if ctor[t] && r.Kind == record.RefCall && s.Reason == "" && s.Class != Candidate {
						s.Reason = "constructs " + t.D().Container
					}
					// A getter runs where it is read; a conversion (Go's
					// T(x)) uses its type.
					if r.Kind == record.RefType || r.Kind == record.RefCall && g.Lang.Conversions && record.ClassLike(t.D().Kind) {
						cs.types = append(cs.types, s)
					} else if r.Kind == record.RefValue && t.D().Kind != "getter" {
						cs.values = append(cs.values, s)
					} else {
						cs.calls = append(cs.calls, s)
					}
				}
			}
		}
	}
	// Calls through a local bound to a definition where it is used as a
	// value (f := G; f()).
	for t, cs := range out {
		type at struct {
			f  *snap.Entry
			ri int32
		}
		seen := map[at]bool{} // (passed calls and hand-ons, once each)
		var on []Site
		for i := range cs.values {
			s := &cs.values[i]
			cs.calls = append(cs.calls, v.heldCalls(t, *s)...)
			calls, ons, reached := v.passedCalls(t, *s)
			s.reached = reached
			for _, c := range calls {
				if k := (at{c.fileRef, c.ri}); !seen[k] {
					seen[k] = true
					cs.calls = append(cs.calls, c)
				}
			}
			for _, c := range ons {
				if k := (at{c.fileRef, c.ri}); !seen[k] {
					seen[k] = true
					on = append(on, c)
				}
			}
		}
		cs.values = append(cs.values, on...)
		for _, h := range aliased[t] {
			cs.calls = append(cs.calls, v.variableCalls(t, h)...)
		}
	}
	for _, cs := range out {
		sortSites(cs.calls)
		sortSites(cs.values)
		sortSites(cs.types)
		sortSites(cs.nowhere)
		sortSites(cs.dispatch)
	}
	return out
}

// callees lists the calls made inside t's definition, each resolved.
func (v View) callees(t snap.Target) (calls, values []Site) {
	f := t.File
	d := t.D()
	for ri := range f.Refs {
		r := &f.Refs[ri]
		if r.At < d.Start || r.At >= d.End {
			continue
		}
		if r.Kind == record.RefValue || r.Kind == record.RefRead {
			// As callers reads them: a getter runs where it is read (a
			// call); a function or method read without a call is a value
			// passed or stored (sort.Slice(xs, less), obj.m).
			s, value, ok := v.valueRef(f, int32(ri))
			switch {
			case !ok, value && r.Line == d.Line && s.Targets[0].File == f.Rel && s.Targets[0].Line == int(d.Line) && s.Targets[0].Name == d.Name:
				// (the definition naming itself on its first line:
				// exports.f = function f)
			case value:
				values = append(values, s)
			default:
				calls = append(calls, s)
			}
			continue
		}
		if r.Kind != record.RefCall {
			continue
		}
		res := v.R.Resolve(f, r)
		if res.Conversion {
			continue // T(x) converts: no call is made
		}
		s := v.site(f, int32(ri))
		s.Class, s.Why = res.Class, res.Why
		if res.Class != Candidate {
			s.Reason = res.Reason
		}
		for i, u := range res.Targets {
			sym := symbolOf(u)
			if res.Class == Candidate {
				sym.Reason = res.Reasons[i]
			}
			s.Targets = append(s.Targets, sym)
		}
		for _, u := range res.Impls {
			sym := symbolOf(u)
			sym.Reason = Implementation
			s.Targets = append(s.Targets, sym)
		}
		if res.Class == Candidate {
			s.Of = len(res.Targets)
		}
		calls = append(calls, s)
	}
	return calls, values
}

// valueRef resolves a value use or a property read in a callee's body as
// callers does: a read of a getter is a call of it (value false); a
// function or method named without a call, resolved for sure, is a value
// (value true). ok is false for anything else (a variable, a name-only
// match).
func (v View) valueRef(f *snap.Entry, ri int32) (s Site, value, ok bool) {
	r := &f.Refs[ri]
	res := v.R.Resolve(f, r)
	getter := func(res outcome.Resolution) bool {
		return len(res.Targets) > 0 && res.Targets[0].D().Kind == "getter"
	}
	if r.Kind == record.RefRead && !getter(res) {
		c := *r
		c.Kind = record.RefValue
		res = v.R.Resolve(f, &c)
	}
	if !sure(res.Class) || len(res.Targets) == 0 || !record.FunctionLike(res.Targets[0].D().Kind) {
		return Site{}, false, false
	}
	s = v.site(f, ri)
	s.Class, s.Reason = res.Class, res.Reason
	for _, u := range res.Targets {
		s.Targets = append(s.Targets, symbolOf(u))
	}
	return s, !getter(res), true
}
