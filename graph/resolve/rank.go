package resolve

import (
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/builtin-tools/builtin-tools/graph/lang"
	"github.com/builtin-tools/builtin-tools/graph/record"
	"github.com/builtin-tools/builtin-tools/graph/resolve/outcome"
	"github.com/builtin-tools/builtin-tools/graph/resolve/scope"
	"github.com/builtin-tools/builtin-tools/graph/snap"
)

// A name-only reference: every definition of its name in the language,
// scored and ranked.

// ranking scores a name-only reference's candidates, drawn from the
// definitions of its name it keeps along the snapshots.
type ranking struct {
	s  *snap.Snapshot
	sc *scope.Scopes // a file's scope: the files its imports name rank higher
	// names: each name's definitions (named), shared with the rankings
	// of the snapshots before and after, each list checked against the
	// snapshot it is read in.
	names *namedStore
}

// namedStore holds the definitions by name along the snapshots. It is
// made anew once it holds maxNamed names, so it neither grows without
// bound nor keeps replaced entries alive for long.
type namedStore struct {
	m sync.Map // nameKey → *namedAt
	n atomic.Int64
}

const maxNamed = 8192

// maxCandidates bounds the candidates a resolution lists (callees, dumps).
const maxCandidates = 64

// Accepts says whether d is a definition p's candidates are among.
func (rk *ranking) Accepts(p *outcome.Pending, d *record.Def) bool {
	return p.OK(d) && (!p.NoIface || !rk.interfaceNamed(p.File.Lang, d.Container))
}

// Scored is one candidate of a Pending resolution with its score. Its
// reason is made only when asked (reasonOf): callers scores every
// candidate of a site and reads one reason.
type Scored struct {
	t     snap.Target
	score int
	// what the score was made of, for its reason
	place           int8 // 0 name only, 1 imported, 2 same directory, 3 same file
	other, built    bool // built for another system; for this one
	hint, resembled bool // the receiver's declared type; its name
}

// Scores lists p's candidates with their scores, unsorted, for RankOf.
func (rk *ranking) Scores(p *outcome.Pending) []Scored { return rk.scores(p) }

// byName ranks every definition with the reference's name in the language.
func (rk *ranking) byName(lazy bool, f *snap.Entry, r *record.Ref, ok func(*record.Def) bool) outcome.Resolution {
	return rk.byNameHint(lazy, f, r, ok, nil)
}

// byNameHint is byName with the receiver's declared type.
func (rk *ranking) byNameHint(lazy bool, f *snap.Entry, r *record.Ref, ok func(*record.Def) bool, hint []snap.Target) outcome.Resolution {
	return rk.byNameHow(lazy, f, r, ok, hint, "")
}

// byNameHow is byNameHint saying how the hint was found.
func (rk *ranking) byNameHow(lazy bool, f *snap.Entry, r *record.Ref, ok func(*record.Def) bool, hint []snap.Target, how string) outcome.Resolution {
	p := &outcome.Pending{File: f, Ref: r, OK: ok, Hint: hint, HintHow: how}
	if lazy {
		if len(rk.s.Tables(f.Lang).Defs.Get(f.RefName(r))) == 0 {
			return unresolvedName(f, r)
		}
		return outcome.Resolution{Class: lang.Candidate, Pending: p}
	}
	return rk.rankAll(p)
}

func unresolvedName(f *snap.Entry, r *record.Ref) outcome.Resolution {
	name := f.RefName(r)
	if f.Lang.IsBuiltin(name) {
		return outcome.Resolution{Class: lang.Unresolved, Why: "builtin"}
	}
	return outcome.Resolution{Class: lang.Unresolved, Why: "no definition named " + name + " in the index"}
}

