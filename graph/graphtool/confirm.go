package graphtool

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/registry/textfit"
)

// Bounds of one confirmation: sites asked at once, servers waited on at
// once (a server's first site is asked alone: it starts the server, or
// waits for its load), and the defaults of sites asked in all and of the
// time from the first request (the servers' starts included).
const (
	confirmInFlight = 4
	confirmStarts   = 2
	confirmMaxSites = 200
	confirmMaxTime  = 10 * time.Second
)

// Marks a confirmation gives a candidate site.
const (
	Confirmed = "confirmed" // the server's definition is the target
	Rejected  = "rejected"  // the server's definition is elsewhere
	Unchecked = "unchecked" // not asked (past a bound) or no answer
)

// Confirmation is what the language server said about an answer's
// name-only candidate sites.
type Confirmation struct {
	Server string `json:"server,omitempty" jsonschema:"the language server asked"`
	// NoServer says why nothing was asked; the answer is then as without
	// confirm.
	NoServer   string        `json:"no_server,omitempty" jsonschema:"why no server was asked: none for the language, or no lsp in this run"`
	Candidates int           `json:"candidates" jsonschema:"candidate sites in the answer"`
	Asked      int           `json:"asked" jsonschema:"sites the server was asked about"`
	Confirmed  int           `json:"confirmed"`
	Rejected   int           `json:"rejected"`
	Unchecked  int           `json:"unchecked"`
	MaxSites   int           `json:"max_sites" jsonschema:"the bound on sites asked"`
	MaxSeconds float64       `json:"max_seconds" jsonschema:"the bound on time, from the first request"`
	ElapsedMS  int64         `json:"elapsed_ms" jsonschema:"time spent asking"`
	Bound      string        `json:"bound,omitempty" jsonschema:"the bound that left sites unchecked: sites or time"`
	Sites      []ConfirmMark `json:"sites,omitempty"`
	// Dependents are impact's: a dependent may call the ring before at
	// several candidate sites, and is a dependent when any of them is.
	Dependents []DependentMark `json:"dependents,omitempty" jsonschema:"for impact: each dependent listed through candidate sites, marked from all of them: confirmed when one is, rejected when every one is, else unchecked"`
}

// DependentMark is an impact dependent's mark, from its candidate sites.
type DependentMark struct {
	Symbol string `json:"symbol" jsonschema:"the dependent, qualified"`
	Depth  int    `json:"depth"`
	Mark   string `json:"mark" jsonschema:"confirmed, rejected or unchecked"`
	Sites  int    `json:"sites" jsonschema:"its candidate sites in the answer"`
	Why    string `json:"why,omitempty" jsonschema:"for rejected and unchecked: why"`
	left   int    // its candidate calls the answer does not list
}

// ConfirmMark is one candidate site and its mark.
type ConfirmMark struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
	Call   string `json:"call"`
	Target string `json:"target" jsonschema:"the definition the site is a candidate of"`
	Mark   string `json:"mark" jsonschema:"confirmed, rejected or unchecked"`
	// Definition is where the server says the call leads.
	Definition *answer.Location `json:"definition,omitempty"`
	DefinedAs  string           `json:"defined_as,omitempty" jsonschema:"the index's definition at that place"`
	Why        string           `json:"why,omitempty" jsonschema:"for rejected and unchecked: why"`
	Dependent  string           `json:"dependent,omitempty" jsonschema:"for impact: the dependent the site would make one"`
	// target's place, when known: its file and lines.
	tfile        string
	tline, tlast int
	asked        bool // the server answered, or failed, on it
	dep          int  // its dependent in Confirmation.Dependents, or -1
}

// Result is a code_graph answer, with the language server's marks when
// confirm was asked.
type Result struct {
	*graph.Answer
	Confirm *Confirmation `json:"confirm,omitempty"`
	text    string
}

// Text is the answer for a model.
func (r Result) Text() string { return r.text }

