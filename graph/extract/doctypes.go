package extract

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/record"
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
func docImports(f *record.Record, ex *Extractor, docs []docAt) {
	if ex.docImport == nil {
		return
	}
	for _, dc := range docs {
		if !dc.module {
			continue
		}
		for _, m := range ex.docImport.FindAllStringSubmatchIndex(dc.text, -1) {
			mod, name, local := dc.text[m[2]:m[3]], dc.text[m[4]:m[5]], dc.text[m[6]:m[7]]
			if slices.ContainsFunc(f.Imports, func(im record.Import) bool { return im.Local == local }) {
				continue
			}
			line := dc.line + int32(strings.Count(dc.text[:m[0]], "\n"))
			f.Imports = append(f.Imports, record.Import{Module: intern(mod), Name: intern(name), Local: intern(local), Line: line})
		}
	}
}

// docField is a field whose doc comment gives its type (/** @type
// {Option[]} */ this.options = []): the field, and the comment's type.
type docField struct {
	fd   record.Field
	text string
}

// DocForm is one rule of language.json's doc_types: a type written
// in a comment (JSDoc's {Sock[]}) that matches the expression is of the
// form named, its submatches its parts, in order. The rules are tried in
// order; a text none matches is opaque.
type DocForm struct {
	Form  string   `json:"form"`
	Match string   `json:"match"`
	Parts []string `json:"parts"`
}

type docForm struct {
	form  uint8
	re    *regexp.Regexp
	parts []uint8
}

func loadDocForms(cs []DocForm) ([]docForm, error) {
	var out []docForm
	for _, c := range cs {
		f := slices.Index(record.FormNames[:], c.Form)
		if f <= 0 {
			return nil, fmt.Errorf("form %q is none of %s", c.Form, strings.Join(record.FormNames[1:], " "))
		}
		re, err := regexp.Compile(c.Match)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Form, err)
		}
		if re.NumSubexp() != len(c.Parts) {
			return nil, fmt.Errorf("%s: %q has %d groups for %d parts", c.Form, c.Match, re.NumSubexp(), len(c.Parts))
		}
		df := docForm{form: uint8(f), re: re}
		for _, p := range c.Parts {
			k := slices.Index(record.PartNames[:], p)
			if k <= 0 || !slices.Contains(formParts[f], uint8(k)) {
				return nil, fmt.Errorf("%s: part %q is not one of the form's", c.Form, p)
			}
			df.parts = append(df.parts, uint8(k))
		}
		out = append(out, df)
	}
	return out, nil
}

// docType appends the tree of a type written in a comment, read by the
// language's doc_types rules (1-based id).
func (b *treeBuilder) docType(ex *Extractor, s string) int32 {
	root := int32(len(b.types))
	b.emitDoc(ex, strings.TrimSpace(s), record.PNone, 0)
	return root + 1
}

func (b *treeBuilder) emitDoc(ex *Extractor, s string, p uint8, depth int) {
	i := len(b.types)
	b.types = append(b.types, record.TypeNode{Part: p, Text: b.tab.raw(s)})
	defer func() { b.types[i].Last = int32(len(b.types)) }()
	if depth > record.MaxTypeDepth || len(b.types) > maxTypeNodes+i {
		return
	}
	for _, df := range ex.docForms {
		m := df.re.FindStringSubmatchIndex(s)
		if m == nil {
			continue
		}
		switch df.form {
		case record.TName:
			b.types[i].Name = b.tab.raw(s)
		case record.TPath:
			if len(df.parts) < 2 {
				return
			}
			b.types[i].Name = b.tab.raw(strings.TrimRight(s[:m[2*len(df.parts)]], ".: "))
		}
		b.types[i].Form = df.form
		for k, part := range df.parts {
			if m[2+2*k] >= 0 {
				b.emitDoc(ex, strings.TrimSpace(s[m[2+2*k]:m[3+2*k]]), part, depth+1)
			}
		}
		return
	}
}

// docTypes reads the types a doc comment declares (JSDoc @param {T} x,
// @returns {T}) into the function's untyped parameters and its result,
// by the language's doc_param and doc_return expressions, as trees by its
// doc_types. A type the language defines (Object, Function) says nothing
// about user methods: it is left out, so such a receiver stays a ranked
// candidate. A local two patterns typed differently (untyped) stays
// untyped.
func docTypes(f *record.Record, ex *Extractor, docs []docAt, tab *table, tb *treeBuilder, untyped map[localAt]bool) {
	if len(docs) == 0 || ex.docParam == nil || tb == nil {
		return
	}
	tree := func(text string) int32 { return docTree(f, ex, tab, tb, text) }
	for _, dc := range docs {
		if dc.module {
			continue
		}
		fn := f.EnclosingAt(dc.start)
		if fn < 0 {
			continue
		}
		if ex.docReturn != nil && f.Defs[fn].Type == "" {
			if m := ex.docReturn.FindStringSubmatch(dc.text); m != nil {
				if t := tree(m[1]); t != 0 {
					f.Defs[fn].Type, f.Defs[fn].T, f.Defs[fn].X = strings.TrimSpace(m[1]), t, 0
				}
			}
		}
		for _, m := range ex.docParam.FindAllStringSubmatch(dc.text, -1) {
			t := tree(m[1])
			if t == 0 {
				continue
			}
			// The parameter of that name, in the parameter list.
			for _, i := range f.LocalsNamed(m[2]) {
				if lc := &f.Locals[i]; lc.Encl == fn && lc.At >= dc.start && lc.At < dc.end && lc.How == record.TypeNone && !untyped[localAt{lc.At, lc.End, lc.Name}] {
					lc.Type, lc.How, lc.T, lc.X = tab.id(strings.TrimSpace(m[1])), record.TypeParam, t, 0
				}
			}
		}
	}
	f.Strs = tab.strs
}

// docTree is the tree of a type written in a comment, 0 when it names no
// type of the index (a type the language defines, Object or Function,
// says nothing about user methods).
func docTree(f *record.Record, ex *Extractor, tab *table, tb *treeBuilder, text string) int32 {
	root := tb.docType(ex, text)
	f.Types, f.Strs = tb.types, tab.strs
	t := root
	if e, _ := f.ElemOf(ex.names.Generics(), t); e != 0 { // {Sock[]}, {Array<Sock>}
		t = e
	}
	if _, n, _ := f.TypeName(ex.names.Generics(), t); n == "" || ex.names.IsBuiltin(n) {
		return 0
	}
	return root
}

// typedDocFields are the fields whose doc comments give a type the index can
// use, typed by it.
func typedDocFields(f *record.Record, ex *Extractor, dfs []docField, tab *table, tb *treeBuilder) []record.Field {
	if tb == nil {
		return nil
	}
	var out []record.Field
	for _, df := range dfs {
		if t := docTree(f, ex, tab, tb, df.text); t != 0 {
			fd := df.fd
			fd.Type, fd.How, fd.T = intern(strings.TrimSpace(df.text)), record.TypeDeclared, t
			out = append(out, fd)
		}
	}
	f.Strs = tab.strs
	return out
}
