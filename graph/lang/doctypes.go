package lang

import (
	"slices"
	"strings"
)

// docAt is a doc comment and the parameter list of the function it
// documents (byte range).
type docAt struct {
	start, end int32
	line       int32 // of the comment's first line, 1-based
	// module: a comment documenting no function, read for doc_import
	// only.
	module bool
	text   string
}

// docImports reads the imports a doc comment declares for types only
// (JSDoc @typedef {import("./command.js").Command} Command) by the
// language's doc_import expression (groups: module, name, local). A file
// that types its parameters by such a name then has them resolved like
// those of a file importing the class; a name the file already binds
// keeps its binding.
func (f *Record) docImports(l *Language, docs []docAt) {
	if l.docImport == nil {
		return
	}
	for _, dc := range docs {
		if !dc.module {
			continue
		}
		for _, m := range l.docImport.FindAllStringSubmatchIndex(dc.text, -1) {
			mod, name, local := dc.text[m[2]:m[3]], dc.text[m[4]:m[5]], dc.text[m[6]:m[7]]
			if slices.ContainsFunc(f.Imports, func(im Import) bool { return im.Local == local }) {
				continue
			}
			line := dc.line + int32(strings.Count(dc.text[:m[0]], "\n"))
			f.Imports = append(f.Imports, Import{Module: intern(mod), Name: intern(name), Local: intern(local), Line: line})
		}
	}
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
	usable := l.docUsable
	for _, dc := range docs {
		if dc.module {
			continue
		}
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

// docUsable says whether a doc comment's type names a type of the index
// (or a collection of one): Object or Function say nothing of user
// methods.
func (l *Language) docUsable(t string) bool {
	if e := l.ElemType(t); e != "" { // {Sock[]}, {Array<Sock>}
		t = e
	}
	_, n := l.NormType(t)
	return n != "" && !l.builtins[n]
}

// docFieldType is the type a field's doc comment declares (language.json
// doc_type), or "" when it declares none the index can use.
func (l *Language) docFieldType(text string) string {
	if l.docType == nil {
		return ""
	}
	m := l.docType.FindStringSubmatch(text)
	if m == nil || !l.docUsable(m[1]) {
		return ""
	}
	return strings.TrimSpace(m[1])
}
