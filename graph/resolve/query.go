package resolve

import (
	"path"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Constructs says whether a call resolved to class u constructs with
// constructor t: u is t's class, in t's file or package folder.
func Constructs(u, t snap.Target) bool {
	d := u.D()
	return record.ClassLike(d.Kind) && d.Name == t.D().Container && (u.File == t.File || u.File.Dir == t.File.Dir && u.File.Lang.Scope == "directory" || u.File.Dir == t.File.Dir && u.File.Lang.Rule().Textual())
}

// Declared finds the definitions a bodiless declaration of sym on line
// declares: the line must hold sym as a word followed by "(" (a function's
// signature); definitions of that name in the file come first (an
// overload's implementation), then, for a member of the class around the
// line or a prototype, those in the files beside it with its base name
// (x.h and x.c), then the language's. text is the line, as the file reads
// now.
func (rv *Resolver) Declared(f *snap.Entry, sym string, line int, text string) []snap.Target {
	at := wordAt(text, sym)
	if at < 0 || !strings.HasPrefix(strings.TrimLeft(text[at+len(sym):], " \t"), "(") && !strings.HasPrefix(strings.TrimLeft(text[at+len(sym):], " \t"), "<") {
		return nil
	}
	// The class the line is in, if any: a method declared there.
	cont := ""
	for i := range f.Defs {
		d := &f.Defs[i]
		if record.ClassLike(d.Kind) && int(d.Line) <= line && line <= int(d.EndLine) {
			cont = d.Name
		}
	}
	isFn := func(d *record.Def) bool { return record.FunctionLike(d.Kind) && d.Container == cont }
	if ts := outcome.Pick(f, sym, func(d *record.Def) bool { return isFn(d) && int(d.Line) != line }); len(ts) > 0 {
		return ts
	}
	stem := strings.TrimSuffix(f.Rel, path.Ext(f.Rel))
	var beside, dir, all []snap.Target
	for _, id := range rv.s.Tables(f.Lang).Defs.Get(sym) {
		g := rv.s.ByID(id)
		if g == f {
			continue
		}
		for _, t := range outcome.Pick(g, sym, isFn) {
			switch {
			case strings.TrimSuffix(g.Rel, path.Ext(g.Rel)) == stem:
				beside = append(beside, t)
			case g.Dir == f.Dir:
				dir = append(dir, t)
			default:
				all = append(all, t)
			}
		}
	}
	for _, ts := range [][]snap.Target{beside, dir, all} {
		if len(ts) > 0 {
			return ts
		}
	}
	return nil
}

// wordAt is the index of sym in text as a whole word, or -1.
func wordAt(text, sym string) int {
	for from := 0; from < len(text); {
		i := strings.Index(text[from:], sym)
		if i < 0 {
			return -1
		}
		i += from
		before := i == 0 || !record.IsIdent(text[i-1:i])
		after := i+len(sym) == len(text) || !record.IsIdent("a"+text[i+len(sym):i+len(sym)+1])
		if before && after {
			return i
		}
		from = i + 1
	}
	return -1
}
