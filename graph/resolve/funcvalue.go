package resolve

import (
	"slices"
	"strconv"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// localCall decides a call of a name that is a local of the function
// around it (or of one it is nested in): a call through a function value.
// A local bound once, to a function the index defines (f := pkg.F,
// h = g), calls that function: exact where the language records every
// assignment as a binding (Python), else a candidate, since a later
// f = … is not in the records. Anything else is unresolved, saying what
// the local holds (a function literal, a parameter, a call's result).
func (rv *Resolver) localCall(f *snap.Entry, r *record.Ref, name string) outcome.Resolution {
	if r.Kind == record.RefCall {
		for e, n := r.Encl, 0; e >= 0 && n < 16; e, n = f.Outer(e), n+1 {
			if f.Bound(name, e, r.At) {
				return rv.heldCall(f, name, e, r.At)
			}
		}
	}
	if r.Kind == record.RefType {
		return outcome.Resolution{Class: lang.Unresolved, Why: "a type parameter (or another local of this name)"}
	}
	return outcome.Resolution{Class: lang.Unresolved, Why: "a local variable or parameter (a function value)"}
}

// heldCall decides a call of local name of definition e.
func (rv *Resolver) heldCall(f *snap.Entry, name string, e, callAt int32) outcome.Resolution {
	vis := f.InnermostLocals(name, e, callAt)
	if len(vis) == 0 {
		return outcome.Resolution{Class: lang.Unresolved, Why: "a local variable or parameter (a function value)"}
	}
	// Every binding of the scope holding the one seen, after the call
	// too (a loop may run it again): a name shadowed in an inner block
	// is another variable.
	var binds []*record.Local
	for _, i := range f.LocalsNamed(name) {
		if l := &f.Locals[i]; l.Encl == e && l.End == vis[0].End {
			binds = append(binds, l)
		}
	}
	b := binds[0]
	at := name + ", " + f.Rel + ":" + strconv.Itoa(int(b.Line))
	if len(binds) > 1 {
		lines := make([]string, len(binds))
		for i, l := range binds {
			lines[i] = strconv.Itoa(int(l.Line))
		}
		return outcome.Resolution{Class: lang.Unresolved, Why: "a function value: " + name + " is bound " + strconv.Itoa(len(binds)) + " times (lines " + strings.Join(lines, ", ") + "); which function it holds is not followed"}
	}
	held := f.Strs[b.Type]
	switch b.How {
	case record.TypeExpr:
		res, ok := rv.heldValue(f, b.Line, e, held, false)
		if !ok {
			why := "a function value: " + name + " holds " + held + " (" + at + "), which the index does not resolve to a function"
			if res.Why != "" {
				why += " (" + res.Why + ")"
			}
			return outcome.Resolution{Class: lang.Unresolved, Why: why}
		}
		if f.Lang.AssignmentsBind {
			res.Reason = name + " holds " + held + ": its one assignment, " + f.Rel + ":" + strconv.Itoa(int(b.Line))
			if len(res.Targets) > 1 {
				return outcome.Resolution{Class: lang.Candidate, Targets: res.Targets, Reasons: repeat(res.Reason+" (one of the definitions of "+held+")", len(res.Targets))}
			}
			return outcome.Resolution{Class: res.Class, Targets: res.Targets, Reason: res.Reason}
		}
		why := name + " holds " + held + " (" + at + "); a later assignment " + name + " = … is not read"
		return outcome.Resolution{Class: lang.Candidate, Targets: res.Targets, Reasons: repeat(why, len(res.Targets))}
	case record.TypeResult:
		return outcome.Resolution{Class: lang.Unresolved, Why: "a function literal bound to " + at + ": the calls in it are listed as made by what encloses it"}
	case record.TypeParam:
		if f.Lang.PassesArguments() {
			return outcome.Resolution{Class: lang.Unresolved, Why: "a parameter holding a function value (" + at + "): callers of a function passed to it list this call; which one runs here is not followed"}
		}
		return outcome.Resolution{Class: lang.Unresolved, Why: "a parameter holding a function value (" + at + "): what callers pass is not followed"}
	case record.TypeDeclared:
		return outcome.Resolution{Class: lang.Unresolved, Why: "a variable of function type " + held + " (" + at + "): what is assigned to it is not followed"}
	case record.TypeCall, record.TypeCall2, record.TypeCall3:
		return outcome.Resolution{Class: lang.Unresolved, Why: "a function value: " + name + " holds what " + held + " returns (" + at + "), not followed"}
	}
	return outcome.Resolution{Class: lang.Unresolved, Why: "a local variable or parameter holding a function value (" + at + "): what it holds is not followed (a function literal's calls are listed as made by what encloses it)"}
}

// heldValue resolves the expression a binding on line (in definition e)
// holds as a function value: the value reference the query records there,
// written as held. ok says it leads surely to functions, or with classes
// to functions or classes (a language where calling a class constructs
// it).
func (rv *Resolver) heldValue(f *snap.Entry, line, e int32, held string, classes bool) (outcome.Resolution, bool) {
	held = HeldText(held)
	var found *record.Ref
	for _, ri := range f.RefsNamed(record.LastSegment(held)) {
		r := &f.Refs[ri]
		if r.Kind != record.RefValue || r.Line != line || r.Encl != e {
			continue
		}
		text := f.RefName(r)
		if r.Recv != 0 {
			text = f.RefReceiver(r) + "." + text
		}
		if text != held {
			continue
		}
		if found != nil {
			return outcome.Resolution{}, false // two on the line: which is the value is not known
		}
		found = r
	}
	if found == nil {
		return outcome.Resolution{}, false
	}
	res := rv.Resolve(f, found)
	if classes {
		// Read as a call of what it names (a value reference leads only
		// to functions); not through Resolve, which would follow a
		// variable holding a variable, maybe round.
		c := *found
		c.Kind = record.RefCall
		res = rv.resolveAt(f, &c, false)
	}
	if res.Class != lang.Exact && res.Class != lang.ViaImport || len(res.Targets) == 0 {
		return res, false
	}
	for _, t := range res.Targets {
		if k := t.D().Kind; !record.FunctionLike(k) && !(classes && record.ClassLike(k)) {
			return res, false
		}
	}
	return res, true
}

// throughVariable decides a call whose definition is a module-level
// variable (var testHook = nop; handler = default_handler): a call of the
// function value the variable holds, never of the variable, which runs no
// code. A variable initialized with a function (or, in a language where
// calling a class constructs it, a class) the index defines calls it:
// exact where the language records every assignment as a binding and the
// variable has one, else a candidate, since an assignment elsewhere (a
// test replacing a hook) is not read. Anything else is unresolved saying
// what the variable holds.
func (rv *Resolver) throughVariable(f *snap.Entry, r *record.Ref, res outcome.Resolution) outcome.Resolution {
	if r.Kind != record.RefCall || res.Class != lang.Exact && res.Class != lang.ViaImport || len(res.Targets) != 1 {
		return res
	}
	t := res.Targets[0]
	d := t.D()
	if d.Kind != "variable" || d.Member() || d.Local {
		return res
	}
	g := t.File
	at := d.Name + " (" + g.Rel + ":" + strconv.Itoa(int(d.Line)) + ")"
	switch d.How {
	case record.TypeExpr:
		held, ok := rv.heldValue(g, d.Line, t.Def, d.Type, !g.Lang.Conversions)
		if !ok {
			return outcome.Resolution{Class: lang.Unresolved, Why: "a function value: the variable " + at + " holds " + d.Type + ", which the index does not resolve to a function"}
		}
		if g.Lang.AssignmentsBind && len(held.Targets) == 1 {
			return outcome.Resolution{Class: held.Class, Targets: held.Targets, Reason: "the variable " + d.Name + " holds " + d.Type + ": its one assignment, " + g.Rel + ":" + strconv.Itoa(int(d.Line))}
		}
		why := "the variable " + at + " holds " + d.Type + "; an assignment to it elsewhere is not read"
		return outcome.Resolution{Class: lang.Candidate, Targets: held.Targets, Reasons: repeat(why, len(held.Targets))}
	case record.TypeCall, record.TypeCall2, record.TypeCall3:
		return outcome.Resolution{Class: lang.Unresolved, Why: "a function value: the variable " + at + " holds what " + d.Type + " returns, not followed"}
	case record.TypeDeclared:
		return outcome.Resolution{Class: lang.Unresolved, Why: "the variable " + at + " of function type " + d.Type + ": what is assigned to it is not followed"}
	}
	return outcome.Resolution{Class: lang.Unresolved, Why: "a function value held by the variable " + at + ": what it holds is not followed"}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// CallOfCall is the name tags.scm gives a call of what a call returns
// (f()(x)): the opening parenthesis of its arguments.
const CallOfCall = "("

// valueCall decides a call of a function value written in place: a
// literal called where it is written, or what a call returns.
func valueCall(l *lang.Language, r *record.Ref, name string) (outcome.Resolution, bool) {
	if r.Kind != record.RefCall || r.Recv != 0 {
		return outcome.Resolution{}, false
	}
	switch {
	case name == CallOfCall:
		return outcome.Resolution{Class: lang.Unresolved, Why: "a call of the function value a call returns (f()(…)): which function that is is not followed"}, true
	case slices.Contains(l.FunctionLiterals, name):
		return outcome.Resolution{Class: lang.Unresolved, Why: "a function literal called where it is written: the calls in it are listed as made by what encloses it"}, true
	}
	return outcome.Resolution{}, false
}

// HeldText is the text of the value reference a local bound to the
// expression held records: a method expression (*T).m is recorded with
// the receiver T.
func HeldText(held string) string {
	if rest, ok := strings.CutPrefix(held, "(*"); ok {
		return strings.Replace(rest, ")", "", 1)
	}
	return held
}