// candidateSites collects an answer's candidate sites with their targets:
// callers' sites lead to the answer's symbol, an impact dependent's to the
// definition it names (found in the ring before it, when listed there).
// An impact dependent listed through a candidate site brings all of its
// candidate sites, and is one of the dependents returned.
func candidateSites(a *graph.Answer) ([]ConfirmMark, []DependentMark) {
	var out []ConfirmMark
	var deps []DependentMark
	add := func(s graph.Site, target string, t *graph.Symbol, dep int) {
		if s.Class != graph.Candidate {
			return
		}
		m := ConfirmMark{File: s.File, Line: s.Line, Column: s.Column, Call: s.Call, Target: target, dep: dep}
		if t != nil {
			m.tfile, m.tline, m.tlast = t.File, t.Line, max(t.EndLine, t.Line)
		}
		if dep >= 0 {
			m.Dependent = deps[dep].Symbol
			deps[dep].Sites++
		}
		out = append(out, m)
	}
	if a.Op == "callers" && a.Symbol != nil {
		for _, s := range a.Sites {
			add(s, a.Symbol.Qualified, a.Symbol, -1)
		}
		return out, nil
	}
	known := map[string]*graph.Symbol{}
	if a.Symbol != nil {
		known[a.Symbol.Qualified] = a.Symbol
	}
	for _, ring := range a.Depths {
		for _, d := range ring.Dependents {
			if d.Via.Class != graph.Candidate {
				continue
			}
			dep := len(deps)
			deps = append(deps, DependentMark{Symbol: d.Symbol.Qualified, Depth: ring.Depth, left: d.MoreLeft})
			add(d.Via, d.On, known[d.On], dep)
			for _, m := range d.More {
				add(m.Site, m.On, known[m.On], dep)
			}
		}
		for i := range ring.Dependents {
			s := &ring.Dependents[i].Symbol
			if known[s.Qualified] == nil {
				known[s.Qualified] = s
			}
		}
	}
	return out, deps
}

// servers are the run's language servers, which confirm asks.
var servers = registry.Requires(lsptool.Key, "confirm (candidate sites checked by a language server)", "code_graph")

// confirm asks the run's language server for the definition at each of
// the answer's candidate sites, a few at once, within the bounds.
func confirm(ctx context.Context, c *registry.Call, g *Graph, v graph.View, a *graph.Answer) *Confirmation {
	marks, deps := candidateSites(a)
	maxSites, maxTime := cmp.Or(g.ConfirmSites, confirmMaxSites), cmp.Or(g.ConfirmTime, confirmMaxTime)
	cf := &Confirmation{Candidates: len(marks), MaxSites: maxSites, MaxSeconds: maxTime.Seconds(), Sites: marks, Dependents: deps}
	if len(marks) == 0 {
		return cf
	}
	s, ok := servers.Of(c.Run)
	if !ok {
		cf.NoServer = "this run has no language servers (the lsp tool is not loaded)"
		noneAsked(cf)
		return cf
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, maxTime)
	defer cancel()
	ck := &checker{c: c, v: v, sup: s.Sup, files: map[string][]string{}, outlines: map[string][]graph.Symbol{}, stats: map[string]bool{}}
	n := min(len(marks), maxSites)
	server, none := ck.ask(ctx, marks[:n])
	cf.ElapsedMS = time.Since(start).Milliseconds()
	if none != nil {
		cf.NoServer = noServer(a, s.Sup, none)
		noneAsked(cf)
		return cf
	}
	cf.Server = server
	for i := range marks {
		m := &marks[i]
		switch {
		case i >= n:
			m.Mark, m.Why = Unchecked, fmt.Sprintf("past the bound of %d sites", maxSites)
			cf.Bound = "sites"
		case m.Mark == "":
			m.Mark, m.Why = Unchecked, "past the bound of "+seconds(cf.MaxSeconds)
			cf.Bound = "time"
		}
		if m.asked {
			cf.Asked++
		}
		switch m.Mark {
		case Confirmed:
			cf.Confirmed++
		case Rejected:
			cf.Rejected++
		default:
			cf.Unchecked++
		}
	}
	markDependents(cf)
	return cf
}

// noneAsked marks every site and dependent unchecked: no server was asked.
func noneAsked(cf *Confirmation) {
	for i := range cf.Sites {
		cf.Sites[i].Mark, cf.Sites[i].Why = Unchecked, "no language server"
	}
	for i := range cf.Dependents {
		cf.Dependents[i].Mark, cf.Dependents[i].Why = Unchecked, "no language server"
	}
	cf.Unchecked = len(cf.Sites)
}

