package graph

import (
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Dump writes everything the index knows, one line per definition,
// import and reference with its resolution, sorted by file and position:
// the form fixture tests compare against their golden files.
func Dump(v View) string {
	var b strings.Builder
	for f := range v.Snap.Files() {
		rel := f.Rel
		fmt.Fprintf(&b, "file %s %s package=%q errors=%d\n", rel, f.Lang.ID, f.Package, f.Errors)
		for _, im := range f.Imports {
			fmt.Fprintf(&b, "import %s:%d %q name=%q local=%q\n", rel, im.Line, im.Module, im.Name, im.Local)
		}
		for i := range f.Defs {
			d := &f.Defs[i]
			fmt.Fprintf(&b, "def %s:%d-%d %s %s\n", rel, d.Line, d.EndLine, d.Kind, snap.Target{File: f, Def: int32(i)}.Qualified())
		}
		for i := range f.Refs {
			r := &f.Refs[i]
			in := "(top level)"
			if r.Encl >= 0 {
				in = snap.Target{File: f, Def: r.Encl}.Qualified()
			}
			call := f.RefName(r)
			if r.Recv != 0 {
				call = f.RefReceiver(r) + "." + call
			}
			res := v.R.Resolve(f, r)
			if (r.Kind == record.RefValue || r.Kind == record.RefRead) && res.Class == Unresolved {
				continue // a variable, not a function passed on; not a getter's read
			}
			kind := record.RefKindNames[r.Kind]
			if res.Conversion {
				kind = record.RefKindNames[record.RefType]
			}
			fmt.Fprintf(&b, "%s %s:%d %s in %s -> %s\n", kind, rel, r.Line, call, in, resolutionText(res))
		}
	}
	return b.String()
}

func resolutionText(res outcome.Resolution) string {
	if res.Class == Unresolved {
		return "unresolved (" + res.Why + ")"
	}
	var ts []string
	for _, t := range res.Targets {
		ts = append(ts, fmt.Sprintf("%s (%s:%d)", t.Qualified(), t.File.Rel, t.D().Line))
	}
	if res.Class == Candidate {
		return fmt.Sprintf("candidate[%d] %s", len(ts), strings.Join(ts, ", "))
	}
	out := res.Class + " " + strings.Join(ts, ", ")
	if len(res.Impls) > 0 {
		var is []string
		for _, t := range res.Impls {
			is = append(is, fmt.Sprintf("%s (%s:%d)", t.Qualified(), t.File.Rel, t.D().Line))
		}
		out += fmt.Sprintf(" implementation[%d] %s", len(is), strings.Join(is, ", "))
	}
	if res.Reason != "" {
		out += " — " + res.Reason
	}
	return out
}
