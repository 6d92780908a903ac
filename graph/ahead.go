package graph

import (
	"cmp"
	"context"
	"path"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve"
	"github.com/builtin-tools/builtin-tools/graph/resolve/types"
	"github.com/builtin-tools/builtin-tools/graph/snap"

	"github.com/builtin-tools/builtin-tools/internal/walk"
)

// Ahead builds, while the full build of x is still going, a snapshot of
// only the files a query about name needs (an index.Partial): those whose bytes hold the
// name (a literal scan, like astgrep's prefilter), every other file in the
// folders of the files that define it (the target's package, which
// same-package and import resolution read), and what resolving the
// callers reads (see callersNeed). Every other file of the tree is in it
// unparsed, so which modules and folders exist is as the full index
// knows. Any call site, import or alias of name holds its bytes, so
// callers and callees answer from it as the full index would (for
// callees, also the files that hold a name the definitions call);
// answers say how many files they came from (IndexState.Ahead).
// symbol is as the query gives it (pkg.Func, Type.Method,
// file.go:Func): its last identifier is scanned for. The view is nil for
// a tree under index.AheadMinFiles: the query waits for the whole build.
func Ahead(ctx context.Context, x *index.Index, symbol string, callees bool) (*View, error) {
	name := aheadName(symbol)
	if name == "" {
		return nil, &LookupError{"no name to look for in " + symbol}
	}
	sub, err := x.NewPartial(ctx)
	if sub == nil || err != nil {
		return nil, err
	}
	files := sub.Files()
	hit := sub.Scan(ctx, files, [][]byte{[]byte(name)}, false)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	file, _, _ := strings.Cut(symbol, ":")
	file = path.Clean(strings.TrimSpace(file))
	// A file the symbol names is read whatever it holds: the full index's
	// answer about it comes from its definitions.
	if err := parseWhere(ctx, sub, files, func(i int, e walk.Entry) bool { return hit[i] || e.Rel == file }); err != nil {
		return nil, err
	}
	// The folders of the files that define the name: their other files
	// hold the package's types, results and imports resolution may read.
	pkgs := map[string]bool{}
	for _, f := range sub.Parsed() {
		for i := range f.Defs {
			if f.Defs[i].Name == name {
				pkgs[f.Dir] = true
				break
			}
		}
	}
	if err := parseWhere(ctx, sub, files, func(_ int, e walk.Entry) bool { return pkgs[path.Dir(e.Rel)] }); err != nil {
		return nil, err
	}
	callers := sub.Parsed()
	if err := callersNeed(ctx, sub, callers, name); err != nil {
		return nil, err
	}
	if !callees {
		return aheadView(x, sub, false), nil
	}
	// The names the definitions call: their definitions and candidates.
	called := map[string]bool{}
	for _, f := range sub.Parsed() {
		for i := range f.Defs {
			d := &f.Defs[i]
			if d.Name != name {
				continue
			}
			for ri := range f.Refs {
				if r := &f.Refs[ri]; r.Kind == record.RefCall && r.At >= d.Start && r.At < d.End {
					called[f.Strs[r.Name]] = true
				}
			}
		}
	}
	var names [][]byte
	for n := range called {
		if n != name {
			names = append(names, []byte(n))
		}
	}
	rest := sub.Unparsed(files)
	third := sub.Scan(ctx, rest, names, false)
	if err := parseWhere(ctx, sub, rest, func(i int, _ walk.Entry) bool { return third[i] }); err != nil {
		return nil, err
	}
	return aheadView(x, sub, false), nil
}

// aheadView is the view of a partial snapshot: the index is not ready, and
// the answer says how many files it came from.
func aheadView(x *index.Index, p *index.Partial, namesOnly bool) *View {
	st := x.State()
	full := x.Snapshot()
	s := p.Snapshot()
	n := len(p.Files())
	return &View{Snap: s, R: resolve.New(s, nil), Lines: x,
		State: IndexState{Ready: false, Files: full.Len(), Found: max(st.Total, n), Ahead: len(p.ParsedSet()), NamesOnly: namesOnly, Total: n}}
}

