package main

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/internal/proc"
)

// skey is a site: a file and a line.
type skey struct {
	Rel  string
	Line int
}

func (k skey) String() string { return fmt.Sprintf("%s:%d", k.Rel, k.Line) }

func sortKeys[V any](m map[skey]V) []skey {
	out := make([]skey, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Rel != out[j].Rel {
			return out[i].Rel < out[j].Rel
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// truthSite is one place the server reports.
type truthSite struct {
	key    skey
	col    int    // byte column of the reference
	from   string // the server's name for the enclosing function
	shape  string // call or value, by the text
	via    string // "" when the reference is to the target itself; else where the server's definition leads (a corresponding method); "?" when not asked
	inside bool   // inside the root
}

// miss is a truth site we do not report.
type miss struct {
	site  *truthSite
	cat   string // a, b, c, d
	cause string
	dump  []dumpRef
}

// falsePos is an exact or import site the server does not report.
type falsePos struct {
	site  graph.Site
	goes  string // where the server's definition at the site leads
	cause string
}

type result struct {
	t         *target
	item      *callItem
	itemNote  string
	serverErr string
	graphErr  string
	ambiguous []graph.Symbol
	counts    graph.Counts

	truth     map[skey]*truthSite
	ours      map[string]map[skey]graph.Site // class -> sites
	values    map[skey]graph.Site
	invisible map[skey]string // our sites the server cannot see, and why

	misses    []miss
	fps       []falsePos
	candFP    []skey
	defAsked  int
	defCapped int

	graphDur, incDur, defDur time.Duration
}

// Implementation sites (a call through an interface or a base that may
// run the target) are found sites, like candidates, not exact edges; so
// are interface sites (a call through the interface, of its method).
var classes = []string{graph.Exact, graph.ViaImport, graph.Interface, graph.Implementation, graph.Candidate}

func (r *result) inOurs(k skey, cls ...string) bool {
	for _, c := range cls {
		if _, ok := r.ours[c][k]; ok {
			return true
		}
	}
	return false
}

// visibleOurs are our sites of a class the server can see (or reports).
func (r *result) visibleOurs(cls string) []skey {
	var out []skey
	for _, k := range sortKeys(r.ours[cls]) {
		if _, ok := r.truth[k]; ok {
			out = append(out, k)
			continue
		}
		if _, hidden := r.invisible[k]; !hidden {
			out = append(out, k)
		}
	}
	return out
}

func measureTarget(ctx context.Context, c config, w *graph.Viewer, s *server, d *dump, sc *scope, src *sources, t *target) *result {
	r := &result{t: t, truth: map[skey]*truthSite{}, ours: map[string]map[skey]graph.Site{}, values: map[skey]graph.Site{}, invisible: map[skey]string{}}
	for _, cls := range classes {
		r.ours[cls] = map[skey]graph.Site{}
	}

	// The graph.
	t0 := time.Now()
	a, err := graph.Callers(w.View(0), graph.Spec{File: t.Rel, Line: t.Line, Symbol: t.Name})
	r.graphDur = time.Since(t0)
	switch {
	case err != nil:
		r.graphErr = err.Error()
	case len(a.Candidates) > 0:
		r.ambiguous = a.Candidates
	default:
		r.counts = a.Counts
		for _, site := range a.Sites {
			k := skey{site.File, site.Line}
			if r.ours[site.Class] == nil {
				r.ours[site.Class] = map[skey]graph.Site{}
			}
			if _, ok := r.ours[site.Class][k]; !ok {
				r.ours[site.Class][k] = site
			}
			if ok, why := sc.visible(site.File, t.Module); !ok {
				r.invisible[k] = why
			}
		}
		for _, site := range a.Values {
			k := skey{site.File, site.Line}
			if _, ok := r.values[k]; !ok {
				r.values[k] = site
			}
		}
	}

	// The server, through lsp's call hierarchy.
	t0 = time.Now()
	calls, err := s.incoming(ctx, t.Rel, place(t.LineTxt, t.Line, t.Col, t.Name))
	r.incDur = time.Since(t0)
	if err != nil {
		r.serverErr = "call hierarchy: " + err.Error()
		return r
	}
	r.item = item(calls)
	if r.item == nil {
		r.serverErr = "the call hierarchy named no function"
		return r
	}
	itemRel, nameLine := r.item.Rel, r.item.Line
	if r.item.Name != t.Name || itemRel != t.Rel || nameLine != t.Line {
		r.itemNote = fmt.Sprintf("the server's item is %s at %s:%d, not %s at %s:%d", r.item.Name, itemRel, nameLine, t.Name, t.Rel, t.Line)
	}
	for _, call := range calls.Sites {
		rel := call.Site.Path
		k := skey{rel, call.Site.Line}
		if _, ok := r.truth[k]; ok {
			continue
		}
		ts := &truthSite{key: k, from: call.Name, inside: !call.Site.Outside && !strings.HasPrefix(rel, "/")}
		line := src.line(rel, k.Line)
		ts.col = siteByte(line, call.Site)
		ts.shape = shape(line, ts.col, t.Name)
		r.truth[k] = ts
	}

	// Which references are to the target itself, and which to a method
	// corresponding to it (the server widens a method's references across
	// interface satisfaction)?
	t0 = time.Now()
	for _, k := range sortKeys(r.truth) {
		ts := r.truth[k]
		if t.Kind != "method" && t.Kind != "getter" {
			continue // functions have no corresponding methods
		}
		if !c.classify || r.defAsked >= c.defMax || !ts.inside {
			ts.via = "?"
			r.defCapped++
			continue
		}
		r.defAsked++
		locs, err := s.definition(ctx, k.Rel, place(src.line(k.Rel, k.Line), k.Line, ts.col, t.Name))
		if err != nil || len(locs) == 0 {
			ts.via = "?"
			continue
		}
		for _, l := range locs {
			if l.Path == itemRel && l.Line == nameLine {
				ts.via = ""
				break
			}
			ts.via = fmt.Sprintf("%s:%d", l.Path, l.Line)
		}
	}

	// Misses.
	for _, k := range sortKeys(r.truth) {
		ts := r.truth[k]
		if r.inOurs(k, classes...) {
			continue
		}
		m := miss{site: ts}
		switch {
		case d.files[k.Rel] == "":
			m.cat, m.cause = "d", "file not in the graph's index"
			if !ts.inside {
				m.cause = "file outside the root"
			}
		case r.values[k].File != "":
			m.cat, m.cause = "c", "a value use only (Answer.Values)"
		default:
			m.dump = d.named(k.Rel, k.Line, t.Name)
			if len(m.dump) > 0 {
				m.cat, m.cause = "a", "a reference resolved "+resolutionCause(m.dump, t)
			} else {
				m.cat, m.cause = "b", "no reference named "+t.Name+" on the line"
			}
		}
		r.misses = append(r.misses, m)
	}

	// False positives: our exact and import sites the server does not
	// report, and where the server's definition at them leads.
	for _, cls := range []string{graph.Exact, graph.ViaImport} {
		for _, k := range r.visibleOurs(cls) {
			if _, ok := r.truth[k]; ok {
				continue
			}
			site := r.ours[cls][k]
			fp := falsePos{site: site}
			if c.classify && r.defAsked < c.defMax {
				r.defAsked++
				line := src.line(k.Rel, k.Line)
				col := min(max(site.Column-1, 0), len(line))
				// The name written at the site: a construction names the
				// class (EnvBuilder(...) for EnvBuilder.__init__).
				name := t.Name
				if i := strings.LastIndexAny(site.Call, ".:>"); site.Call != "" && site.Call[i+1:] != "" {
					name = site.Call[i+1:]
				}
				locs, err := s.definition(ctx, k.Rel, place(line, k.Line, col, name))
				switch {
				case err != nil:
					fp.goes = "error: " + err.Error()
				case len(locs) == 0:
					fp.goes = "nowhere (no definition)"
					if c.lang.id == "python" && interpreterFinds(c.root, site.Call, t) {
						fp.goes = "nowhere (no definition); the interpreter finds the target: " + site.Call
					}
				default:
					l := locs[0]
					fp.goes = fmt.Sprintf("%s:%d `%s`", l.Path, l.Line, clip(strings.TrimSpace(src.line(l.Path, l.Line)), 100))
					if l.Path == itemRel && l.Line == nameLine {
						fp.goes = "the target itself (yet incomingCalls left it out)"
					}
					if constructs(t, l.Path, src.line(l.Path, l.Line)) {
						fp.goes = "the target's class, constructed: " + fp.goes
					}
					// x = _inst.method at the module's top: what the name
					// holds, the server does not follow.
					if v, ok := moduleVariable(l.Path, src.line(l.Path, l.Line)); ok && c.lang.id == "python" && interpreterFinds(c.root, v, t) {
						fp.goes = "a module variable the interpreter finds holds the target: " + fp.goes
					}
				}
			}
			fp.cause = cls + ": " + fpCause(fp.goes)
			r.fps = append(r.fps, fp)
		}
	}
	for _, k := range r.visibleOurs(graph.Candidate) {
		if _, ok := r.truth[k]; !ok {
			r.candFP = append(r.candFP, k)
		}
	}
	r.defDur = time.Since(t0)
	return r
}

// resolutionCause sums up what the index said of the references at a
// missed site, in words that group alike misses.
func resolutionCause(refs []dumpRef, t *target) string {
	var parts []string
	seen := map[string]bool{}
	for _, r := range refs {
		_, res, _ := strings.Cut(r.Line, " -> ")
		var p string
		switch {
		case strings.HasPrefix(res, "unresolved ("):
			why := strings.TrimSuffix(strings.TrimPrefix(res, "unresolved ("), ")")
			switch {
			case strings.HasPrefix(why, "external: "):
				why = "external module"
			case strings.HasPrefix(why, "no definition named"):
				why = "no definition of that name (no candidates)"
			case strings.HasPrefix(why, "no "):
				why = "name not found in the imported package"
			case strings.HasPrefix(why, "imported from"):
				why = "imported name not defined there"
			}
			p = "as unresolved: " + why
		case strings.HasPrefix(res, "candidate["):
			n := strings.TrimSuffix(strings.TrimPrefix(res[:strings.IndexByte(res, ']')+1], "candidate["), "]")
			p = "as candidates without the target (" + n + " listed"
			if n == "8" {
				p += ", the list's limit"
			}
			p += ")"
		case strings.HasPrefix(res, "exact "):
			p = "exact to another definition"
		case strings.HasPrefix(res, "import "):
			p = "via import to another definition"
		default:
			p = res
		}
		p = r.Kind + " " + p
		if !seen[p] {
			seen[p] = true
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "; ")
}

func fpCause(goes string) string {
	switch {
	case goes == "":
		return "not checked"
	case strings.HasPrefix(goes, "the target's class"):
		return "a construction of the target's class: the server's definition is the class, and incomingCalls lists constructions under the class, not its constructor"
	case strings.HasPrefix(goes, "the target itself"):
		return "the server's definition is the target, but incomingCalls left it out"
	case strings.HasPrefix(goes, "a module variable the interpreter finds"):
		return "the server's definition is a module variable (x = _inst.method), which the interpreter, importing the module, finds holds the target"
	case strings.HasPrefix(goes, "nowhere") && strings.Contains(goes, "the interpreter finds"):
		return "the server finds no definition there (its stub leaves the name out); the interpreter, importing the module the call names, finds the target"
	case strings.HasPrefix(goes, "nowhere"):
		return "the server finds no definition there"
	case strings.HasPrefix(goes, "error"):
		return "the server's definition request failed"
	}
	return "the server's definition leads to another definition"
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n-3] + "..."
	}
	return s
}

// constructs says whether a definition the server gives at a site, at rel
// with text line, is the class whose constructor target is (Python's
// __init__): in the target's file, or in the typeshed stub of its module.
func constructs(t *target, rel, line string) bool {
	if t.Container == "" || t.Name != "__init__" {
		return false
	}
	stub := strings.TrimSuffix(t.Rel, ".py") + ".pyi"
	if rel != t.Rel && !strings.HasSuffix(rel, "/"+stub) {
		return false
	}
	rest, ok := strings.CutPrefix(strings.TrimSpace(line), "class "+t.Container)
	return ok && (rest == "" || rest[0] == '(' || rest[0] == ':')
}

// interpreterFinds asks the interpreter whose library root is (the
// corpus: /usr/lib/python3.11) whether call (a.b.f as the index read it)
// names the target: a module a.b whose attribute f is a function defined
// at the target's file and line (frozen modules' code names no file: the
// file is its module's). pyright answers from
// typeshed's stubs, which leave private names out (importlib.util.
// _find_spec_from_path): the module itself is the second witness.
func interpreterFinds(root, call string, t *target) bool {
	i := strings.LastIndexByte(call, '.')
	if i <= 0 {
		return false
	}
	mod, name := call[:i], call[i+1:]
	prog := `import importlib, inspect, sys
m = importlib.import_module(sys.argv[1])
f = inspect.unwrap(getattr(m, sys.argv[2]))
print(sys.modules[f.__module__].__file__, f.__code__.co_firstlineno)`
	// The interpreter whose library root is: /usr/bin/python3.11 for
	// /usr/lib/python3.11.
	py := filepath.Join(filepath.Dir(filepath.Dir(root)), "bin", filepath.Base(root))
	out, err := proc.Probe(context.Background(), py, "-c", prog, mod, name)
	if err != nil {
		return false
	}
	// The answer is the last line: what the interpreter warned comes first.
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	file, line, _ := strings.Cut(lines[len(lines)-1], " ")
	rel, err := filepath.Rel(root, file)
	return err == nil && filepath.ToSlash(rel) == t.Rel && line == strconv.Itoa(t.Line)
}

// moduleVariable names the module-level variable a Python line at rel
// assigns (set_forkserver_preload = _forkserver.set_forkserver_preload in
// multiprocessing/forkserver.py: multiprocessing.forkserver.set_forkserver_preload).
func moduleVariable(rel, line string) (string, bool) {
	name, _, ok := strings.Cut(line, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.HasPrefix(line, " ") || strings.HasPrefix(line, "\t") || strings.ContainsFunc(name, func(r rune) bool { return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		return "", false
	}
	mod := strings.TrimSuffix(strings.TrimSuffix(rel, ".py"), "/__init__")
	return strings.ReplaceAll(mod, "/", ".") + "." + name, true
}
