// Command graphoracle measures the code graph's Go call edges against a
// compiler's call graph: golang.org/x/tools loads the packages (go/packages),
// builds their SSA form and computes a call graph (rta with every function
// of the packages as a root, cha, or static), and every call site the graph
// resolves in those packages' files is checked against it, by class:
//
//   - exact and import: right when the oracle has an edge from a call on
//     that line to that definition;
//   - interface: right when the oracle's call on that line is a call
//     through that interface method (invoke mode);
//   - implementation (the implementations an interface edge lists): right
//     when the oracle has an edge from that line to that method;
//   - candidate: each ranked definition, right when the oracle has that edge.
//
// A definition that is a variable bound to a function literal is right
// when the oracle calls that literal there. Recall is of the oracle's edges whose callee is a named function or
// method defined under the root (closures and calls leaving the root have
// no definition in the index): found as an exact or import edge, and found
// in any class. Sites are keyed by file and line, callees by the file and
// line of their name. Run from bench/:
//
//	go run ./graphoracle -root DIR [-pkgs ./...] [-algo rta,cha] [-out report.md]
//	go run ./graphoracle -root $(go env GOROOT)/src -pkgs net/http/...
package main

import (
	"context"
	"flag"
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/rta"
	"golang.org/x/tools/go/callgraph/static"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"

	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/graph/index"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// pos is a place: a file relative to the root and a line.
type pos struct {
	Rel  string
	Line int
}

func (p pos) String() string { return fmt.Sprintf("%s:%d", p.Rel, p.Line) }

// edge is a call: a site and the callee's definition.
type edge struct{ site, callee pos }

// passedClass is the candidates that are calls of a parameter a function
// is passed to, measured apart (graph.PassedClass).
const passedClass = graph.PassedClass

// oracle is the compiler's call graph, keyed as the graph keys its edges.
type oracle struct {
	edges   map[edge]string // -> how the oracle calls it: static, invoke, value
	invokes map[edge]bool   // a call through the interface method at callee
	// Calls of a function literal, keyed by the literal's line: a
	// variable bound to one (var f = func() {…}) is that line's
	// definition in the index.
	literals map[edge]bool
	sites    map[pos][]string // the in-root callees of the calls on a line
	anyCall  map[pos]bool     // lines with a call of any callee
	files    map[string]bool  // files of the measured packages (relative)
	loaded   map[string]bool  // every file the load type-checked (relative)
	// Edges left out of recall: to closures, to callees outside the root.
	closures, outside int
}

func main() {
	root := flag.String("root", "", "the tree to index: a module's folder, or GOROOT/src (required)")
	pkgs := flag.String("pkgs", "./...", "the packages to measure, as go list takes them, from -root")
	algos := flag.String("algo", "rta", "the oracle's call graphs, comma-separated, one load: rta (every function of the packages a root), cha, static")
	out := flag.String("out", "", "write the wrong edges and the misses here (markdown)")
	show := flag.Int("show", 40, "examples of each kind in -out")
	flag.Parse()
	if *root == "" {
		fmt.Fprintln(os.Stderr, "graphoracle: -root is required")
		os.Exit(2)
	}
	abs, err := filepath.Abs(*root)
	if err != nil {
		fail(err)
	}
	abs, _ = filepath.EvalSymlinks(abs)

	t0 := time.Now()
	l, err := load(abs, *pkgs)
	if err != nil {
		fail(err)
	}
	tLoad := time.Since(t0)

	t1 := time.Now()
	g, err := pathguard.New(abs)
	if err != nil {
		fail(err)
	}
	x, err := index.New(g, astgrep.NewEngine(astgrep.Options{}), graph.Options{})
	if err != nil {
		fail(err)
	}
	x.Start(nil)
	x.Wait(context.Background(), time.Hour)
	tIndex := time.Since(t1)
	v := graph.NewViewer(x).View(0)
	fmt.Printf("# graphoracle: graph vs x/tools on %s (%s), %d packages; %s\n\n", *root, *pkgs, len(l.initial), runtimeNote())
	fmt.Printf("load, type-check and SSA: %s; graph index: %s\n", tLoad.Round(time.Millisecond), tIndex.Round(time.Millisecond))
	for _, algo := range strings.Split(*algos, ",") {
		t2 := time.Now()
		o, err := l.oracle(algo)
		if err != nil {
			fail(err)
		}
		tOracle := time.Since(t2)
		m := measure(v, o)
		report(algo, o, m, tOracle)
		if *out != "" {
			name := *out
			if strings.Contains(*algos, ",") {
				name = strings.TrimSuffix(name, ".md") + "-" + algo + ".md"
			}
			if err := os.WriteFile(name, []byte(m.detail(v, *show)), 0o644); err != nil {
				fail(err)
			}
		}
	}
}

func report(algo string, o *oracle, m *measurement, tOracle time.Duration) {
	fmt.Printf("\n## %s: %d files\n\n", algo, len(o.files))
	fmt.Printf("oracle: %d edges from sites in these files to named functions under the root (%d static, %d through an interface, %d through a function value); left out: %d to closures, %d leaving the root; call graph in %s\n",
		len(o.edges), m.byHow["static"], m.byHow["invoke"], m.byHow["value"], o.closures, o.outside, tOracle.Round(time.Millisecond))
	fmt.Printf("graph: %d Go call sites in these files resolved (%d of them on lines the oracle has no call on)\n\n", m.sites, m.noOracle)
	fmt.Printf("| class | precision | wrong: kind |\n|---|---|---|\n")
	for _, cls := range []string{graph.Exact, graph.ViaImport, "exact+import", graph.Interface, graph.Implementation, graph.Candidate, "candidate site (any right)", passedClass} {
		f := m.prec[cls]
		fmt.Printf("| %s | %s | %s |\n", cls, f, m.wrongKinds(cls))
	}
	fmt.Printf("\n| recall of the oracle's edges | exact+import | any class |\n|---|---|---|\n")
	for _, how := range []string{"static", "invoke", "value", "all"} {
		fmt.Printf("| %s | %s | %s |\n", how, m.recallEI[how], m.recallAny[how])
	}
	fmt.Printf("\nleft out of precision: %d exact or import edges to a definition in a file the load did not type-check (another platform's variant, a test file)\n", m.unloaded)
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "graphoracle:", err)
	os.Exit(1)
}

