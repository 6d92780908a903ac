package main

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/graph"
)

type report struct {
	c        config
	st       *graph.Status
	tm       timings
	targets  []*target
	results  []*result
	skipped  map[string]int
	sc       *scope
	progress []string
	messages []string
	src      *sources
}

type frac struct{ num, den int }

func (f frac) String() string {
	if f.den == 0 {
		return "n/a (0 of 0)"
	}
	return fmt.Sprintf("%.1f%% (%d of %d)", 100*float64(f.num)/float64(f.den), f.num, f.den)
}

func (f frac) short() string {
	if f.den == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d", f.num, f.den)
}

func (f *frac) add(g frac) { f.num += g.num; f.den += g.den }

// stats are one target's numbers, or their sum.
type stats struct {
	prec      map[string]frac // class -> (ours in truth, ours the server sees)
	precEI    frac
	precExact frac // exact, counting the server's omissions its own definition confirms
	precEIc   frac // exact+import, counting constructions of a constructor target's class
	candTop   frac // candidate true positives with the target ranked first
	// The server's sites: to the target itself (calls among them), to an
	// interface method the target implements (dispatch: potential
	// callers), to a concrete method implementing the target interface
	// method (implementor: not calls of the target), not classified.
	truth, itself, itselfCalls, dispatch, implementor, unknown int
	rawAny, rawEI, rawValues                                   frac
	cgAny, cgEI, cgValues                                      frac // call-graph truth: itself + dispatch + unclassified
	selfAny, selfEI, selfCalls                                 frac
	cats                                                       map[string]int
	invisible                                                  int
	omissions                                                  int
	constructions                                              int
	interpreted                                                int // exact/import sites python3 confirms where pyright finds nothing
	unmeasured                                                 int
}

func newStats() *stats { return &stats{prec: map[string]frac{}, cats: map[string]int{}} }

func (r *result) truthKind(ts *truthSite) string {
	switch {
	case ts.via == "":
		return "itself"
	case ts.via == "?":
		return "unknown"
	case r.t.Iface:
		return "implementor"
	}
	return "dispatch"
}

func count(f *frac, hit bool) {
	f.den++
	if hit {
		f.num++
	}
}

func (r *result) stats() *stats {
	s := newStats()
	if r.serverErr != "" || r.item == nil {
		s.unmeasured = 1 // no truth to compare with
		return s
	}
	for _, cls := range classes {
		var f frac
		for _, k := range r.visibleOurs(cls) {
			_, ok := r.truth[k]
			count(&f, ok)
			if ok && cls == graph.Candidate {
				count(&s.candTop, r.ours[cls][k].Rank == 1)
			}
		}
		s.prec[cls] = f
		if cls == graph.Exact || cls == graph.ViaImport {
			s.precEI.add(f)
		}
	}
	s.precExact = s.prec[graph.Exact]
	s.precEIc = s.precEI
	for _, fp := range r.fps {
		if strings.HasPrefix(fp.goes, "the target's class") {
			s.constructions++
			s.precEIc.num++
			if fp.site.Class == graph.Exact {
				s.precExact.num++
			}
		}
		if strings.Contains(fp.goes, "the interpreter finds the target") || strings.HasPrefix(fp.goes, "a module variable the interpreter finds") {
			s.interpreted++
			s.precEIc.num++
			if fp.site.Class == graph.Exact {
				s.precExact.num++
			}
		}
		if strings.HasPrefix(fp.goes, "the target itself") {
			s.omissions++
			if fp.site.Class == graph.Exact {
				s.precExact.num++
			}
		}
	}
	for k := range r.invisible {
		if _, ok := r.truth[k]; !ok {
			s.invisible++
		}
	}
	for k, ts := range r.truth {
		s.truth++
		any := r.inOurs(k, classes...)
		ei := r.inOurs(k, graph.Exact, graph.ViaImport)
		_, val := r.values[k]
		count(&s.rawAny, any)
		count(&s.rawEI, ei)
		count(&s.rawValues, any || val)
		kind := r.truthKind(ts)
		switch kind {
		case "itself":
			s.itself++
			count(&s.selfAny, any)
			count(&s.selfEI, ei)
			if ts.shape == "call" {
				s.itselfCalls++
				count(&s.selfCalls, any)
			}
		case "dispatch":
			s.dispatch++
		case "implementor":
			s.implementor++
		default:
			s.unknown++
		}
		if kind != "implementor" {
			count(&s.cgAny, any)
			count(&s.cgEI, ei)
			count(&s.cgValues, any || val)
		}
	}
	for _, m := range r.misses {
		s.cats[m.cat]++
	}
	return s
}