// scores lists p's candidates with their scores, unsorted.
func (rk *ranking) scores(p *outcome.Pending) []Scored {
	f, r := p.File, p.Ref
	imported := rk.sc.Imported(f)
	var all []Scored
	name, recv := f.RefName(r), f.RefReceiver(r)
	var mine lang.Variant
	if f.Lang.Variants != "" {
		mine = f.Lang.Variant(f.Rel)
	}
	for _, nd := range rk.named(f.Lang, name) {
		g, d := nd.t.File, nd.t.D()
		if !rk.Accepts(p, d) {
			continue
		}
		s := Scored{t: nd.t}
		switch {
		case g == f:
			s.score, s.place = 600, 3
		case g.Dir == f.Dir:
			s.score, s.place = 500, 2
		case imported[g.Rel]:
			s.score, s.place = 400, 1
		}
		s.score += 10 * sharedDirs(f.Dir, g.Dir)
		if f.Lang.Variants != "" {
			switch {
			case !mine.Compatible(nd.variant):
				s.score -= 300
				s.other = true
			case nd.host == 0:
				// Built for this system by its name or its //go:build line.
				s.score += 5
				s.built = g.Host == lang.HostYes
			}
		}
		// A declared receiver type beats file proximity; the
		// receiver's name only breaks ties.
		if d.Container != "" && hinted(p.Hint, d.Container) {
			s.score += 1000
			s.hint = true
		} else if recv != "" && d.Container != "" && resembles(recv, d.Container) {
			s.score++
			s.resembled = true
		}
		all = append(all, s)
	}
	return all
}

// reasonOf says why s is ranked where it is; full adds what only breaks
// ties or goes without saying (built on this system, the receiver's
// name), which RankOf's reader does not get.
func reasonOf(p *outcome.Pending, s *Scored, full bool) string {
	reason := [...]string{"name only", "in a module this file imports", "same directory", "same file"}[s.place]
	if s.other {
		reason += "; built for another system"
	} else if s.built && full {
		reason += "; built on this system"
	}
	if c := s.t.D().Container; s.hint {
		if p.HintHow != "" {
			reason += "; " + p.HintHow + c
		} else {
			reason += "; the receiver's declared type embeds or is " + c
		}
	} else if s.resembled && full {
		reason += "; receiver looks like " + c
	}
	if p.Note != "" {
		reason += "; " + p.Note
	}
	return reason
}

// namedDef is a definition of a name, with what ranking reads of its
// file worked out once.
type namedDef struct {
	t       snap.Target
	variant lang.Variant
	host    int // outcome.HostRank
}

// namedAt is the definitions of one name in one language, in path order,
// and the entries they were read from: valid in any snapshot whose Defs
// table lists the same files with the same entries.
type namedAt struct {
	files []*snap.Entry
	defs  []namedDef
}

type nameKey struct {
	l    *lang.Language
	name string
}

// named lists the definitions of name in language l, what a name-only
// reference's candidates are drawn from. The lists are shared along the
// snapshots (ranking.names) and each is made again only when a file
// defining the name changed, came or went.
func (rk *ranking) named(l *lang.Language, name string) []namedDef {
	ids := rk.s.Tables(l).Defs.Get(name)
	k := nameKey{l, name}
	if v, ok := rk.names.m.Load(k); ok {
		if at := v.(*namedAt); slices.EqualFunc(at.files, ids, func(e *snap.Entry, id snap.FileID) bool { return rk.s.ByID(id) == e }) {
			return at.defs
		}
	}
	at := &namedAt{files: rk.s.Entries(ids)}
	for _, g := range at.files {
		var v lang.Variant
		if l.Variants != "" {
			v = g.Lang.Variant(g.Rel)
		}
		h := outcome.HostRank(g)
		for _, i := range g.DefsNamed(name) {
			at.defs = append(at.defs, namedDef{t: snap.Target{File: g, Def: i}, variant: v, host: h})
		}
	}
	if _, had := rk.names.m.Swap(k, at); !had {
		rk.names.n.Add(1)
	}
	return at.defs
}

func before(a, b Scored) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.t.File.Rel != b.t.File.Rel {
		return a.t.File.Rel < b.t.File.Rel
	}
	return a.t.Def < b.t.Def
}

// rankAll resolves a Pending name-only reference in full.
func (rk *ranking) rankAll(p *outcome.Pending) outcome.Resolution {
	all := rk.scores(p)
	if len(all) == 0 {
		return unresolvedName(p.File, p.Ref)
	}
	sort.Slice(all, func(i, j int) bool { return before(all[i], all[j]) })
	res := outcome.Resolution{Class: lang.Candidate}
	for i, s := range all {
		if i == maxCandidates {
			res.Reasons[len(res.Reasons)-1] += "; " + itoa(len(all)-maxCandidates) + " more by name"
			break
		}
		res.Targets = append(res.Targets, s.t)
		res.Reasons = append(res.Reasons, reasonOf(p, &all[i], true))
	}
	return res
}

