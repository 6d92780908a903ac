package graph

import (
	"context"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// Dependents is what a change of one file may break elsewhere (WRT-6): the
// module-level definitions whose name or signature changed, and the other
// files that use them.
type Dependents struct {
	// Changed are the definitions (qualified as answers name them) that
	// were removed, renamed or had their signature changed.
	Changed []string
	// Files are the other files using them, relative to the root: the
	// files of exact and import callers first, then, for a definition the
	// index cannot resolve to (removed or renamed), files that refer to
	// its name. At most max.
	Files []string
	// More counts the files left out by max.
	More int
}

// Dependents compares the definitions of rel (relative to the root) as
// before and after hold it and names the files that use what changed: a
// body edit changes nothing here, a new parameter, a new result type, a
// renamed or removed function, or a changed type's fields does. Both
// versions are parsed from memory; the files come from the current
// snapshot, whichever version of rel it holds. A file of a language the
// index does not read has no dependents.
func (h *Handle) Dependents(ctx context.Context, rel string, before, after []byte, max int) (Dependents, error) {
	v := h.View(0)
	l := v.Snap.Langs.ForFile(rel)
	if l == nil {
		return Dependents{}, nil
	}
	read := func(src []byte) (*record.Record, error) {
		r, err := h.e.CaptureSnippet(ctx, l.Query(), src)
		if err != nil {
			return nil, err
		}
		return l.Extractor().Extract(src, r), nil
	}
	old, err := read(before)
	if err != nil {
		return Dependents{}, err
	}
	cur, err := read(after)
	if err != nil {
		return Dependents{}, err
	}
	changed := changedDefs(old, before, cur, after)
	if len(changed) == 0 {
		return Dependents{}, nil
	}
	return v.dependents(l, rel, changed, max), nil
}

// defKey identifies a definition across two versions of a file.
type defKey struct{ kind, container, scope, name string }

func keyOf(d *record.Def) defKey { return defKey{d.Kind, d.Container, d.Scope, d.Name} }

// changedDefs returns the module-level definitions of old whose key is
// gone from cur, or whose signature differs.
func changedDefs(old *record.Record, osrc []byte, cur *record.Record, csrc []byte) []record.Def {
	now := map[defKey]string{}
	for i := range cur.Defs {
		if d := &cur.Defs[i]; !d.Local {
			now[keyOf(d)] = signature(csrc, d)
		}
	}
	var out []record.Def
	for i := range old.Defs {
		d := &old.Defs[i]
		if d.Local {
			continue
		}
		if sig, ok := now[keyOf(d)]; !ok || sig != signature(osrc, d) {
			out = append(out, *d)
		}
	}
	return out
}

// signature is what users of d depend on, spaces collapsed: for a function,
// method or class its text up to the body (the first "{" outside brackets
// after the name, or a ":" ending a line, Python's); for a type, constant
// or variable all of it (a struct's fields, an interface's methods, a
// value's type).
func signature(src []byte, d *record.Def) string {
	if d.Start < 0 || d.End > int32(len(src)) || d.Start > d.End {
		return ""
	}
	text := src[d.Start:d.End]
	switch d.Kind {
	case "function", "method", "constructor", "class", "getter", "setter", "macro":
		from := max(int(d.NameAt-d.Start), 0)
		depth := 0
	scan:
		for i := from; i < len(text); i++ {
			switch c := text[i]; c {
			case '(', '[', '<':
				depth++
			case ')', ']', '>':
				if depth > 0 && !(c == '>' && i > 0 && text[i-1] == '-') {
					depth--
				}
			case '{':
				if depth == 0 {
					text = text[:i]
					break scan
				}
			case ':':
				if depth == 0 && (i+1 == len(text) || text[i+1] == '\n' || text[i+1] == '\r') {
					text = text[:i]
					break scan
				}
			}
		}
	}
	return strings.Join(strings.Fields(string(text)), " ")
}

// dependents lists the files using changed (definitions of rel, as the
// old version had them).
func (v View) dependents(l *lang.Language, rel string, changed []record.Def, max int) Dependents {
	var out Dependents
	seen := map[string]bool{rel: true}
	var callers, named []string
	add := func(list *[]string, f string) {
		if !seen[f] {
			seen[f] = true
			*list = append(*list, f)
		}
	}
	e := v.Snap.Entry(rel)
	var ts []snap.Target
	var unfound []string
	for _, c := range changed {
		q := c.Name
		if c.Container != "" {
			q = c.Container + "." + c.Name
		}
		out.Changed = append(out.Changed, q)
		found := false
		if e != nil {
			for i := range e.Defs {
				if d := &e.Defs[i]; !d.Local && keyOf(d) == keyOf(&c) {
					ts = append(ts, snap.Target{File: e, Def: int32(i)})
					found = true
				}
			}
		}
		if !found {
			unfound = append(unfound, c.Name)
		}
	}
	for _, set := range v.callersOf(ts) {
		for _, list := range [][]Site{set.calls, set.values, set.types} {
			for _, s := range list {
				if s.Class == Exact || s.Class == ViaImport || s.Class == Implementation {
					add(&callers, s.File)
				}
			}
		}
	}
	for _, name := range unfound {
		for _, id := range v.refFiles(l, name) {
			add(&named, v.Snap.Rel(id))
		}
	}
	slices.Sort(callers)
	slices.Sort(named)
	all := append(callers, named...)
	if len(all) > max {
		out.More = len(all) - max
		all = all[:max]
	}
	out.Files = all
	return out
}