// AheadFind is Ahead for find: the files whose bytes hold the query's
// name in any case, which hold every definition find ranks by the name
// (exact, any case, prefix, substring). Names that hold the query's
// letters only in order are in no literal scan: an answer from this
// view leaves them out and says so (IndexState.NamesOnly).
func AheadFind(ctx context.Context, x *index.Index, query string) (*View, error) {
	name := aheadName(query)
	if name == "" {
		return nil, &LookupError{"find needs a query: part of a name, or Type.Method"}
	}
	sub, err := x.NewPartial(ctx)
	if sub == nil || err != nil {
		return nil, err
	}
	files := sub.Files()
	hit := sub.Scan(ctx, files, [][]byte{[]byte(strings.ToLower(name))}, true)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := parseWhere(ctx, sub, files, func(i int, _ walk.Entry) bool { return hit[i] }); err != nil {
		return nil, err
	}
	return aheadView(x, sub, true), nil
}

// parseWhere parses the files of es that pick picks (i is the index in es).
func parseWhere(ctx context.Context, sub *index.Partial, es []walk.Entry, pick func(i int, e walk.Entry) bool) error {
	var picked []walk.Entry
	for i, e := range es {
		if pick(i, e) {
			picked = append(picked, e)
		}
	}
	return sub.Parse(ctx, picked)
}

// callersNeed parses what resolving the receivers of the calls named
// name in files reads beyond them:
//   - for each module a file with such a call imports, its smallest file,
//     unless one is parsed, when the module's path ends in a receiver's
//     first name or the file holds one: the local name an import binds
//     can be the package's declared name (Go);
//   - in each receiver, the names it is made of: pkg.Member (the files of
//     pkg's module that hold Member) or a bare name (the files of the
//     caller's folder that hold it), with a local's declared type or the
//     function whose result it holds, and a method's receiver type;
//   - then, in the files those brought, the declared results of the
//     functions and the fields of the types named so (x.conn.Write
//     through a field of a type in another package).
//
// Deeper chains may still answer as candidates where the full index
// finds an exact edge.
func callersNeed(ctx context.Context, x *index.Partial, files []*snap.Entry, name string) error {
	strs := map[*snap.Entry][]string{}
	var smallest []walk.Entry
	for _, f := range files {
		for ri := range f.Refs {
			r := &f.Refs[ri]
			recv := f.RefReceiver(r)
			if f.RefName(r) != name || recv == "" {
				continue
			}
			strs[f] = append(strs[f], recv)
			head := types.FirstSegment(recv)
			for li := range f.Locals {
				if l := &f.Locals[li]; l.Encl == r.Encl && l.How != record.TypeNone && f.Strs[l.Name] == head {
					strs[f] = append(strs[f], f.Strs[l.Type])
				}
			}
			if r.Encl >= 0 {
				if d := &f.Defs[r.Encl]; d.Self == head && d.Container != "" {
					strs[f] = append(strs[f], d.Container)
				}
			}
		}
		if len(strs[f]) == 0 {
			continue
		}
		// A module whose declared name may be a receiver's first name:
		// its path ends so, or its smallest file holds it.
		heads := map[string]bool{}
		var names [][]byte
		for _, r := range strs[f] {
			if h := types.FirstSegment(r); h != "" && !heads[h] {
				heads[h] = true
				names = append(names, []byte(h))
			}
		}
		var maybe []walk.Entry
		for _, im := range f.Imports {
			mods, known := resolve.New(x.Snapshot(), nil).ModuleFiles(f, im.Module)
			if !known || im.Local != "" || anyParsed(x.ParsedSet(), mods) {
				continue
			}
			if es := x.Walked(mods); len(es) > 0 {
				largestFirst(es)
				if heads[path.Base(im.Module)] {
					smallest = append(smallest, es[len(es)-1])
				} else {
					maybe = append(maybe, es[len(es)-1])
				}
			}
		}
		for i, h := range x.Scan(ctx, maybe, names, false) {
			if h {
				smallest = append(smallest, maybe[i])
			}
		}
	}
	if err := x.Parse(ctx, smallest); err != nil {
		return err
	}
	before := x.ParsedSet()
	wanted := map[string]bool{}
	var next []walk.Entry
	for f, ss := range strs {
		next = append(next, namedBy(ctx, x, f, ss, wanted)...)
	}
	if err := x.Parse(ctx, next); err != nil {
		return err
	}
	next = next[:0]
	for _, g := range x.Parsed() {
		if before[g.Rel] {
			continue
		}
		var ss []string
		for i := range g.Defs {
			if d := &g.Defs[i]; d.Type != "" && wanted[d.Name] {
				ss = append(ss, d.Type)
			}
		}
		for i := range g.Fields {
			if fd := &g.Fields[i]; wanted[fd.Container] {
				ss = append(ss, fd.Type)
			}
		}
		if len(ss) > 0 {
			next = append(next, namedBy(ctx, x, g, ss, map[string]bool{})...)
		}
	}
	return x.Parse(ctx, next)
}

