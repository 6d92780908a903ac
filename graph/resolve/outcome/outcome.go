// Package outcome is what resolving a reference comes to, shared by the
// resolver's parts: a Resolution (exact, import, candidate or unresolved,
// with its reason), the Pending name-only resolution the ranking fills in
// when asked, and how several definitions found in scope settle into one
// answer (variants, preprocessor branches, candidates) and the order
// targets are listed in (SortTargets).
package outcome

import (
	"slices"
	"sort"
	"strconv"
	"unicode"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Resolution is where a reference leads and how that was decided.
type Resolution struct {
	Class   string
	Targets []snap.Target // exact and import: the definition (or overloads); candidate: ranked, best first
	Reasons []string      // for candidates: why each is ranked where it is
	Why     string        // for unresolved: builtin, external module, no definition
	Reason  string        // for exact: the evidence when it is more than scope (a declared type)
	Impls   []snap.Target // for exact on an interface's (or a class's) method: what the call may run instead
	Pending *Pending      // a name-only resolution not ranked yet (callers)
	// Conversion: a call of a type in a language where that converts
	// (Go's MyInt(3)): a use of the type, not a call.
	Conversion bool
	// Dispatch, for an unresolved call on a value of a type declared
	// outside the index that may be an interface (net.Conn): that type.
	// A method of the index of this name may be what runs.
	Dispatch string
	// DispatchBuiltin: Dispatch's type is the language's own (Go's error),
	// an interface whose only method is the one called, so any method of
	// this name satisfies it and may run.
	DispatchBuiltin bool
}

// Pending is a name-only resolution whose candidates are ranked only when
// asked (callers needs one candidate's rank, not the whole list).
type Pending struct {
	File *snap.Entry
	Ref  *record.Ref
	OK   func(*record.Def) bool
	Hint []snap.Target // the receiver's declared type, whose members rank first
	// HintHow says how hint was found, before the type's name in a
	// candidate's reason (default: a declared type).
	HintHow string
	// Note ends every candidate's reason: why a call of a declared type
	// is still name-only (dispatch the index cannot see into).
	Note string
	// NoIface, for dispatch: a method of an interface the snapshot
	// declares is not a candidate (an interface's own method never runs).
	// A flag, not a filter holding the resolver: a site kept along the
	// snapshots must not keep an old snapshot alive.
	NoIface bool
}

// Dispatch says whether p's candidates are what a call through a
// declared type the index cannot see into may run (io.Writer's Write):
// not a guess at the receiver's type but dispatch, each a possible runner.
func (p *Pending) Dispatch() bool { return p.Note != "" }

// InVariant keeps the definitions a file of f's variant can reach, when
// there are several and some are built for other variants.
func InVariant(f *snap.Entry, ts []snap.Target) []snap.Target {
	if len(ts) < 2 || f.Lang.Variants == "" {
		return ts
	}
	mine := f.Lang.Variant(f.Rel)
	out := ts[:0:0]
	for _, t := range ts {
		if mine.Compatible(t.File.Lang.Variant(t.File.Rel)) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return ts
	}
	return out
}

// Settle returns an exact (or import) resolution, or candidates when there
// are several definitions (overloads, duplicates).
//
// Definitions built only for other variants than f's (x_windows.go from
// x_linux.go) are left out first.
func Settle(f *snap.Entry, class string, ts []snap.Target, reason string) Resolution {
	ts = InVariant(f, ts)
	if len(ts) == 1 {
		return Resolution{Class: class, Targets: ts}
	}
	if branches(f.Lang, ts) {
		return Resolution{Class: class, Targets: ts, Reason: "one function, defined once in each of " + strconv.Itoa(len(ts)) + " preprocessor branches of " + ts[0].File.Rel}
	}
	if f.Lang.Variants != "" {
		// The one built on this system first (syscall_unix.go's, by its
		// //go:build line, before net_js.go's).
		ts = slices.Clone(ts)
		slices.SortStableFunc(ts, func(a, b snap.Target) int { return HostRank(a.File) - HostRank(b.File) })
	}
	reasons := make([]string, len(ts))
	for i, t := range ts {
		reasons[i] = reason + ", one of " + strconv.Itoa(len(ts)) + " with this name"
		if t.File.Host == lang.HostYes {
			reasons[i] += "; built on this system"
		}
	}
	return Resolution{Class: lang.Candidate, Targets: ts, Reasons: reasons}
}

// branches says ts are one function written once per preprocessor
// branch: functions of one name in one file of a language with no
// overloads (language.json's one_definition).
func branches(l *lang.Language, ts []snap.Target) bool {
	if !l.OneDefinition {
		return false
	}
	for _, t := range ts {
		if d := t.D(); t.File != ts[0].File || d.Kind != "function" || d.Local {
			return false
		}
	}
	return true
}

// HostRank orders variants: built on this system by name or //go:build
// line first, then files that say nothing, then files built elsewhere.
func HostRank(g *snap.Entry) int {
	v := g.Lang.Variant(g.Rel)
	switch {
	case g.Host == lang.HostNo || !v.Compatible(lang.Host):
		return 2
	case g.Host == lang.HostYes || !v.Any():
		return 0
	}
	return 1
}

// Pick lists f's definitions named name that ok accepts.
func Pick(f *snap.Entry, name string, ok func(*record.Def) bool) []snap.Target {
	var out []snap.Target
	for _, i := range f.DefsNamed(name) {
		if ok(&f.Defs[i]) {
			out = append(out, snap.Target{File: f, Def: i})
		}
	}
	return out
}

// DefsIn lists the definitions named name that ok accepts in files.
func DefsIn(files []*snap.Entry, name string, ok func(*record.Def) bool) []snap.Target {
	var out []snap.Target
	for _, g := range files {
		out = append(out, Pick(g, name, ok)...)
	}
	return out
}

// SortTargets orders definitions for a reader: functions, methods and
// types before variables, exported before not, then by path and line.
func SortTargets(ts []snap.Target) {
	rank := func(t snap.Target) int {
		d := t.D()
		r := 0
		if !record.FunctionLike(d.Kind) && !record.ClassLike(d.Kind) {
			r += 2
		}
		if d.Name != "" && !unicode.IsUpper(rune(d.Name[0])) {
			r++
		}
		return r
	}
	sort.SliceStable(ts, func(i, j int) bool {
		ri, rj := rank(ts[i]), rank(ts[j])
		if ri != rj {
			return ri < rj
		}
		if ts[i].File.Rel != ts[j].File.Rel {
			return ts[i].File.Rel < ts[j].File.Rel
		}
		return ts[i].Def < ts[j].Def
	})
}