func (s *stats) add(o *stats) {
	for _, cls := range classes {
		f := s.prec[cls]
		f.add(o.prec[cls])
		s.prec[cls] = f
	}
	for _, p := range []struct{ a, b *frac }{{&s.precEI, &o.precEI}, {&s.precExact, &o.precExact}, {&s.precEIc, &o.precEIc}, {&s.candTop, &o.candTop},
		{&s.rawAny, &o.rawAny}, {&s.rawEI, &o.rawEI}, {&s.rawValues, &o.rawValues},
		{&s.cgAny, &o.cgAny}, {&s.cgEI, &o.cgEI}, {&s.cgValues, &o.cgValues},
		{&s.selfAny, &o.selfAny}, {&s.selfEI, &o.selfEI}, {&s.selfCalls, &o.selfCalls}} {
		p.a.add(*p.b)
	}
	s.truth += o.truth
	s.itself += o.itself
	s.itselfCalls += o.itselfCalls
	s.dispatch += o.dispatch
	s.implementor += o.implementor
	s.unknown += o.unknown
	for k, v := range o.cats {
		s.cats[k] += v
	}
	s.invisible += o.invisible
	s.omissions += o.omissions
	s.constructions += o.constructions
	s.interpreted += o.interpreted
	s.unmeasured += o.unmeasured
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

func pct(f frac) float64 {
	if f.den == 0 {
		return 100
	}
	return 100 * float64(f.num) / float64(f.den)
}

func durStats(ds []time.Duration) string {
	if len(ds) == 0 {
		return "–"
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var total time.Duration
	for _, d := range s {
		total += d
	}
	q := func(p float64) time.Duration { return s[int(p*float64(len(s)-1))] }
	r := func(d time.Duration) string {
		if d < 10*time.Millisecond {
			return d.Round(10 * time.Microsecond).String()
		}
		return d.Round(time.Millisecond).String()
	}
	return fmt.Sprintf("median %s, p90 %s, max %s, total %s", r(q(0.5)), r(q(0.9)), r(s[len(s)-1]), r(total))
}

func (rep *report) render() (summary, detail string) {
	var b strings.Builder
	c := rep.c
	srvName := filepath.Base(c.server)
	tot := newStats()
	per := make([]*stats, len(rep.results))
	kinds := map[string]int{}
	for i, r := range rep.results {
		per[i] = r.stats()
		tot.add(per[i])
		kinds[r.t.kindLabel()]++
	}
	fmt.Fprintf(&b, "## graphacc: graph vs %s on %s (%s), %d targets, seed %d\n\n", srvName, c.root, c.lang.id, len(rep.results), c.seed)
	if len(c.env) > 0 {
		fmt.Fprintf(&b, "Server environment: %s. ", strings.Join(c.env, " "))
	}
	fmt.Fprintf(&b, "Targets: %d func, %d method, %d iface method. Truth: every `fromRanges` entry of `callHierarchy/incomingCalls`, as file:line. ", kinds["func"], kinds["method"], kinds["iface method"])
	fmt.Fprintf(&b, "Our sites the server cannot see (other module, build-constrained file, ignored folder) are left out of precision: %d. ", tot.invisible)
	fmt.Fprintf(&b, "Targets the server gave no answer for (left out entirely): %d.\n\n", tot.unmeasured)
	fmt.Fprintf(&b, "| measure | value | target |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| precision, exact | %s | ≥ 95%% %s |\n", tot.prec[graph.Exact], okMark(pct(tot.prec[graph.Exact]) >= 95))
	fmt.Fprintf(&b, "| precision, exact, counting the %d sites incomingCalls omits but the server's own definition confirms (and the constructions below) | %s | |\n", tot.omissions, tot.precExact)
	fmt.Fprintf(&b, "| precision, import | %s | |\n", tot.prec[graph.ViaImport])
	fmt.Fprintf(&b, "| precision, exact+import | %s | |\n", tot.precEI)
	fmt.Fprintf(&b, "| precision, exact+import, counting the %d constructions of a constructor target's class the server's definition confirms (it lists them under the class) and the %d sites where the server finds no definition, or a module variable, but the interpreter finds the target | %s | |\n", tot.constructions, tot.interpreted, tot.precEIc)
	fmt.Fprintf(&b, "| precision, candidate | %s; the target ranked first at %s of the right ones | |\n", tot.prec[graph.Candidate], tot.candTop.short())
	fmt.Fprintf(&b, "| precision, interface (a call through the interface of the target interface method) | %s | |\n", tot.prec[graph.Interface])
	fmt.Fprintf(&b, "| precision, implementation (a call through an interface or base the target implements) | %s | |\n", tot.prec[graph.Implementation])
	fmt.Fprintf(&b, "| server sites (the raw truth) | %d = %d to the target itself (%d call-shaped) + %d dispatch (through an interface method the target implements) + %d implementor (a concrete method implementing the target interface method) + %d not classified | |\n",
		tot.truth, tot.itself, tot.itselfCalls, tot.dispatch, tot.implementor, tot.unknown)
	fmt.Fprintf(&b, "| recall, any class, raw truth | %s | ≥ 85%% %s |\n", tot.rawAny, okMark(pct(tot.rawAny) >= 85))
	fmt.Fprintf(&b, "| recall, exact+import, raw truth | %s | |\n", tot.rawEI)
	fmt.Fprintf(&b, "| recall, any class or value use, raw truth | %s | |\n", tot.rawValues)
	fmt.Fprintf(&b, "| recall, any class, call-graph truth (itself + dispatch) | %s | ≥ 85%% %s |\n", tot.cgAny, okMark(pct(tot.cgAny) >= 85))
	fmt.Fprintf(&b, "| recall, exact+import, call-graph truth | %s | |\n", tot.cgEI)
	fmt.Fprintf(&b, "| recall, any class, references to the target itself | %s | ≥ 85%% %s |\n", tot.selfAny, okMark(pct(tot.selfAny) >= 85))
	fmt.Fprintf(&b, "| recall, exact+import, references to the target itself | %s | |\n", tot.selfEI)
	fmt.Fprintf(&b, "| recall, any class, call-shaped references to the target itself | %s | |\n", tot.selfCalls)
	var macroRaw, macroSelf []float64
	for _, s := range per {
		if s.rawAny.den > 0 {
			macroRaw = append(macroRaw, pct(s.rawAny))
		}
		if s.selfAny.den > 0 {
			macroSelf = append(macroSelf, pct(s.selfAny))
		}
	}
	fmt.Fprintf(&b, "| recall, any class, mean over targets (raw truth; references to the target itself) | %.1f%% over %d targets; %.1f%% over %d | |\n", mean(macroRaw), len(macroRaw), mean(macroSelf), len(macroSelf))
	fmt.Fprintf(&b, "| missed (a): a reference on the line, resolved elsewhere or unresolved | %d | |\n", tot.cats["a"])
	fmt.Fprintf(&b, "| missed (b): no reference of that name on the line (silently missing) | %d | 0 %s |\n", tot.cats["b"], okMark(tot.cats["b"] == 0))
	fmt.Fprintf(&b, "| missed (c): reported only as a value use | %d | |\n", tot.cats["c"])
	fmt.Fprintf(&b, "| missed (d): file not in our index (vendor/, outside root) | %d | |\n", tot.cats["d"])
	b.WriteString("\n")

	// Timings.
	var gd, id, dd []time.Duration
	for _, r := range rep.results {
		gd = append(gd, r.graphDur)
		id = append(id, r.incDur)
		dd = append(dd, r.defDur)
	}
	fmt.Fprintf(&b, "| timing | |\n|---|---|\n")
	fmt.Fprintf(&b, "| index build (%d files, %d definitions, %d references, %.0f MiB) | %s |\n", rep.st.Files, rep.st.Defs, rep.st.Refs, rep.st.MemoryMiB, rep.tm.build.Round(time.Millisecond))
	fmt.Fprintf(&b, "| graph Dump, parsed | %s |\n", rep.tm.dump.Round(time.Millisecond))
	fmt.Fprintf(&b, "| server start + initialize (+ the initial indexing lsp waits for) | %s |\n", rep.tm.init.Round(time.Millisecond))
	fmt.Fprintf(&b, "| server load: first call hierarchy item | %s after start |\n", rep.tm.firstItem.Round(time.Millisecond))
	fmt.Fprintf(&b, "| server load: every module answers the call hierarchy | %s after start (%s) |\n", rep.tm.load.Round(time.Millisecond), strings.Join(rep.tm.warm, "; "))
	fmt.Fprintf(&b, "| then waiting for background work to end | %s |\n", rep.tm.settle.Round(time.Millisecond))
	fmt.Fprintf(&b, "| graph Callers per target | %s |\n", durStats(gd))
	fmt.Fprintf(&b, "| server call hierarchy (lsp CallHierarchy: prepareCallHierarchy + incomingCalls) per target | %s |\n", durStats(id))
	fmt.Fprintf(&b, "| server definition look-ups per target (classification) | %s |\n", durStats(dd))
	b.WriteString("\n")

	// Per target.
	fmt.Fprintf(&b, "| # | target | kind | server sites (itself/dispatch/implementor) | exact | import | cand | recall any | recall E+I | miss a/b/c/d | not seen | note |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for i, r := range rep.results {
		s := per[i]
		note := r.serverErr
		if note == "" {
			note = r.graphErr
		}
		if len(r.ambiguous) > 0 {
			note = fmt.Sprintf("graph: ambiguous (%d candidates)", len(r.ambiguous))
		}
		if note == "" {
			note = r.itemNote
		}
		fmt.Fprintf(&b, "| %d | `%s` %s:%d | %s | %d (%d/%d/%d) | %s | %s | %s | %s | %s | %d/%d/%d/%d | %d | %s |\n", i+1, r.t.Qualified, r.t.Rel, r.t.Line, r.t.kindLabel(),
			s.truth, s.itself, s.dispatch, s.implementor, s.prec[graph.Exact].short(), s.prec[graph.ViaImport].short(), s.prec[graph.Candidate].short(),
			s.rawAny.short(), s.rawEI.short(), s.cats["a"], s.cats["b"], s.cats["c"], s.cats["d"], s.invisible, strings.ReplaceAll(note, "|", "\\|"))
	}
	b.WriteString("\n(exact/import/cand: our sites of that class the server also reports / our sites of that class it can see)\n\n")

	// Causes.
	b.WriteString(rep.hiddenGroups())
	b.WriteString(rep.candidateGroups())
	b.WriteString(rep.missGroups())
	b.WriteString(rep.fpGroups())
	summary = b.String()

	// Detail.
	var w strings.Builder
	rep.details(&w)
	return summary, w.String()
}

func okMark(ok bool) string {
	if ok {
		return "(met)"
	}
	return "(not met)"
}

func (rep *report) code(k skey) string {
	return "`" + clip(strings.TrimSpace(rep.src.line(k.Rel, k.Line)), 140) + "`"
}

func viaText(r *result, ts *truthSite) string {
	switch r.truthKind(ts) {
	case "itself":
		return "reference to the target itself"
	case "unknown":
		return "not classified"
	case "implementor":
		return "reference to a concrete method implementing it (" + ts.via + ")"
	}
	return "reference to an interface method it implements (" + ts.via + ")"
}

type group struct {
	key      string
	n        int
	examples []string
}

func addGroup(m map[string]*group, key, example string) {
	g := m[key]
	if g == nil {
		g = &group{key: key}
		m[key] = g
	}
	g.n++
	if len(g.examples) < 3 {
		g.examples = append(g.examples, example)
	}
}

func sortedGroups(m map[string]*group) []*group {
	var gs []*group
	for _, g := range m {
		gs = append(gs, g)
	}
	sort.Slice(gs, func(i, j int) bool {
		if gs[i].n != gs[j].n {
			return gs[i].n > gs[j].n
		}
		return gs[i].key < gs[j].key
	})
	return gs
}

func (rep *report) missGroups() string {
	m := map[string]*group{}
	for _, r := range rep.results {
		for _, ms := range r.misses {
			via := r.truthKind(ms.site)
			key := fmt.Sprintf("(%s) %s [server: %s, %s]", ms.cat, ms.cause, via, ms.site.shape)
			ex := fmt.Sprintf("%s %s for `%s`", ms.site.key, rep.code(ms.site.key), r.t.Qualified)
			if len(ms.dump) > 0 {
				ex += "; graph: " + strings.TrimSpace(ms.dump[0].Line)
			}
			if ms.site.via != "" && ms.site.via != "?" {
				ex += "; server's definition: " + ms.site.via
			}
			addGroup(m, key, ex)
		}
	}
	return writeGroups("### Missed sites by cause", m)
}

var digits = regexp.MustCompile(`[0-9]+`)
var looksLike = regexp.MustCompile(`receiver looks like \S+`)

// candidateGroups explains the right edges graph only offers as
// candidates (what keeps exact+import recall down), by graph's reason.
func (rep *report) candidateGroups() string {
	m := map[string]*group{}
	for _, r := range rep.results {
		for _, k := range sortKeys(r.ours[graph.Candidate]) {
			ts, ok := r.truth[k]
			if !ok || r.inOurs(k, graph.Exact, graph.ViaImport) {
				continue
			}
			site := r.ours[graph.Candidate][k]
			form := "bare call"
			if strings.Contains(site.Call, ".") {
				form = "call with a receiver"
			}
			reason := looksLike.ReplaceAllString(digits.ReplaceAllString(site.Reason, "N"), "receiver looks like T")
			key := fmt.Sprintf("%s, %s [server: %s]", reason, form, r.truthKind(ts))
			ex := fmt.Sprintf("%s %s `%s` for `%s`: rank %d of %d", k, rep.code(k), site.Call, r.t.Qualified, site.Rank, site.Of)
			addGroup(m, key, ex)
		}
	}
	return writeGroups("### Right edges graph gives only as candidates, by graph's reason", m)
}

// hiddenGroups counts our sites left out of precision, by why the server
// cannot see them.
func (rep *report) hiddenGroups() string {
	m := map[string]*group{}
	for _, r := range rep.results {
		for _, k := range sortKeys(r.invisible) {
			if _, ok := r.truth[k]; ok {
				continue
			}
			why := r.invisible[k]
			if i := strings.Index(why, " ("); i > 0 && strings.HasPrefix(why, "in another module") {
				why = "in another module" + why[strings.Index(why, ")")+1:]
			}
			if strings.HasPrefix(why, "in a folder the go command ignores") {
				why = "in a folder the go command ignores"
			}
			cls := ""
			for _, c := range classes {
				if _, ok := r.ours[c][k]; ok {
					cls = c
					break
				}
			}
			addGroup(m, cls+": "+why, fmt.Sprintf("%s for `%s`", k, r.t.Qualified))
		}
	}
	var b strings.Builder
	b.WriteString("### Our sites the server cannot see (left out of precision)\n\n")
	if len(m) == 0 {
		b.WriteString("none\n\n")
		return b.String()
	}
	for _, g := range sortedGroups(m) {
		fmt.Fprintf(&b, "- **%d** %s (e.g. %s)\n", g.n, g.key, strings.Join(g.examples[:min(2, len(g.examples))], "; "))
	}
	b.WriteString("\n")
	return b.String()
}

func (rep *report) fpGroups() string {
	m := map[string]*group{}
	for _, r := range rep.results {
		for _, fp := range r.fps {
			k := skey{fp.site.File, fp.site.Line}
			ex := fmt.Sprintf("%s %s in %s, for `%s`; server's definition: %s", k, rep.code(k), fp.site.In, r.t.Qualified, fp.goes)
			addGroup(m, fp.cause, ex)
		}
	}
	return writeGroups("### Exact and import sites the server does not report, by cause", m)
}

func (rep *report) details(w *strings.Builder) {
	c := rep.c
	fmt.Fprintf(w, "## Setup\n\n")
	fmt.Fprintf(w, "- command: `graphacc -lang %s -root %s -n %d -seed %d -per-dir %d -server %s -server-args %q -server-env %q`\n", c.lang.id, c.root, c.n, c.seed, c.perDir, c.server, strings.Join(c.args, " "), strings.Join(c.env, " "))
	fmt.Fprintf(w, "- index: %d files (%v), %d definitions, %d references, %.1f MiB, built in %s; skipped files: %d\n",
		rep.st.Files, rep.st.Languages, rep.st.Defs, rep.st.Refs, rep.st.MemoryMiB, rep.tm.build.Round(time.Millisecond), len(rep.st.SkipList))
	for k, v := range rep.st.Skipped {
		fmt.Fprintf(w, "  - %d skipped: %s\n", v, k)
	}
	fmt.Fprintf(w, "- modules (lsp starts a server for each one asked about, its folder the workspace): %s\n", strings.Join(rep.sc.folders(), ", "))
	if c.lang.id == "go" {
		fmt.Fprintf(w, "- build context used to tell which files the server sees: %s/%s, cgo %v\n", rep.sc.ctx.GOOS, rep.sc.ctx.GOARCH, rep.sc.ctx.CgoEnabled)
	}
	var sk []string
	for k, v := range rep.skipped {
		sk = append(sk, fmt.Sprintf("%d %s", v, k))
	}
	sort.Strings(sk)
	fmt.Fprintf(w, "- definitions not eligible as targets: %s\n", strings.Join(sk, "; "))
	fmt.Fprintf(w, "- server progress reports:\n")
	for _, p := range rep.progress {
		fmt.Fprintf(w, "  - %s\n", p)
	}
	if len(rep.messages) > 0 {
		fmt.Fprintf(w, "- server messages:\n")
		for _, m := range rep.messages {
			fmt.Fprintf(w, "  - %s\n", clip(strings.ReplaceAll(m, "\n", " "), 300))
		}
	}
	fmt.Fprintf(w, "\n## Targets chosen\n\n")
	for i, t := range rep.targets {
		fmt.Fprintf(w, "%d. `%s` (%s) %s:%d col %d — `%s`\n", i+1, t.Qualified, t.kindLabel(), t.Rel, t.Line, t.Col+1, clip(strings.TrimSpace(t.LineTxt), 120))
	}
	w.WriteString("\n## Per target\n\n")
	for i, r := range rep.results {
		t := r.t
		fmt.Fprintf(w, "### %d. `%s` (%s) %s:%d\n\n", i+1, t.Qualified, t.kindLabel(), t.Rel, t.Line)
		if r.item != nil {
			fmt.Fprintf(w, "- server item: %s — %s\n", r.item.Name, r.item.Detail)
		}
		if r.itemNote != "" {
			fmt.Fprintf(w, "- note: %s\n", r.itemNote)
		}
		if r.serverErr != "" {
			fmt.Fprintf(w, "- server: %s\n", r.serverErr)
		}
		if r.graphErr != "" {
			fmt.Fprintf(w, "- graph: %s\n", r.graphErr)
		}
		for _, a := range r.ambiguous {
			fmt.Fprintf(w, "- graph ambiguous candidate: %s %s:%d\n", a.Qualified, a.File, a.Line)
		}
		fmt.Fprintf(w, "- graph: %d exact, %d import, %d candidate call sites, %d value uses, %d elsewhere (%s); server: %d sites (%s); definition look-ups: %d (%s)\n",
			r.counts.Exact, r.counts.Import, r.counts.Candidate, r.counts.Values, r.counts.Elsewhere, r.graphDur.Round(time.Microsecond),
			len(r.truth), r.incDur.Round(time.Millisecond), r.defAsked, r.defDur.Round(time.Millisecond))
		if len(r.misses) > 0 {
			fmt.Fprintf(w, "- missed (%d):\n", len(r.misses))
			for _, m := range r.misses {
				fmt.Fprintf(w, "  - (%s) %s %s — %s; server: %s, %s, in %s\n", m.cat, m.site.key, rep.code(m.site.key), m.cause, viaText(r, m.site), m.site.shape, m.site.from)
				for _, d := range m.dump {
					fmt.Fprintf(w, "    - graph: %s\n", strings.TrimSpace(d.Line))
				}
			}
		}
		if len(r.fps) > 0 {
			fmt.Fprintf(w, "- exact/import sites the server does not report (%d):\n", len(r.fps))
			for _, fp := range r.fps {
				k := skey{fp.site.File, fp.site.Line}
				fmt.Fprintf(w, "  - [%s] %s %s in %s — server's definition: %s\n", fp.site.Class, k, rep.code(k), fp.site.In, fp.goes)
			}
		}
		if len(r.candFP) > 0 {
			fmt.Fprintf(w, "- candidate sites the server does not report: %d", len(r.candFP))
			for j, k := range r.candFP {
				if j == 5 {
					fmt.Fprintf(w, " …")
					break
				}
				s := r.ours[graph.Candidate][k]
				fmt.Fprintf(w, "%s %s (%d of %d)", map[bool]string{true: ":", false: ","}[j == 0], k, s.Rank, s.Of)
			}
			w.WriteString("\n")
		}
		if n := len(r.invisible); n > 0 {
			why := map[string]int{}
			for _, v := range r.invisible {
				why[v]++
			}
			var ws []string
			for k, v := range why {
				ws = append(ws, fmt.Sprintf("%d %s", v, k))
			}
			sort.Strings(ws)
			fmt.Fprintf(w, "- our sites the server cannot see (not counted): %s\n", strings.Join(ws, "; "))
		}
		w.WriteString("\n")
	}
}

// writeGroups writes a report section: each group's count, cause and
// examples, largest first.
func writeGroups(title string, m map[string]*group) string {
	var b strings.Builder
	b.WriteString(title + "\n\n")
	if len(m) == 0 {
		b.WriteString("none\n\n")
		return b.String()
	}
	for _, g := range sortedGroups(m) {
		fmt.Fprintf(&b, "- **%d** %s\n", g.n, g.key)
		for _, e := range g.examples {
			fmt.Fprintf(&b, "  - %s\n", e)
		}
	}
	b.WriteString("\n")
	return b.String()
}