func runtimeNote() string {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	if len(f) > 3 {
		f = f[:3]
	}
	return fmt.Sprintf("%s, %d cores, load %s, %s", time.Now().UTC().Format("2006-01-02T15:04Z"), runtime.NumCPU(), strings.Join(f, " "), runtime.Version())
}

// loaded is the packages measured, type-checked, in SSA form.
type loaded struct {
	root    string
	initial []*packages.Package
	prog    *ssa.Program
	mine    map[*ssa.Package]bool
}

// load loads the packages and builds their SSA form.
func load(root, pattern string) (*loaded, error) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedCompiledGoFiles | packages.NeedImports |
		packages.NeedDeps | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedTypesSizes,
		Dir: root, Env: append(os.Environ(), "CGO_ENABLED=0")}
	initial, err := packages.Load(cfg, pattern)
	if err != nil {
		return nil, err
	}
	if n := packages.PrintErrors(initial); n > 0 {
		return nil, fmt.Errorf("%d errors loading %s", n, pattern)
	}
	prog, spkgs := ssautil.AllPackages(initial, ssa.InstantiateGenerics)
	prog.Build()
	l := &loaded{root: root, initial: initial, prog: prog, mine: map[*ssa.Package]bool{}}
	for i := range initial {
		if spkgs[i] != nil {
			l.mine[spkgs[i]] = true
		}
	}
	return l, nil
}

