package graph

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// importRule is how one language's import paths name files in the index.
// language.json's "imports" picks a registered rule by name; its data
// (suffixes, init file, separator, ...) comes from the same file, so the
// resolver knows only the order in which it tries imports.
type importRule interface {
	// files maps an import path written in f to the files it names; known
	// is false when it names nothing in the index (a standard or
	// third-party module).
	files(x *Index, f *File, module string) (fs []*File, known bool)
	// modules lists the module names a file answers to, for rules that
	// look a module up by its name (a/b/c.py is a.b.c); nil otherwise.
	modules(rel string) []string
	// separator joins a module and a name inside it (a.b, a::b); "" where
	// import paths are not written in code.
	separator() string
	// isPath says a receiver written in code is itself a module path
	// (a.b.f(), crate::a::f(), crate::f()).
	isPath(recv string) bool
	// defaultLocal is the name an import without an alias binds.
	defaultLocal(module string, files []*File) string
	// bindsNames says imports name definitions (from m import f), so the
	// names they give a definition are followed.
	bindsNames() bool
	// textual says an import is the imported file's text (#include): its
	// names are the includer's, and what a header declares is defined in
	// the sources beside it with its base name.
	textual() bool
	// manifest is the name of the file that declares the module path of
	// its folder (go.mod), "" for none; modulePath reads that path.
	manifest() string
	modulePath(data []byte) string
}