// markDependents marks each impact dependent from its sites: confirmed
// when one is, rejected only when every one is and none went unlisted.
func markDependents(cf *Confirmation) {
	confirmed, rejected := make([]int, len(cf.Dependents)), make([]int, len(cf.Dependents))
	for _, m := range cf.Sites {
		switch {
		case m.dep < 0:
		case m.Mark == Confirmed:
			confirmed[m.dep]++
		case m.Mark == Rejected:
			rejected[m.dep]++
		}
	}
	for i := range cf.Dependents {
		d := &cf.Dependents[i]
		switch {
		case confirmed[i] > 0:
			d.Mark = Confirmed
		case rejected[i] == d.Sites && d.left > 0:
			d.Mark, d.Why = Unchecked, fmt.Sprintf("its %d listed sites lead elsewhere; %d more candidate calls were not listed or asked", d.Sites, d.left)
		case rejected[i] == d.Sites:
			d.Mark, d.Why = Rejected, "every candidate site leads elsewhere"
			if d.Sites == 1 {
				d.Why = "its one candidate site leads elsewhere"
			}
		default:
			d.Mark, d.Why = Unchecked, fmt.Sprintf("none of its %d candidate sites was confirmed, %d left unchecked", d.Sites, d.Sites-rejected[i])
		}
	}
}

// ask marks the sites, grouped by the folder their server is rooted in:
// each group's first site alone (it starts that server, or waits for its
// load), then the rest a few at once. Groups go on side by side, so a
// server still loading its workspace holds one request, not every slot.
// It returns a server that answered, and, when every group's server is
// missing or cannot run, the first such error (nothing was asked).
func (k *checker) ask(ctx context.Context, marks []ConfirmMark) (string, error) {
	groups := map[string][]int{}
	var order []string
	for i := range marks {
		key := k.serverDir(marks[i].File)
		if groups[key] == nil {
			order = append(order, key)
		}
		groups[key] = append(groups[key], i)
	}
	sort.SliceStable(order, func(i, j int) bool { return len(groups[order[i]]) > len(groups[order[j]]) })
	var (
		mu      sync.Mutex
		server  string
		none    error
		missing int // groups with no server
		wg      sync.WaitGroup
		starts  = make(chan struct{}, confirmStarts)
		slots   = make(chan struct{}, confirmInFlight)
	)
	answered := func(srv string) {
		if srv != "" {
			mu.Lock()
			server = srv
			mu.Unlock()
		}
	}
	for _, key := range order {
		idx := groups[key]
		// The slot is taken here, in order: the biggest groups' servers
		// are waited on first.
		select {
		case starts <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			first := &marks[idx[0]]
			srv, err := k.check(ctx, first)
			<-starts
			answered(srv)
			if err != nil && (errors.Is(err, lsp.ErrNotOwned) || errors.Is(err, lsp.ErrUnavailable)) {
				mu.Lock()
				missing++
				if none == nil {
					none = err
				}
				mu.Unlock()
				for _, i := range idx[1:] {
					marks[i].Mark, marks[i].Why = Unchecked, first.Why
				}
				return
			}
			var gw sync.WaitGroup
			for _, i := range idx[1:] {
				select {
				case slots <- struct{}{}:
				case <-ctx.Done():
					gw.Wait()
					return
				}
				gw.Add(1)
				go func(m *ConfirmMark) {
					defer func() { <-slots; gw.Done() }()
					srv, _ := k.check(ctx, m)
					answered(srv)
				}(&marks[i])
			}
			gw.Wait()
		}()
	}
	wg.Wait()
	if missing < len(order) {
		none = nil
	}
	return server, none
}

// serverDir names the server a site's file is likely served by: the
// default row owning its extension and the nearest folder, up to the
// root, holding one of that row's root markers. Only the order of asking
// depends on it.
func (k *checker) serverDir(rel string) string {
	ext := path.Ext(rel)
	k.mu.Lock()
	if k.specs == nil {
		k.specs = langserver.Table()
	}
	k.mu.Unlock()
	for _, spec := range k.specs {
		if _, ok := spec.Extensions[ext]; !ok {
			continue
		}
		for dir := path.Dir(rel); ; dir = path.Dir(dir) {
			for _, m := range spec.RootMarkers {
				if k.exists(dir, m) {
					return spec.ID + " " + dir
				}
			}
			if dir == "." || dir == "/" {
				break
			}
		}
		return spec.ID
	}
	return ext
}

// exists says whether folder dir holds an entry of that name: a marker
// that is a link or a pipe is the server's to refuse, in its own group.
func (k *checker) exists(dir, name string) bool {
	key := path.Join(dir, name)
	k.mu.Lock()
	defer k.mu.Unlock()
	if ok, seen := k.stats[key]; seen {
		return ok
	}
	ok := false
	if loc, err := k.c.Location(dir); err == nil {
		_, err = loc.Guard().Lstat(filepath.Join(loc.Abs(), name))
		ok = err == nil
	}
	k.stats[key] = ok
	return ok
}