// oracle computes a call graph and keys its edges by site line and callee
// name line.
func (l *loaded) oracle(algo string) (*oracle, error) {
	root, initial, prog, mine := l.root, l.initial, l.prog, l.mine
	rel := func(p token.Position) (string, bool) {
		r, err := filepath.Rel(root, p.Filename)
		if err != nil || strings.HasPrefix(r, "..") {
			return "", false
		}
		return filepath.ToSlash(r), true
	}
	o := &oracle{edges: map[edge]string{}, invokes: map[edge]bool{}, literals: map[edge]bool{}, sites: map[pos][]string{}, anyCall: map[pos]bool{}, files: map[string]bool{}, loaded: map[string]bool{}}
	for _, p := range initial {
		for _, f := range p.CompiledGoFiles {
			if r, ok := rel(token.Position{Filename: f}); ok {
				o.files[r] = true
			}
		}
	}
	packages.Visit(initial, nil, func(p *packages.Package) {
		for _, f := range p.CompiledGoFiles {
			if r, ok := rel(token.Position{Filename: f}); ok {
				o.loaded[r] = true
			}
		}
	})
	var cg *callgraph.Graph
	switch algo {
	case "rta":
		// Every function and every method of every type of the packages:
		// AllFunctions leaves out methods of types never made an
		// interface, which RTA would then not visit at all.
		seen := map[*ssa.Function]bool{}
		var roots []*ssa.Function
		add := func(fn *ssa.Function) {
			if fn != nil && !seen[fn] && fn.TypeParams().Len() == 0 {
				seen[fn] = true
				roots = append(roots, fn)
			}
		}
		for fn := range ssautil.AllFunctions(prog) {
			if fn.Pkg != nil && mine[fn.Pkg] && fn.Parent() == nil {
				add(fn)
			}
		}
		for p := range mine {
			for _, mem := range p.Members {
				switch mem := mem.(type) {
				case *ssa.Function:
					add(mem)
				case *ssa.Type:
					named, ok := mem.Type().(*types.Named)
					if !ok || named.TypeParams().Len() > 0 || types.IsInterface(named) {
						continue
					}
					for _, t := range []types.Type{named, types.NewPointer(named)} {
						ms := prog.MethodSets.MethodSet(t)
						for i := range ms.Len() {
							add(prog.MethodValue(ms.At(i)))
						}
					}
				}
			}
		}
		sort.Slice(roots, func(i, j int) bool { return roots[i].String() < roots[j].String() })
		cg = rta.Analyze(roots, true).CallGraph
	case "cha":
		cg = cha.CallGraph(prog)
	case "static":
		cg = static.CallGraph(prog)
	default:
		return nil, fmt.Errorf("-algo must be rta, cha or static, not %q", algo)
	}
	fset := prog.Fset
	// A call through an interface is one whether or not the oracle found
	// a type that may run there (RTA adds no edge when none is made an
	// interface value): read from the instructions of every function it
	// reached.
	for fn, n := range cg.Nodes {
		if fn == nil || n == nil {
			continue
		}
		for _, b := range fn.Blocks {
			for _, in := range b.Instrs {
				c, ok := in.(ssa.CallInstruction)
				if !ok || !c.Common().IsInvoke() {
					continue
				}
				sp := fset.Position(c.Pos())
				sr, ok := rel(sp)
				mp, ok2 := rel(fset.Position(c.Common().Method.Pos()))
				if ok && ok2 && o.files[sr] {
					o.invokes[edge{pos{sr, sp.Line}, pos{mp, fset.Position(c.Common().Method.Pos()).Line}}] = true
					o.anyCall[pos{sr, sp.Line}] = true
				}
			}
		}
	}
	callgraph.GraphVisitEdges(cg, func(e *callgraph.Edge) error {
		if e.Site == nil || e.Callee.Func == nil {
			return nil
		}
		sp := fset.Position(e.Site.Pos())
		sr, ok := rel(sp)
		if !ok || !o.files[sr] {
			return nil
		}
		site := pos{sr, sp.Line}
		o.anyCall[site] = true
		com := e.Site.Common()
		how := "value"
		switch {
		case com.IsInvoke():
			how = "invoke"
			if mp, ok := rel(fset.Position(com.Method.Pos())); ok {
				o.invokes[edge{site, pos{mp, fset.Position(com.Method.Pos()).Line}}] = true
			}
		case com.StaticCallee() != nil:
			how = "static"
		}
		fn := e.Callee.Func
		if fn.Origin() != nil {
			fn = fn.Origin()
		}
		var at token.Pos
		switch obj := fn.Object().(type) {
		case *types.Func:
			at = obj.Pos()
		default:
			if fn.Parent() != nil || fn.Synthetic != "" {
				o.closures++
				if lp, ok := rel(fset.Position(fn.Pos())); ok && fn.Pos().IsValid() {
					o.literals[edge{site, pos{lp, fset.Position(fn.Pos()).Line}}] = true
				}
				return nil
			}
			at = fn.Pos()
		}
		cp := fset.Position(at)
		cr, ok := rel(cp)
		if !ok || !at.IsValid() {
			o.outside++
			return nil
		}
		k := edge{site, pos{cr, cp.Line}}
		if _, dup := o.edges[k]; !dup {
			o.edges[k] = how
			o.sites[site] = append(o.sites[site], fn.String())
		}
		return nil
	})
	return o, nil
}