// importData is what language.json gives a rule; each rule reads some of
// these keys, and a key its rule does not read is an error.
type importData struct {
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
func (d importData) keys() []string {
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
	make               func(importData) importRule
}

var importRules = map[string]ruleSpec{
	"none": {make: func(importData) importRule { return noImports{} }},
	"go": {required: []string{"manifest"},
		make: func(d importData) importRule { return goImports{manifestName: d.Manifest} }},
	"dotted": {required: []string{"module_separator"}, optional: []string{"init_file", "resolve"},
		make: func(d importData) importRule {
			return dottedImports{sep: d.Separator, init: d.InitFile, resolve: d.Resolve}
		}},
	"relative": {optional: []string{"resolve", "replace_extensions"},
		make: func(d importData) importRule { return relativeImports{resolve: d.Resolve, replace: d.Replace} }},
	"rust": {required: []string{"module_separator", "path_root", "path_self", "path_parent", "root_files", "source_dir", "resolve"}, optional: []string{"init_file"},
		make: func(d importData) importRule { return crateImports{d: d} }},
	"include": {make: func(importData) importRule { return includeImports{} }},
}

// newImportRule checks a language's rule name and data and makes the rule.
func newImportRule(name string, d importData) (importRule, error) {
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

func (noImports) files(*Index, *File, string) ([]*File, bool) { return nil, false }
func (noImports) modules(string) []string                     { return nil }
func (noImports) separator() string                           { return "" }
func (noImports) isPath(string) bool                          { return false }
func (noImports) defaultLocal(string, []*File) string         { return "" }
func (noImports) bindsNames() bool                            { return false }
func (noImports) textual() bool                               { return false }
func (noImports) manifest() string                            { return "" }
func (noImports) modulePath([]byte) string                    { return "" }

// goImports: an import path is a package folder, under the manifest
// (go.mod) that declares the longest prefix of it.
type goImports struct {
	noImports
	manifestName string
}

func (r goImports) manifest() string { return r.manifestName }

// modulePath is the manifest's module directive.
func (goImports) modulePath(data []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

func (goImports) files(x *Index, f *File, module string) ([]*File, bool) {
	ix := x.langIx[f.Lang]
	for _, m := range x.mods {
		if module == m.path || strings.HasPrefix(module, m.path+"/") {
			return nonEmpty(ix.dirs[path.Join(m.dir, strings.TrimPrefix(module, m.path))])
		}
		if m.path == "std" {
			// The standard library's import paths carry no module prefix.
			if fs, ok := nonEmpty(ix.dirs[path.Join(m.dir, module)]); ok {
				return fs, ok
			}
		}
	}
	return nonEmpty(ix.dirs[module])
}

// defaultLocal is the package's declared name, else the path's last
// element that is not a major version (v2). Build tags are not read, so
// the name most files declare wins (a generator beside them is package
// main), then the path's element, then the first in order: never the
// order the files were read in.
func (goImports) defaultLocal(module string, files []*File) string {
	base := path.Base(module)
	if len(base) > 1 && base[0] == 'v' && strings.Trim(base[1:], "0123456789") == "" {
		base = path.Base(path.Dir(module))
	}
	best, most := "", 0
	count := map[string]int{}
	for _, g := range files {
		if g.Package == "" || strings.HasSuffix(g.Package, "_test") {
			continue
		}
		count[g.Package]++
		n := count[g.Package]
		if n > most || n == most && (g.Package == base || best != base && g.Package < best) {
			best, most = g.Package, n
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
func (r dottedImports) modules(rel string) []string {
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

func (r dottedImports) files(x *Index, f *File, module string) ([]*File, bool) {
	ix := x.langIx[f.Lang]
	if strings.HasPrefix(module, r.sep) {
		dots, rest := 0, module
		for strings.HasPrefix(rest, r.sep) {
			dots, rest = dots+1, rest[len(r.sep):]
		}
		base := f.Dir
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
					if g := x.files[path.Join(base, name)]; g != nil {
						return []*File{g}, true
					}
				}
			}
			return nil, false
		}
		for _, ext := range r.resolve {
			if g := x.files[p+ext]; g != nil {
				return []*File{g}, true
			}
		}
		return nil, false
	}
	if fs := ix.modules[module]; len(fs) > 0 {
		return r.narrow(fs, module), true
	}
	dir := strings.ReplaceAll(module, r.sep, "/")
	var out []*File
	for d, fs := range ix.dirs {
		if d == dir || strings.HasSuffix(d, "/"+dir) {
			out = append(out, fs...)
		}
	}
	return nonEmpty(out)
}

// narrow prefers the file whose whole path is the module (a.b.c is
// a/b/c.py) over those it is only a suffix of.
func (r dottedImports) narrow(fs []*File, module string) []*File {
	for _, g := range fs {
		if r.modules(g.Rel)[0] == module {
			return []*File{g}
		}
	}
	return fs
}

func (r dottedImports) separator() string                          { return r.sep }
func (r dottedImports) isPath(recv string) bool                    { return strings.Contains(recv, r.sep) }
func (dottedImports) defaultLocal(module string, _ []*File) string { return module }
func (dottedImports) bindsNames() bool                             { return true }

// relativeImports: only a path starting with "." names a file, beside the
// importer, as written or with one of the resolve suffixes.
type relativeImports struct {
	noImports
	resolve, replace []string
}

func (r relativeImports) files(x *Index, f *File, module string) ([]*File, bool) {
	if !strings.HasPrefix(module, ".") {
		return nil, false
	}
	p := path.Join(f.Dir, module)
	if g := x.files[p]; g != nil {
		return []*File{g}, true
	}
	// A path may name a file by its output's extension (./b.js for b.ts).
	stems := []string{p}
	if ext := path.Ext(p); ext != "" && slices.Contains(r.replace, ext) {
		stems = append(stems, strings.TrimSuffix(p, ext))
	}
	for _, stem := range stems {
		for _, ext := range r.resolve {
			if g := x.files[stem+ext]; g != nil {
				return []*File{g}, true
			}
		}
	}
	return nil, false
}

func (relativeImports) bindsNames() bool { return true }

// crateImports: a path of segments from the package's root (path_root),
// the file's own module (path_self), the module above (path_parent), or,
// bare, from the root or the file's module; a module is
// <source_dir>/a/b<resolve suffix>, the root one of root_files.
type crateImports struct {
	noImports
	d importData
}

func (r crateImports) files(x *Index, f *File, module string) ([]*File, bool) {
	segs := strings.Split(module, r.d.Separator)
	crate, here := r.module(f.Rel)
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
		if fs, ok := r.find(x, crate, append(append([]string{}, here...), segs...)); ok {
			return fs, ok
		}
	}
	return r.find(x, crate, segs)
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
func (r crateImports) find(x *Index, crate string, segs []string) ([]*File, bool) {
	join := func(parts ...string) string {
		return strings.TrimPrefix(path.Join(parts...), "/")
	}
	if len(segs) == 0 {
		for _, n := range r.d.RootFiles {
			if g := x.files[join(crate, n)]; g != nil {
				return []*File{g}, true
			}
		}
		return nil, false
	}
	p := join(append([]string{crate}, segs...)...)
	for _, ext := range r.d.Resolve {
		if g := x.files[p+ext]; g != nil {
			return []*File{g}, true
		}
	}
	return nil, false
}

func (r crateImports) separator() string { return r.d.Separator }
func (r crateImports) isPath(recv string) bool {
	return strings.Contains(recv, r.d.Separator) || recv == r.d.Root || recv == r.d.Self || recv == r.d.Parent
}
func (r crateImports) defaultLocal(module string, _ []*File) string {
	if i := strings.LastIndex(module, r.d.Separator); i >= 0 {
		return module[i+len(r.d.Separator):]
	}
	return module
}
func (crateImports) bindsNames() bool { return true }

// includeImports: an include names a file beside the includer, else any
// file whose path ends with it.
type includeImports struct{ noImports }

func (includeImports) files(x *Index, f *File, module string) ([]*File, bool) {
	if g := x.files[path.Join(f.Dir, module)]; g != nil {
		return []*File{g}, true
	}
	var out []*File
	for _, g := range x.langIx[f.Lang].base[path.Base(module)] {
		if g.Rel == module || strings.HasSuffix(g.Rel, "/"+module) {
			out = append(out, g)
		}
	}
	return nonEmpty(out)
}

func (includeImports) textual() bool { return true }

func nonEmpty(fs []*File) ([]*File, bool) { return fs, len(fs) > 0 }