// noServer is the one line saying why no server was asked.
func noServer(a *graph.Answer, sup *lsp.Supervisor, err error) string {
	lang := ""
	if a.Symbol != nil {
		lang = a.Symbol.Language
	}
	if ue := (*lsp.UnavailableError)(nil); errors.As(err, &ue) {
		return fmt.Sprintf("no language server can answer for %s here: %s", lang, strings.Join(ue.Reasons, "; "))
	}
	if lang == "" {
		return "no language server handles these files"
	}
	return fmt.Sprintf("no language server handles %s files", lang)
}

// checker asks about sites, reading each file's lines and each outline
// once.
type checker struct {
	c        *registry.Call
	v        graph.View // the answer's: outlines and build lines come from its snapshot
	sup      *lsp.Supervisor
	mu       sync.Mutex
	files    map[string][]string
	outlines map[string][]graph.Symbol
	stats    map[string]bool   // whether a file exists
	specs    []langserver.Spec // the default server rows
}

func (k *checker) lines(rel string) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if ls, ok := k.files[rel]; ok {
		return ls, nil
	}
	loc, err := k.c.Location(rel)
	if err != nil {
		return nil, err
	}
	data, _, err := loc.Guard().ReadFile(loc.Abs(), 16<<20)
	if err != nil {
		return nil, err
	}
	ls := strings.Split(string(bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))), "\n")
	k.files[rel] = ls
	return ls, nil
}

func (k *checker) outline(rel string) []graph.Symbol {
	k.mu.Lock()
	defer k.mu.Unlock()
	if o, ok := k.outlines[rel]; ok {
		return o
	}
	var defs []graph.Symbol
	if a, err := graph.Outline(k.v, rel); err == nil {
		defs = a.Definitions
	}
	k.outlines[rel] = defs
	return defs
}

// check marks one site and returns the server that answered. An error
// that is the server's (not a bound) leaves the site unchecked, saying so.
func (k *checker) check(ctx context.Context, m *ConfirmMark) (string, error) {
	name := m.Call
	if i := strings.LastIndexAny(name, ".:>"); i >= 0 {
		name = name[i+1:]
	}
	ls, err := k.lines(m.File)
	if err != nil || m.Line < 1 || m.Line > len(ls) {
		m.Mark, m.Why = Unchecked, "the file could not be read again"
		return "", err
	}
	place, ok := protocol.PlaceAt(ls[m.Line-1], m.Line, m.Column-1, name)
	if !ok {
		m.Mark, m.Why = Unchecked, "the call is no longer where the index saw it"
		return "", nil
	}
	loc, err := k.c.Location(m.File)
	if err != nil {
		m.Mark, m.Why = Unchecked, err.Error()
		return "", err
	}
	res, err := k.sup.Definition(ctx, loc, place)
	if err != nil {
		if ctx.Err() != nil {
			return "", err // past the time bound: marked by the caller
		}
		m.asked = true
		m.Mark, m.Why = Unchecked, k.tagOnly(m.File)+k.sup.RelText(err.Error())
		return "", err
	}
	m.asked = true
	if len(res.Locations) == 0 {
		m.Mark, m.Why = Unchecked, k.tagOnly(m.File)+res.Server+" finds no definition there"
		return res.Server, nil
	}
	// A definition spread over several declarations (TS overloads, a C
	// prototype and its body) is confirmed by any of them.
	var first *answer.Location
	for i := range res.Locations {
		l := res.Locations[i]
		if first == nil {
			first = &l
		}
		if l.Outside {
			continue
		}
		def, iface := k.definedAt(l)
		if k.isTarget(m, l, def) {
			m.Mark, m.Definition, m.DefinedAs = Confirmed, &l, m.Target
			return res.Server, nil
		}
		if iface && i == 0 {
			// A call through an interface may run the target: the server's
			// definition cannot tell.
			m.Mark, m.Definition, m.DefinedAs = Unchecked, &l, def.Qualified
			m.Why = fmt.Sprintf("%s says it is the interface method %s (%s:%d), which the target may implement", res.Server, def.Qualified, l.Path, l.Line)
			return res.Server, nil
		}
		if i == 0 && def != nil {
			m.DefinedAs = def.Qualified
		}
	}
	m.Mark, m.Definition = Rejected, first
	switch {
	case first.Outside:
		m.Why = res.Server + " says it is defined outside the root"
	case m.DefinedAs != "":
		m.Why = fmt.Sprintf("%s says it is %s (%s:%d)", res.Server, m.DefinedAs, first.Path, first.Line)
	default:
		m.Why = fmt.Sprintf("%s says it is at %s:%d", res.Server, first.Path, first.Line)
	}
	return res.Server, nil
}

