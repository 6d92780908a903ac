package graph

import (
	"fmt"
	"strings"
)

// Text lists the answer's data a line each, for tests' messages and
// checks: a site's file:line, enclosing definition, class and reason,
// call, targets and line. (The text an agent reads is answertext.Render,
// tested there; package graph cannot import it.)
func (a *Answer) Text() string {
	var b strings.Builder
	sym := func(s Symbol) string { return fmt.Sprintf("%s %s (%s:%d)", s.Kind, s.Qualified, s.File, s.Line) }
	site := func(kind string, s Site) {
		fmt.Fprintf(&b, "%s %s:%d in %s [%s", kind, s.File, s.Line, s.In, s.Class)
		if s.Rank > 0 {
			fmt.Fprintf(&b, " %d of %d", s.Rank, s.Of)
		}
		if s.Reason != "" {
			b.WriteString(": " + s.Reason)
		}
		if s.Why != "" {
			b.WriteString(": " + s.Why)
		}
		b.WriteString("] " + s.Call)
		for i, t := range s.Targets {
			if i == 0 {
				b.WriteString(" ->")
			}
			fmt.Fprintf(&b, " %s (%s:%d; %s)", t.Qualified, t.File, t.Line, t.Reason)
		}
		fmt.Fprintf(&b, " `%s`\n", s.Code)
	}
	b.WriteString(a.Op)
	if a.Symbol != nil {
		b.WriteString(" " + sym(*a.Symbol))
	}
	if a.File != nil {
		fmt.Fprintf(&b, " file %s", a.File.Rel)
	}
	fmt.Fprintf(&b, ": counts %+v\n", a.Counts)
	if a.Op == "callers" && a.Symbol != nil {
		c := a.Counts
		fmt.Fprintf(&b, "%d call sites (%d exact, %d import, %d candidate)\n", c.Exact+c.Import+c.Candidate+c.Implementation, c.Exact, c.Import, c.Candidate)
	}
	for i, s := range a.Candidates {
		fmt.Fprintf(&b, "candidate %s `%s`\n", sym(s), a.lineAt(i).Code)
	}
	for i, s := range a.Definitions {
		fmt.Fprintf(&b, "definition %s `%s`\n", sym(s), a.lineAt(i).Code)
	}
	for _, s := range a.Sites {
		site("site", s)
	}
	for _, s := range a.Values {
		site("value", s)
	}
	for _, s := range a.TypeUses {
		site("type use", s)
	}
	if s := a.Unplaced; s != nil {
		site("unplaced", *s)
	}
	for _, r := range a.Depths {
		fmt.Fprintf(&b, "depth %d: counts %+v, %d not listed\n", r.Depth, r.Counts, r.Truncated)
		for _, d := range r.Dependents {
			site("  "+d.Symbol.Qualified+" on "+d.On+" via", d.Via)
		}
	}
	if m := a.Macro; m != nil {
		fmt.Fprintf(&b, "%s invokes macro %s (%s:%d)\n", m.In, m.Macro, m.File, m.Line)
	}
	if s := a.Status; s != nil {
		for _, l := range append(s.SkipList, s.ParseFail...) {
			b.WriteString(l + "\n")
		}
	}
	// Lines comparable() in ahead_test.go leaves out.
	if a.Index.Ahead > 0 {
		fmt.Fprintf(&b, "(computed from %d files ahead of the index)\n", a.Index.Ahead)
	} else if !a.Index.Ready {
		b.WriteString("(index still building)\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func (a *Answer) lineAt(i int) DefLine {
	if i < len(a.Lines) {
		return a.Lines[i]
	}
	return DefLine{}
}
