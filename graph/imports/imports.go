// Package imports is how a language's import paths name files in the
// code graph's index: the registered rules (go, dotted, relative, rust,
// include, none), each made from the data its language.json gives, and
// the View of the index's tables they read. It knows no language's
// queries, no record and no resolution: the resolver asks a file's rule
// which files an import names.
package imports

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// FileID names a file in a snapshot of the index (View).
type FileID uint32

// Module is a module path a manifest (go.mod) declares for its folder.
type Module struct{ Path, Dir string }

// View is what an import rule reads of the index: which files exist, and
// the per-language tables of folders, dotted module names and file
// names, by the language's index in its set (lang.Language.Index). Every
// list is in path order.
type View interface {
	// Lookup is the file at a path relative to the root.
	Lookup(rel string) (FileID, bool)
	// Dir lists the files of language l in a folder.
	Dir(l int, dir string) []FileID
	// EachDir calls fn with every folder holding files of l, in path
	// order, until it returns false.
	EachDir(l int, fn func(dir string, ids []FileID) bool)
	// Module lists the files of l that answer to a module name (the
	// rule's Modules).
	Module(l int, name string) []FileID
	// Base lists the files of l with a file name.
	Base(l int, base string) []FileID
	// Modules are the manifests' module paths, longest first.
	Modules() []Module
	// Rel is a file's path.
	Rel(id FileID) string
}

// Rule is how one language's import paths name files in the index.
// language.json's "imports" picks a registered rule by name; its data
// (suffixes, init file, separator, ...) comes from the same file, so the
// resolver knows only the order in which it tries imports.
type Rule interface {
	// Files maps an import path written in the file fromRel (of language
	// from, by its index) to the files it names; known is false when it names nothing in
	// the index (a standard or third-party module).
	Files(v View, from int, fromRel, module string) (ids []FileID, known bool)
	// Modules lists the module names a file answers to, for rules that
	// look a module up by its name (a/b/c.py is a.b.c); nil otherwise.
	Modules(rel string) []string
	// Separator joins a module and a name inside it (a.b, a::b); "" where
	// import paths are not written in code.
	Separator() string
	// IsPath says a receiver written in code is itself a module path
	// (a.b.f(), crate::a::f(), crate::f()).
	IsPath(recv string) bool
	// DefaultLocal is the name an import without an alias binds, given
	// the package names the module's files declare.
	DefaultLocal(module string, packages []string) string
	// BindsNames says imports name definitions (from m import f), so the
	// names they give a definition are followed.
	BindsNames() bool
	// Textual says an import is the imported file's text (#include): its
	// names are the includer's, and what a header declares is defined in
	// the sources beside it with its base name.
	Textual() bool
	// Manifest is the name of the file that declares the module path of
	// its folder (go.mod), "" for none; ModulePath reads that path.
	Manifest() string
	ModulePath(data []byte) string
}

// Data is what language.json gives a rule; each rule reads some of
// these keys, and a key its rule does not read is an error.
type Data struct {
	Separator string   // module_separator: between a path's segments
	InitFile  string   // init_file: the file, without extension, that is its folder's module (__init__, mod)
	Resolve   []string // resolve: suffixes tried after a path, in order
	Replace   []string // replace_extensions: an extension a path may name in place of the file's (./b.js for b.ts)
	Root      string   // path_root: the first segment naming the package's root (crate)
	Self      string   // path_self: ... naming the file's own module (self)
	Parent    string   // path_parent: ... naming the module above (super)
	RootFiles []string // root_files: the files that are a package's root module, in order (lib.rs)
	SourceDir string   // source_dir: the folder a package's modules sit under (src)
	Manifest  string   // manifest: the file declaring its folder's module path (go.mod)
}