// tagOnly says, before a server's failure on a file, that the file builds
// only with a tag of its own: a server that builds for some system
// without that tag has no package for it.
func (k *checker) tagOnly(rel string) string {
	if t := graph.TagOnly(k.v, rel); t != "" {
		return fmt.Sprintf("%s builds only with a tag no GOOS or GOARCH sets (%s), which the server does not build with: ", rel, t)
	}
	return ""
}

// definedAt is the innermost indexed definition holding l, and whether an
// interface holds it.
func (k *checker) definedAt(l answer.Location) (*graph.Symbol, bool) {
	var best *graph.Symbol
	iface := false
	defs := k.outline(l.Path)
	for i := range defs {
		d := &defs[i]
		if d.Line > l.Line || max(d.EndLine, d.Line) < l.Line {
			continue
		}
		if d.Kind == "interface" {
			iface = true
		}
		// On a tie the later one: the outline lists a container first.
		if best == nil || max(d.EndLine, d.Line)-d.Line <= max(best.EndLine, best.Line)-best.Line {
			best = d
		}
	}
	return best, iface
}

// isTarget says whether the server's location is the site's target: the
// index's definition there is it, or, with no outline, the location is
// within the target's lines.
func (k *checker) isTarget(m *ConfirmMark, l answer.Location, def *graph.Symbol) bool {
	if def != nil {
		return def.Qualified == m.Target && (m.tfile == "" || def.File == m.tfile && def.Line == m.tline)
	}
	return m.tfile != "" && l.Path == m.tfile && m.tline <= l.Line && l.Line <= m.tlast
}

func seconds(s float64) string {
	return strconv.FormatFloat(s, 'f', -1, 64) + " s"
}

// confirmText renders the marks after the answer's text, within room
// characters.
func confirmText(cf *Confirmation, op string, room textfit.Budget) string {
	var b strings.Builder
	if cf.NoServer != "" {
		fmt.Fprintf(&b, "confirm: nothing asked: %s; the candidates above are unconfirmed", cf.NoServer)
		return b.String()
	}
	if cf.Candidates == 0 {
		return "confirm: no candidate sites in this answer, nothing to ask"
	}
	server := cmp.Or(cf.Server, "the language server")
	fmt.Fprintf(&b, "confirm (%s, definition at each candidate site; at most %d sites and %s): %s, %d confirmed, %d rejected, %d unchecked",
		server, cf.MaxSites, seconds(cf.MaxSeconds), textcut.Count(cf.Candidates, "candidate", "candidates"), cf.Confirmed, cf.Rejected, cf.Unchecked)
	switch cf.Bound {
	case "time":
		b.WriteString(" (the time bound was reached; ask again to check the rest: the servers started stay up and answer sooner)")
	case "sites":
		b.WriteString(" (the sites bound was reached; ask lsp definition at the unchecked sites)")
	}
	if len(cf.Dependents) > 0 {
		var n [3]int
		for _, d := range cf.Dependents {
			switch d.Mark {
			case Confirmed:
				n[0]++
			case Rejected:
				n[1]++
			default:
				n[2]++
			}
		}
		fmt.Fprintf(&b, "; of %s listed through them, %d confirmed, %d rejected, %d unchecked",
			textcut.Count(len(cf.Dependents), "dependent", "dependents"), n[0], n[1], n[2])
	}
	b.WriteByte('\n')
	var lines []string
	for _, d := range cf.Dependents {
		line := fmt.Sprintf("dependent %s (depth %d, %s)  [%s", d.Symbol, d.Depth, textcut.Count(d.Sites, "site", "sites"), d.Mark)
		if d.Why != "" {
			line += ": " + d.Why
		}
		lines = append(lines, line+"]\n")
	}
	for _, m := range cf.Sites {
		line := fmt.Sprintf("%s:%d  %s", m.File, m.Line, m.Call)
		if op == "impact" {
			line += " -> " + m.Target
		}
		line += "  [" + m.Mark
		if m.Why != "" {
			line += ": " + m.Why
		}
		lines = append(lines, line+"]\n")
	}
	used := utf8.RuneCountInString(b.String())
	for i, line := range lines {
		if used += utf8.RuneCountInString(line); used > room.Chars() {
			fmt.Fprintf(&b, "(%d more marks not shown: the output budget was reached; the structured result has them all)\n", len(lines)-i)
			break
		}
		b.WriteString(line)
	}
	return strings.TrimRight(b.String(), "\n")
}