// namedBy lists the unparsed files that may define the names in strs as
// f reads them: pkg.Member in the files of the module pkg binds, a bare
// name in f's folder; the names are added to wanted.
func namedBy(ctx context.Context, x *index.Partial, f *snap.Entry, strs []string, wanted map[string]bool) []walk.Entry {
	binds := resolve.New(x.Snapshot(), nil).Bindings(f)
	locals := map[string]bool{}
	for li := range f.Locals {
		locals[f.Strs[f.Locals[li].Name]] = true
	}
	byFiles := map[string]map[string]bool{} // folder or module → names
	add := func(key, n string) {
		if byFiles[key] == nil {
			byFiles[key] = map[string]bool{}
		}
		byFiles[key][n] = true
		wanted[n] = true
	}
	for _, s := range strs {
		for _, chain := range identChains(s) {
			head := chain[0]
			if m, ok := binds[head]; ok {
				if len(chain) > 1 {
					add("m:"+m, chain[1])
				}
				continue
			}
			if !locals[head] && !f.Lang.IsBuiltin(head) {
				add("d:", head)
			}
		}
	}
	var out []walk.Entry
	for key, ns := range byFiles {
		var fs []*snap.Entry
		if m, ok := strings.CutPrefix(key, "m:"); ok {
			fs, _ = resolve.New(x.Snapshot(), nil).ModuleFiles(f, m)
		} else {
			fs = x.Snapshot().Entries(x.Snapshot().Tables(f.Lang).Dirs.Get(f.Dir))
		}
		var names [][]byte
		for n := range ns {
			names = append(names, []byte(n))
		}
		es := x.Unparsed(x.Walked(fs))
		for i, h := range x.Scan(ctx, es, names, false) {
			if h {
				out = append(out, es[i])
			}
		}
	}
	return out
}

// identChains splits a type or receiver as written (*pkg.T, a.b.c(),
// map[string]*x.Y, ns::T) into its runs of identifiers joined by . or ::.
func identChains(s string) [][]string {
	var out [][]string
	var chain []string
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case isIdentByte(c):
			j := i
			for j < len(s) && isIdentByte(s[j]) {
				j++
			}
			if c < '0' || c > '9' {
				chain = append(chain, s[i:j])
			}
			i = j
			switch {
			case i < len(s) && s[i] == '.':
				i++
				continue
			case strings.HasPrefix(s[i:], "::"):
				i += 2
				continue
			}
			if len(chain) > 0 {
				out = append(out, chain)
			}
			chain = nil
		default:
			if len(chain) > 0 {
				out = append(out, chain)
			}
			chain = nil
			i++
		}
	}
	if len(chain) > 0 {
		out = append(out, chain)
	}
	return out
}

func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// largestFirst orders files to parse by size, largest first: the parse
// workers then finish together instead of one waiting on a large file
// that came last.
func largestFirst(files []walk.Entry) {
	size := func(e walk.Entry) int64 {
		if e.Info == nil {
			return 0
		}
		return e.Info.Size()
	}
	slices.SortStableFunc(files, func(a, b walk.Entry) int { return cmp.Compare(size(b), size(a)) })
}

// aheadName is the identifier a symbol spec ends with.
func aheadName(symbol string) string {
	s := strings.TrimSpace(symbol)
	if i := strings.LastIndex(s, ":"); i >= 0 {
		s = s[i+1:]
	}
	if i := strings.LastIndexAny(s, ".#"); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// anyParsed says whether one of fs is parsed.
func anyParsed(parsed map[string]bool, fs []*snap.Entry) bool {
	for _, g := range fs {
		if parsed[g.Rel] {
			return true
		}
	}
	return false
}
