package lang

import "strings"

// docAt is a doc comment and the parameter list of the function it
// documents (byte range).
type docAt struct {
	start, end int32
	text       string
}

// docTypes reads the types a doc comment declares (JSDoc @param {T} x,
// @returns {T}) into the function's untyped parameters and its result,
// by the language's doc_param and doc_return expressions. A type the
// language defines (Object, Function) says nothing about user methods:
// it is left out, so such a receiver stays a ranked candidate.
func (f *Record) docTypes(l *Language, docs []docAt, tab *table) {
	if len(docs) == 0 || l.docParam == nil {
		return
	}
	usable := func(t string) bool {
		if e := l.ElemType(t); e != "" { // {Sock[]}, {Array<Sock>}
			t = e
		}
		_, n := l.NormType(t)
		return n != "" && !l.builtins[n]
	}
	for _, dc := range docs {
		fn := f.EnclosingAt(dc.start)
		if fn < 0 {
			continue
		}
		if l.docReturn != nil && f.Defs[fn].Type == "" {
			if m := l.docReturn.FindStringSubmatch(dc.text); m != nil && usable(m[1]) {
				f.Defs[fn].Type, f.Defs[fn].T, f.Defs[fn].X = strings.TrimSpace(m[1]), 0, 0
			}
		}
		for _, m := range l.docParam.FindAllStringSubmatch(dc.text, -1) {
			if !usable(m[1]) {
				continue
			}
			// The parameter of that name, in the parameter list.
			for _, i := range f.LocalsNamed(m[2]) {
				if lc := &f.Locals[i]; lc.Encl == fn && lc.At >= dc.start && lc.At < dc.end && lc.How == TypeNone && !lc.conflict {
					lc.Type, lc.How, lc.T, lc.X = tab.id(strings.TrimSpace(m[1])), TypeParam, 0, 0
				}
			}
		}
	}
	f.Strs = tab.strs
}