// RankOf returns t's place (1-based) among p's candidates, their number
// and t's reason; 0 when t is not among them. Callers counts every place,
// however far down: a method called on an interface is a candidate of
// every method of that name, and dropping the low ranks would drop those
// call sites.
func (rk *ranking) RankOf(p *outcome.Pending, t snap.Target, all []Scored) (int, int, string) {
	var mine *Scored
	for i := range all {
		if all[i].t == t {
			mine = &all[i]
		}
	}
	if mine == nil {
		return 0, len(all), ""
	}
	rank := 1
	for i := range all {
		if all[i].t != t && before(all[i], *mine) {
			rank++
		}
	}
	reason := reasonOf(p, mine, false)
	if recv := p.File.RefReceiver(p.Ref); recv != "" && mine.t.D().Container != "" && resembles(recv, mine.t.D().Container) {
		reason += "; receiver looks like " + mine.t.D().Container
	}
	return rank, len(all), reason
}

func hinted(hint []snap.Target, container string) bool {
	for _, t := range hint {
		if t.D().Name == container {
			return true
		}
	}
	return false
}

// sharedDirs counts the leading folders two slash paths share.
func sharedDirs(a, b string) int {
	n := 0
	for {
		ia, ib := strings.IndexByte(a, '/'), strings.IndexByte(b, '/')
		ea, eb := a, b
		if ia >= 0 {
			ea = a[:ia]
		}
		if ib >= 0 {
			eb = b[:ib]
		}
		if ea != eb {
			return n
		}
		n++
		if ia < 0 || ib < 0 {
			return n
		}
		a, b = a[ia+1:], b[ib+1:]
	}
}

// resembles says whether a receiver expression's last word looks like a
// type name (srv and Server, conn and Conn).
func resembles(recv, typ string) bool {
	if i := strings.LastIndexAny(recv, ".:"); i >= 0 {
		recv = recv[i+1:]
	}
	if len(recv) < 2 {
		return false
	}
	return containsFold(typ, recv) || containsFold(recv, typ)
}

// containsFold is strings.Contains ignoring ASCII case, without
// allocating.
func containsFold(s, sub string) bool {
	n := len(sub)
	for i := 0; i+n <= len(s); i++ {
		if strings.EqualFold(s[i:i+n], sub) {
			return true
		}
	}
	return false
}

// dispatch is a call through an interface the index cannot see into:
// the methods called name (of classes, not of interfaces) ranked as
// candidates, each reason ending with note; else, when the index has
// none, res (why it is unresolved).
func (rk *ranking) dispatch(lazy bool, f *snap.Entry, r *record.Ref, name string, hint []snap.Target, note string, res outcome.Resolution) outcome.Resolution {
	ok := func(d *record.Def) bool { return d.Member() && record.FunctionLike(d.Kind) }
	p := &outcome.Pending{File: f, Ref: r, OK: ok, Hint: hint, Note: note, NoIface: true}
	found := false
	for _, id := range rk.s.Tables(f.Lang).Defs.Get(name) {
		g := rk.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			found = found || rk.Accepts(p, &g.Defs[i])
		}
	}
	if !found {
		return res
	}
	if lazy {
		return outcome.Resolution{Class: lang.Candidate, Pending: p}
	}
	return rk.rankAll(p)
}

// interfaceNamed says whether every class-like definition called name in
// the language is an interface or trait (and there is one).
func (rk *ranking) interfaceNamed(l *lang.Language, name string) bool {
	if name == "" {
		return false
	}
	found := false
	for _, id := range rk.s.Tables(l).Defs.Get(name) {
		g := rk.s.ByID(id)
		for _, i := range g.DefsNamed(name) {
			switch k := g.Defs[i].Kind; {
			case k == "interface" || k == "trait":
				found = true
			case record.ClassLike(k):
				return false
			}
		}
	}
	return found
}
