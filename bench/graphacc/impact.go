package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/lsp"
)

// impactRow is one target's impact at depth 2 beside the server's
// incoming calls walked twice, as sets of functions keyed by file:line
// of their declaration.
type impactRow struct {
	target             string
	server, ours, both int
	missed, extra      []string
	err                string
}

// measureImpact walks the server's incoming calls of t, then of each
// caller, and asks graph's impact of t to depth 2.
func measureImpact(ctx context.Context, w *graph.Viewer, s *server, src *sources, t *target) impactRow {
	row := impactRow{target: t.Qualified}
	self := fmt.Sprintf("%s:%d", t.Rel, t.Line)
	truth := map[string]bool{}
	calls, err := s.incoming(ctx, t.Rel, place(t.LineTxt, t.Line, t.Col, t.Name))
	if err != nil {
		row.err = err.Error()
		return row
	}
	var first []lsp.Location
	for _, cs := range calls.Sites {
		d := cs.Defined
		k := fmt.Sprintf("%s:%d", d.Path, d.Line)
		if d.Line == 0 || strings.HasPrefix(d.Path, "/") || k == self || truth[k] {
			continue
		}
		truth[k] = true
		first = append(first, d)
	}
	for _, d := range first {
		text := src.line(d.Path, d.Line)
		name := identAt(text, d.Column-1)
		if name == "" {
			continue
		}
		more, err := s.incoming(ctx, d.Path, place(text, d.Line, d.Column-1, name))
		if err != nil {
			continue
		}
		for _, cs := range more.Sites {
			e := cs.Defined
			if k := fmt.Sprintf("%s:%d", e.Path, e.Line); e.Line > 0 && !strings.HasPrefix(e.Path, "/") && k != self {
				truth[k] = true
			}
		}
	}
	ours := map[string]bool{}
	a, err := graph.Impact(w.View(0), graph.Spec{File: t.Rel, Line: t.Line, Symbol: t.Name}, 2, 1<<20)
	if err != nil {
		row.err = err.Error()
		return row
	}
	for _, r := range a.Depths {
		for _, dep := range r.Dependents {
			line := dep.Symbol.Line
			if dep.Symbol.Kind == "file" {
				line = 1 // a module's top level: the server's item for it starts the file
			}
			ours[fmt.Sprintf("%s:%d", dep.Symbol.File, line)] = true
		}
	}
	row.server, row.ours = len(truth), len(ours)
	for k := range truth {
		if ours[k] {
			row.both++
		} else {
			row.missed = append(row.missed, k)
		}
	}
	for k := range ours {
		if !truth[k] {
			row.extra = append(row.extra, k)
		}
	}
	sort.Strings(row.missed)
	sort.Strings(row.extra)
	return row
}

// identAt is the identifier that starts at byte j of line, or "".
func identAt(line string, j int) string {
	if j < 0 || j >= len(line) {
		return ""
	}
	k := j
	for k < len(line) && (line[k] == '_' || line[k] >= 'a' && line[k] <= 'z' || line[k] >= 'A' && line[k] <= 'Z' || line[k] >= '0' && line[k] <= '9') {
		k++
	}
	return line[j:k]
}

// renderImpact is the impact section of the report: per target and in
// all, how many of the functions the server's incoming calls reach in two
// steps impact at depth 2 reaches, and how many it adds.
func renderImpact(rows []impactRow) string {
	var b strings.Builder
	b.WriteString("\n## Impact at depth 2 beside the server's incoming calls walked twice\n\n")
	b.WriteString("| target | server | impact | both | reach | added |\n|---|---|---|---|---|---|\n")
	var server, ours, both int
	for _, r := range rows {
		if r.err != "" {
			fmt.Fprintf(&b, "| %s | error: %s | | | | |\n", r.target, r.err)
			continue
		}
		server += r.server
		ours += r.ours
		both += r.both
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %d |\n", r.target, r.server, r.ours, r.both, share(r.both, r.server), r.ours-r.both)
	}
	fmt.Fprintf(&b, "| all | %d | %d | %d | %s | %d |\n", server, ours, both, share(both, server), ours-both)
	b.WriteString("\nReach: of the functions the server reaches, those impact reaches. Added: what impact reaches that the server does not (function values, interfaces, constructors, or wrong).\n")
	for _, r := range rows {
		if len(r.missed) > 0 || len(r.extra) > 0 {
			fmt.Fprintf(&b, "\n- %s: missed %s; added %s\n", r.target, strings.Join(r.missed, ", "), strings.Join(r.extra, ", "))
		}
	}
	return b.String()
}

func share(n, of int) string {
	if of == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f %%", 100*float64(n)/float64(of))
}
