package graphtool

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/registry"
)

// Bounds of one confirmation: sites asked at once, and the defaults of
// sites asked in all and of the time from the first request (the server's
// start included).
const (
	confirmInFlight = 4
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
	Definition *lsp.Location `json:"definition,omitempty"`
	DefinedAs  string        `json:"defined_as,omitempty" jsonschema:"the index's definition at that place"`
	Why        string        `json:"why,omitempty" jsonschema:"for rejected and unchecked: why"`
	// target's place, when known: its file and lines.
	tfile        string
	tline, tlast int
	asked        bool // the server answered, or failed, on it
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
func candidateSites(a *graph.Answer) []ConfirmMark {
	var out []ConfirmMark
	add := func(s graph.Site, target string, t *graph.Symbol) {
		if s.Class != graph.Candidate {
			return
		}
		m := ConfirmMark{File: s.File, Line: s.Line, Column: s.Column, Call: s.Call, Target: target}
		if t != nil {
			m.tfile, m.tline, m.tlast = t.File, t.Line, max(t.EndLine, t.Line)
		}
		out = append(out, m)
	}
	if a.Op == "callers" && a.Symbol != nil {
		for _, s := range a.Sites {
			add(s, a.Symbol.Qualified, a.Symbol)
		}
		return out
	}
	known := map[string]*graph.Symbol{}
	if a.Symbol != nil {
		known[a.Symbol.Qualified] = a.Symbol
	}
	for _, ring := range a.Depths {
		for _, d := range ring.Dependents {
			add(d.Via, d.On, known[d.On])
		}
		for i := range ring.Dependents {
			s := &ring.Dependents[i].Symbol
			if known[s.Qualified] == nil {
				known[s.Qualified] = s
			}
		}
	}
	return out
}

// confirm asks the run's language server for the definition at each of
// the answer's candidate sites, a few at once, within the bounds.
func confirm(ctx context.Context, c *registry.Call, g *Graph, x *graph.Index, a *graph.Answer) *Confirmation {
	marks := candidateSites(a)
	maxSites, maxTime := cmp.Or(g.ConfirmSites, confirmMaxSites), cmp.Or(g.ConfirmTime, confirmMaxTime)
	cf := &Confirmation{Candidates: len(marks), MaxSites: maxSites, MaxSeconds: maxTime.Seconds(), Sites: marks}
	if len(marks) == 0 {
		return cf
	}
	s, ok := lsptool.Key.Of(c.Run)
	if !ok {
		cf.NoServer = "this run has no language servers (the lsp tool is not loaded)"
		cf.Unchecked = len(marks)
		for i := range marks {
			marks[i].Mark, marks[i].Why = Unchecked, "no language server"
		}
		return cf
	}
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, maxTime)
	defer cancel()
	ck := &checker{c: c, x: x, sup: s.Sup, files: map[string][]string{}, outlines: map[string][]graph.Symbol{}}
	n := min(len(marks), maxSites)
	// The first site alone: it starts the server, and says whether there
	// is one for the language.
	server, err := ck.check(ctx, &marks[0])
	if err != nil && (errors.Is(err, lsp.ErrNotOwned) || errors.Is(err, lsp.ErrUnavailable)) {
		cf.NoServer = noServer(a, s.Sup, err)
		for i := range marks {
			marks[i].Mark, marks[i].Why = Unchecked, "no language server"
		}
		cf.Unchecked = len(marks)
		cf.ElapsedMS = time.Since(start).Milliseconds()
		return cf
	}
	cf.Server = server
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, confirmInFlight)
	for i := 1; i < n; i++ {
		wg.Add(1)
		sem <- struct{}{}
		go func(m *ConfirmMark) {
			defer func() { <-sem; wg.Done() }()
			if srv, _ := ck.check(ctx, m); srv != "" {
				mu.Lock()
				cf.Server = srv
				mu.Unlock()
			}
		}(&marks[i])
	}
	wg.Wait()
	cf.ElapsedMS = time.Since(start).Milliseconds()
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
	return cf
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
	x        *graph.Index
	sup      *lsp.Supervisor
	mu       sync.Mutex
	files    map[string][]string
	outlines map[string][]graph.Symbol
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
	if a, err := k.x.Outline(rel, 0); err == nil {
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
	place, ok := lsp.PlaceAt(ls[m.Line-1], m.Line, m.Column-1, name)
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
		m.Mark, m.Why = Unchecked, k.sup.RelText(err.Error())
		return "", err
	}
	m.asked = true
	if len(res.Locations) == 0 {
		m.Mark, m.Why = Unchecked, res.Server+" finds no definition there"
		return res.Server, nil
	}
	// A definition spread over several declarations (TS overloads, a C
	// prototype and its body) is confirmed by any of them.
	var first *lsp.Location
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

// definedAt is the innermost indexed definition holding l, and whether an
// interface holds it.
func (k *checker) definedAt(l lsp.Location) (*graph.Symbol, bool) {
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
func (k *checker) isTarget(m *ConfirmMark, l lsp.Location, def *graph.Symbol) bool {
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
func confirmText(cf *Confirmation, op string, room int) string {
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
	if cf.Bound != "" {
		fmt.Fprintf(&b, " (the %s bound was reached; ask again to check the rest)", cf.Bound)
	}
	b.WriteByte('\n')
	for i, m := range cf.Sites {
		line := fmt.Sprintf("%s:%d  %s", m.File, m.Line, m.Call)
		if op == "impact" {
			line += " -> " + m.Target
		}
		line += "  [" + m.Mark
		if m.Why != "" {
			line += ": " + m.Why
		}
		line += "]\n"
		if b.Len()+len(line) > room {
			fmt.Fprintf(&b, "(%d more marks not shown: the output budget was reached; the structured result has them all)\n", len(cf.Sites)-i)
			break
		}
		b.WriteString(line)
	}
	return strings.TrimRight(b.String(), "\n")
}