// frac is found of total.
type frac struct{ n, of int }

func (f frac) String() string {
	if f.of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %% (%d/%d)", 100*float64(f.n)/float64(f.of), f.n, f.of)
}

func (f *frac) count(ok bool) {
	f.of++
	if ok {
		f.n++
	}
}

// wrong is an edge of ours the oracle does not have.
type wrong struct {
	class string
	e     edge
	call  string
	kind  string
}

type measurement struct {
	prec                map[string]*frac
	recallEI, recallAny map[string]*frac
	byHow               map[string]int
	sites, noOracle     int
	unloaded            int
	wrongs              []wrong
	missed              []edge
	missedValue         []edge // function-value edges found in no class
}

func (m *measurement) wrongKinds(cls string) string {
	n := map[string]int{}
	for _, w := range m.wrongs {
		if w.class == cls || cls == "exact+import" && (w.class == graph.Exact || w.class == graph.ViaImport) {
			n[w.kind]++
		}
	}
	var parts []string
	for k, c := range n {
		parts = append(parts, fmt.Sprintf("%d %s", c, k))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func measure(v graph.View, o *oracle) *measurement {
	m := &measurement{prec: map[string]*frac{}, recallEI: map[string]*frac{}, recallAny: map[string]*frac{}, byHow: map[string]int{}}
	for _, k := range []string{graph.Exact, graph.ViaImport, "exact+import", graph.Interface, graph.Implementation, graph.Candidate, "candidate site (any right)", passedClass} {
		m.prec[k] = &frac{}
	}
	for _, k := range []string{"static", "invoke", "value", "all"} {
		m.recallEI[k], m.recallAny[k] = &frac{}, &frac{}
	}
	foundEI := map[edge]bool{}
	foundAny := map[edge]bool{}
	key := func(rel string, line int32) pos { return pos{rel, int(line)} }
	judge := func(cls string, e edge, call string) {
		_, ok := o.edges[e]
		ok = ok || o.literals[e]
		m.prec[cls].count(ok)
		if cls == graph.Exact || cls == graph.ViaImport {
			m.prec["exact+import"].count(ok)
		}
		if !ok {
			kind := "no call to it on the line"
			if !o.anyCall[e.site] {
				kind = "no call on the line"
			}
			m.wrongs = append(m.wrongs, wrong{class: cls, e: e, call: call, kind: kind})
		}
	}
	for f := range v.Snap.Files() {
		if f.Lang.ID != "go" || !o.files[f.Rel] {
			continue
		}
		for i := range f.Refs {
			r := &f.Refs[i]
			if r.Kind != record.RefCall {
				continue
			}
			res := v.R.Resolve(f, r)
			if res.Conversion || res.Class == graph.Unresolved {
				continue
			}
			site := key(f.Rel, r.Line)
			m.sites++
			if !o.anyCall[site] {
				m.noOracle++
			}
			call := f.RefName(r)
			if r.Recv != 0 {
				call = f.RefReceiver(r) + "." + call
			}
			switch res.Class {
			case graph.Exact, graph.ViaImport:
				// Right when any of the definitions is the oracle's (Go
				// has one; a name defined per platform may list more).
				var es []edge
				loaded := false
				for _, t := range res.Targets {
					e := edge{site, key(t.File.Rel, t.D().Line)}
					es = append(es, e)
					loaded = loaded || o.loaded[t.File.Rel]
				}
				hit := -1
				for j, e := range es {
					if _, ok := o.edges[e]; ok || o.literals[e] {
						hit = j
						break
					}
				}
				if hit < 0 && !loaded {
					m.unloaded++
					continue
				}
				if hit < 0 {
					hit = 0
				}
				judge(res.Class, es[hit], call)
				foundEI[es[hit]], foundAny[es[hit]] = true, true
			case graph.Interface:
				t := res.Targets[0]
				e := edge{site, key(t.File.Rel, t.D().Line)}
				ok := o.invokes[e]
				m.prec[graph.Interface].count(ok)
				if !ok {
					kind := "not a call through this interface method"
					if !o.anyCall[site] {
						kind = "no call on the line"
					}
					m.wrongs = append(m.wrongs, wrong{class: graph.Interface, e: e, call: call, kind: kind})
				}
				for _, u := range res.Impls {
					ie := edge{site, key(u.File.Rel, u.D().Line)}
					if o.loaded[u.File.Rel] {
						judge(graph.Implementation, ie, call)
					}
					foundAny[ie] = true
				}
			case graph.Candidate:
				any := false
				for _, t := range res.Targets {
					e := edge{site, key(t.File.Rel, t.D().Line)}
					_, ok := o.edges[e]
					m.prec[graph.Candidate].count(ok)
					any = any || ok
					foundAny[e] = true
				}
				m.prec["candidate site (any right)"].count(any)
			}
		}
	}
	for e, how := range o.edges {
		m.byHow[how]++
		for _, k := range []string{how, "all"} {
			m.recallEI[k].count(foundEI[e])
			m.recallAny[k].count(foundAny[e])
		}
		if how == "static" && !foundEI[e] {
			m.missed = append(m.missed, e)
		}
		if how == "value" && !foundAny[e] {
			m.missedValue = append(m.missedValue, e)
		}
	}
	// Calls of a parameter a function is passed to (callers lists them,
	// the resolver does not): each function's callers, judged as the
	// passed class (graph.PassedClass).
	for f := range v.Snap.Files() {
		if f.Lang.ID != "go" || !o.files[f.Rel] {
			continue
		}
		for i := range f.Defs {
			d := &f.Defs[i]
			if !record.FunctionLike(d.Kind) {
				continue
			}
			a, err := graph.Callers(v, graph.Spec{File: f.Rel, Line: int(d.Line), Symbol: d.Name})
			if err != nil || a.Symbol == nil || a.Symbol.File != f.Rel || a.Symbol.Line != int(d.Line) {
				continue
			}
			for _, s := range a.Sites {
				if s.Class != graph.Candidate || !strings.Contains(s.Reason, " passes ") {
					continue
				}
				judge(passedClass, edge{key(s.File, int32(s.Line)), key(f.Rel, d.Line)}, s.Call)
			}
		}
	}
	return m
}

// detail lists the wrong edges and the static edges missed, with the
// source line of each.
func (m *measurement) detail(v graph.View, show int) string {
	var b strings.Builder
	lines := map[string][]string{}
	line := func(p pos) string {
		ls, ok := lines[p.Rel]
		if !ok {
			data, _ := v.Lines.ReadFile(p.Rel)
			ls = strings.Split(string(data), "\n")
			lines[p.Rel] = ls
		}
		if p.Line < 1 || p.Line > len(ls) {
			return ""
		}
		return strings.TrimSpace(ls[p.Line-1])
	}
	sort.Slice(m.wrongs, func(i, j int) bool {
		a, c := m.wrongs[i], m.wrongs[j]
		if a.class != c.class {
			return a.class < c.class
		}
		return a.e.site.String() < c.e.site.String()
	})
	byClass := map[string]int{}
	b.WriteString("## Edges the oracle does not have\n\n")
	for _, w := range m.wrongs {
		if byClass[w.class]++; byClass[w.class] > show {
			continue
		}
		fmt.Fprintf(&b, "- %s %s %s (%s) `%s` -> %s `%s`\n", w.class, w.e.site, w.call, w.kind, line(w.e.site), w.e.callee, line(w.e.callee))
	}
	// missed lists the first show*3 of es, in the order of their sites.
	missed := func(title string, es []edge) {
		sort.Slice(es, func(i, j int) bool { return es[i].site.String() < es[j].site.String() })
		fmt.Fprintf(&b, "\n## %s (%d)\n\n", title, len(es))
		for _, e := range es[:min(len(es), show*3)] {
			fmt.Fprintf(&b, "- %s `%s` -> %s `%s`\n", e.site, line(e.site), e.callee, line(e.callee))
		}
	}
	missed("Static edges not found as exact or import", m.missed)
	missed("Function-value edges found in no class", m.missedValue)
	return b.String()
}