// keys lists the rule keys d sets.
func (d Data) keys() []string {
	var out []string
	for k, set := range map[string]bool{
		"module_separator": d.Separator != "", "init_file": d.InitFile != "", "resolve": len(d.Resolve) > 0,
		"replace_extensions": len(d.Replace) > 0, "path_root": d.Root != "", "path_self": d.Self != "",
		"path_parent": d.Parent != "", "root_files": len(d.RootFiles) > 0, "source_dir": d.SourceDir != "",
		"manifest": d.Manifest != "",
	} {
		if set {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// ruleSpec registers a rule: the keys it needs, those it may read, and
// how it is made from them.
type ruleSpec struct {
	required, optional []string
	make               func(Data) Rule
}

var importRules = map[string]ruleSpec{
	"none": {make: func(Data) Rule { return noImports{} }},
	"go": {required: []string{"manifest"},
		make: func(d Data) Rule { return goImports{manifestName: d.Manifest} }},
	"dotted": {required: []string{"module_separator"}, optional: []string{"init_file", "resolve"},
		make: func(d Data) Rule {
			return dottedImports{sep: d.Separator, init: d.InitFile, resolve: d.Resolve}
		}},
	"relative": {optional: []string{"resolve", "replace_extensions"},
		make: func(d Data) Rule { return relativeImports{resolve: d.Resolve, replace: d.Replace} }},
	"rust": {required: []string{"module_separator", "path_root", "path_self", "path_parent", "root_files", "source_dir", "resolve"}, optional: []string{"init_file"},
		make: func(d Data) Rule { return crateImports{d: d} }},
	"include": {make: func(Data) Rule { return includeImports{} }},
}

// New checks a language's rule name and data and makes the rule.
func New(name string, d Data) (Rule, error) {
	spec, ok := importRules[name]
	if !ok {
		var names []string
		for n := range importRules {
			names = append(names, n)
		}
		sort.Strings(names)
		return nil, fmt.Errorf("imports %q is not one of %s", name, strings.Join(names, ", "))
	}
	set := d.keys()
	for _, k := range set {
		if !slices.Contains(spec.required, k) && !slices.Contains(spec.optional, k) {
			return nil, fmt.Errorf("imports %q does not read %q", name, k)
		}
	}
	for _, k := range spec.required {
		if !slices.Contains(set, k) {
			return nil, fmt.Errorf("imports %q needs %q", name, k)
		}
	}
	return spec.make(d), nil
}

// noImports is the rule of a language without imports, and every rule's
// defaults.
type noImports struct{}

func (noImports) Files(View, int, string, string) ([]FileID, bool) { return nil, false }

func (noImports) Modules(string) []string { return nil }

func (noImports) Separator() string { return "" }

func (noImports) IsPath(string) bool { return false }

func (noImports) DefaultLocal(string, []string) string { return "" }

func (noImports) BindsNames() bool { return false }

func (noImports) Textual() bool { return false }

func (noImports) Manifest() string { return "" }

func (noImports) ModulePath([]byte) string { return "" }

// goImports: an import path is a package folder, under the manifest
// (go.mod) that declares the longest prefix of it.
type goImports struct {
	noImports
	manifestName string
}

func (r goImports) Manifest() string { return r.manifestName }

// modulePath is the manifest's module directive.
func (goImports) ModulePath(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

func (goImports) Files(v View, l int, _, module string) ([]FileID, bool) {
	for _, m := range v.Modules() {
		if module == m.Path || strings.HasPrefix(module, m.Path+"/") {
			return nonEmpty(v.Dir(l, path.Join(m.Dir, strings.TrimPrefix(module, m.Path))))
		}
		if m.Path == "std" {
			// The standard library's import paths carry no module prefix.
			if fs, ok := nonEmpty(v.Dir(l, path.Join(m.Dir, module))); ok {
				return fs, ok
			}
		}
	}
	return nonEmpty(v.Dir(l, module))
}

// defaultLocal is the package's declared name, else the path's last
// element that is not a major version (v2). Build tags are not read, so
// the name most files declare wins (a generator beside them is package
// main), then the path's element, then the first in order: never the
// order the files were read in.
func (goImports) DefaultLocal(module string, packages []string) string {
	base := path.Base(module)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(module))
	}
	best, most := "", 0
	count := map[string]int{}
	for _, p := range packages {
		if p == "" || strings.HasSuffix(p, "_test") {
			continue
		}
		count[p]++
		n := count[p]
		if n > most || n == most && (p == base || best != base && p < best) {
			best, most = p, n
		}
	}
	if best != "" {
		return best
	}
	return base
}

// dottedImports: a module path is a file's path with separators (a.b.c is
// a/b/c.ext, or a/b/c/<init_file>.ext), found by any suffix of the path
// (src layouts); a leading separator per level up is relative.
type dottedImports struct {
	noImports
	sep, init string
	resolve   []string
}

// modules: a/b/c.py is a.b.c, a/b/__init__.py is a.b, and every shorter
// suffix of those.
func (r dottedImports) Modules(rel string) []string {
	p := strings.TrimSuffix(rel, path.Ext(rel))
	if r.init != "" {
		p = strings.TrimSuffix(p, "/"+r.init)
	}
	parts := strings.Split(p, "/")
	out := make([]string, 0, len(parts))
	for i := range parts {
		out = append(out, strings.Join(parts[i:], r.sep))
	}
	return out
}

func (r dottedImports) Files(v View, l int, fromRel, module string) ([]FileID, bool) {
	if strings.HasPrefix(module, r.sep) {
		dots, rest := 0, module
		for strings.HasPrefix(rest, r.sep) {
			dots, rest = dots+1, rest[len(r.sep):]
		}
		base := path.Dir(fromRel)
		for i := 1; i < dots; i++ {
			base = path.Dir(base)
		}
		rest = strings.ReplaceAll(rest, r.sep, "/")
		p := path.Join(base, rest)
		if rest == "" {
			// The package itself (from . import f): its folder's init file,
			// by the resolve suffixes that name a file in the folder.
			for _, ext := range r.resolve {
				if name, ok := strings.CutPrefix(ext, "/"); ok {
					if g, ok := v.Lookup(path.Join(base, name)); ok {
						return []FileID{g}, true
					}
				}
			}
			return nil, false
		}
		for _, ext := range r.resolve {
			if g, ok := v.Lookup(p + ext); ok {
				return []FileID{g}, true
			}
		}
		return nil, false
	}
	if fs := v.Module(l, module); len(fs) > 0 {
		return r.narrow(v, fs, module), true
	}
	dir := strings.ReplaceAll(module, r.sep, "/")
	var out []FileID
	v.EachDir(l, func(d string, fs []FileID) bool {
		if d == dir || strings.HasSuffix(d, "/"+dir) {
			out = append(out, fs...)
		}
		return true
	})
	return nonEmpty(out)
}

// narrow prefers the file whose whole path is the module (a.b.c is
// a/b/c.py) over those it is only a suffix of.
func (r dottedImports) narrow(v View, fs []FileID, module string) []FileID {
	for _, g := range fs {
		if r.Modules(v.Rel(g))[0] == module {
			return []FileID{g}
		}
	}
	return fs
}

func (r dottedImports) Separator() string { return r.sep }

func (r dottedImports) IsPath(recv string) bool { return strings.Contains(recv, r.sep) }

func (dottedImports) DefaultLocal(module string, _ []string) string { return module }

func (dottedImports) BindsNames() bool { return true }

// relativeImports: only a path starting with "." names a file, beside the
// importer, as written or with one of the resolve suffixes.
type relativeImports struct {
	noImports
	resolve, replace []string
}

func (r relativeImports) Files(v View, _ int, fromRel, module string) ([]FileID, bool) {
	if !strings.HasPrefix(module, ".") {
		return nil, false
	}
	p := path.Join(path.Dir(fromRel), module)
	if g, ok := v.Lookup(p); ok {
		return []FileID{g}, true
	}
	// A path may name a file by its output's extension (./b.js for b.ts).
	stems := []string{p}
	if ext := path.Ext(p); ext != "" && slices.Contains(r.replace, ext) {
		stems = append(stems, strings.TrimSuffix(p, ext))
	}
	for _, stem := range stems {
		for _, ext := range r.resolve {
			if g, ok := v.Lookup(stem + ext); ok {
				return []FileID{g}, true
			}
		}
	}
	return nil, false
}

func (relativeImports) BindsNames() bool { return true }

// crateImports: a path of segments from the package's root (path_root),
// the file's own module (path_self), the module above (path_parent), or,
// bare, from the root or the file's module; a module is
// <source_dir>/a/b<resolve suffix>, the root one of root_files.
type crateImports struct {
	noImports
	d Data
}

func (r crateImports) Files(v View, _ int, fromRel, module string) ([]FileID, bool) {
	segs := strings.Split(module, r.d.Separator)
	crate, here := r.module(fromRel)
	switch segs[0] {
	case r.d.Root:
		segs = segs[1:]
	case r.d.Self:
		segs = append(here, segs[1:]...)
	case r.d.Parent:
		up := here
		for len(segs) > 0 && segs[0] == r.d.Parent {
			if len(up) > 0 {
				up = up[:len(up)-1]
			}
			segs = segs[1:]
		}
		segs = append(append([]string{}, up...), segs...)
	default:
		// A bare path: a module of this crate named from its root
		// (2015 style) or a module declared here.
		if fs, ok := r.find(v, crate, append(append([]string{}, here...), segs...)); ok {
			return fs, ok
		}
	}
	return r.find(v, crate, segs)
}

// module splits a file's path into its package's source folder and its
// module path there: src/a/b.rs is (src, [a b]); src/a/mod.rs, src/lib.rs
// and src/main.rs name their folder.
func (r crateImports) module(rel string) (string, []string) {
	stem := strings.TrimSuffix(rel, path.Ext(rel))
	crate := ""
	rest := stem
	if i := strings.LastIndex("/"+stem, "/"+r.d.SourceDir+"/"); i >= 0 {
		crate = strings.TrimSuffix(("/" + stem)[:i+1+len(r.d.SourceDir)], "/")
		crate = strings.TrimPrefix(crate, "/")
		rest = strings.TrimPrefix(stem[len(crate):], "/")
	}
	segs := strings.Split(rest, "/")
	if last := segs[len(segs)-1]; last == r.d.InitFile && last != "" || slices.ContainsFunc(r.d.RootFiles, func(n string) bool { return strings.TrimSuffix(n, path.Ext(n)) == last }) {
		segs = segs[:len(segs)-1]
	}
	if len(segs) == 1 && segs[0] == "" {
		segs = nil
	}
	return crate, segs
}

// find is the file of module segs in crate: crate/a/b.rs or
// crate/a/b/mod.rs; the crate's root for no segments. An item's path
// (crate::a::b::Item) names no file: its module is one shorter.
func (r crateImports) find(v View, crate string, segs []string) ([]FileID, bool) {
	join := func(parts ...string) string {
		return strings.TrimPrefix(path.Join(parts...), "/")
	}
	if len(segs) == 0 {
		for _, n := range r.d.RootFiles {
			if g, ok := v.Lookup(join(crate, n)); ok {
				return []FileID{g}, true
			}
		}
		return nil, false
	}
	p := join(append([]string{crate}, segs...)...)
	for _, ext := range r.d.Resolve {
		if g, ok := v.Lookup(p + ext); ok {
			return []FileID{g}, true
		}
	}
	return nil, false
}

func (r crateImports) Separator() string { return r.d.Separator }

func (r crateImports) IsPath(recv string) bool {
	return strings.Contains(recv, r.d.Separator) || recv == r.d.Root || recv == r.d.Self || recv == r.d.Parent
}

func (r crateImports) DefaultLocal(module string, _ []string) string {
	if i := strings.LastIndex(module, r.d.Separator); i >= 0 {
		return module[i+len(r.d.Separator):]
	}
	return module
}

func (crateImports) BindsNames() bool { return true }

// includeImports: an include names a file beside the includer, else any
// file whose path ends with it.
type includeImports struct{ noImports }

func (includeImports) Files(v View, l int, fromRel, module string) ([]FileID, bool) {
	if g, ok := v.Lookup(path.Join(path.Dir(fromRel), module)); ok {
		return []FileID{g}, true
	}
	var out []FileID
	for _, g := range v.Base(l, path.Base(module)) {
		if rel := v.Rel(g); rel == module || strings.HasSuffix(rel, "/"+module) {
			out = append(out, g)
		}
	}
	return nonEmpty(out)
}

func (includeImports) Textual() bool { return true }

func nonEmpty(fs []FileID) ([]FileID, bool) { return fs, len(fs) > 0 }
