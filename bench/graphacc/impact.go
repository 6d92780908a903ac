package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/graph"
	"github.com/builtin-tools/builtin-tools/lsp/answer"
)

// impactRow is one target's impact at one depth beside the server's
// incoming calls walked as many times, as sets of functions keyed by
// file:line of their declaration.
type impactRow struct {
	target             string
	depth              int
	server, ours, both int
	missed, extra      []string
	err                string
}

// measureImpact walks the server's incoming calls of t, then of each
// caller, to depth, and asks graph's impact of t to the same depth: one
// row per depth from 2.
func measureImpact(ctx context.Context, w *graph.Viewer, s *server, src *sources, t *target, depth int) []impactRow {
	fail := func(err error) []impactRow {
		var rows []impactRow
		for d := 2; d <= depth; d++ {
			rows = append(rows, impactRow{target: t.Qualified, depth: d, err: err.Error()})
		}
		return rows
	}
	self := fmt.Sprintf("%s:%d", t.Rel, t.Line)
	truth := map[string]int{} // the depth each function is first reached at
	calls, err := s.incoming(ctx, t.Rel, place(t.LineTxt, t.Line, t.Col, t.Name))
	if err != nil {
		return fail(err)
	}
	var frontier []answer.Location
	reach := func(cs *answer.Calls, d int) {
		for _, c := range cs.Sites {
			e := c.Defined
			k := fmt.Sprintf("%s:%d", e.Path, e.Line)
			if e.Line == 0 || strings.HasPrefix(e.Path, "/") || k == self || truth[k] > 0 {
				continue
			}
			truth[k] = d
			frontier = append(frontier, e)
		}
	}
	reach(calls, 1)
	for d := 2; d <= depth; d++ {
		now := frontier
		frontier = nil
		for _, e := range now {
			text := src.line(e.Path, e.Line)
			name := identAt(text, e.Column-1)
			if name == "" {
				continue
			}
			more, err := s.incoming(ctx, e.Path, place(text, e.Line, e.Column-1, name))
			if err != nil {
				continue
			}
			reach(more, d)
		}
	}
	ours := map[string]int{}
	a, err := graph.Impact(w.View(0), graph.Spec{File: t.Rel, Line: t.Line, Symbol: t.Name}, depth, 1<<20)
	if err != nil {
		return fail(err)
	}
	for _, r := range a.Depths {
		for _, dep := range r.Dependents {
			line := dep.Symbol.Line
			if dep.Symbol.Kind == "file" {
				line = 1 // a module's top level: the server's item for it starts the file
			}
			if k := fmt.Sprintf("%s:%d", dep.Symbol.File, line); ours[k] == 0 || r.Depth < ours[k] {
				ours[k] = r.Depth
			}
		}
	}
	var rows []impactRow
	for d := 2; d <= depth; d++ {
		row := impactRow{target: t.Qualified, depth: d}
		for k, at := range truth {
			if at > d {
				continue
			}
			row.server++
			if o := ours[k]; o > 0 && o <= d {
				row.both++
			} else {
				row.missed = append(row.missed, k)
			}
		}
		for k, at := range ours {
			if at > d {
				continue
			}
			row.ours++
			if o := truth[k]; o == 0 || o > d {
				row.extra = append(row.extra, k)
			}
		}
		sort.Strings(row.missed)
		sort.Strings(row.extra)
		rows = append(rows, row)
	}
	return rows
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

// renderImpact is the impact section of the report: per depth, per
// target and in all, how many of the functions the server's incoming
// calls reach in that many steps impact at that depth reaches, how many
// it adds, and the share of impact's functions the server reaches too.
func renderImpact(rows []impactRow, depth int) string {
	var b strings.Builder
	for d := 2; d <= depth; d++ {
		fmt.Fprintf(&b, "\n## Impact at depth %d beside the server's incoming calls walked %d times\n\n", d, d)
		b.WriteString("| target | server | impact | both | reach | added | precision |\n|---|---|---|---|---|---|---|\n")
		var server, ours, both int
		for _, r := range rows {
			if r.depth != d {
				continue
			}
			if r.err != "" {
				fmt.Fprintf(&b, "| %s | error: %s | | | | | |\n", r.target, r.err)
				continue
			}
			server += r.server
			ours += r.ours
			both += r.both
			fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %d | %s |\n", r.target, r.server, r.ours, r.both, share(r.both, r.server), r.ours-r.both, share(r.both, r.ours))
		}
		fmt.Fprintf(&b, "| all | %d | %d | %d | %s | %d | %s |\n", server, ours, both, share(both, server), ours-both, share(both, ours))
	}
	b.WriteString("\nReach: of the functions the server reaches, those impact reaches. Added: what impact reaches that the server does not (function values, interfaces, constructors, or wrong). Precision: of impact's functions, those the server reaches too.\n")
	for _, r := range rows {
		if r.depth == depth && (len(r.missed) > 0 || len(r.extra) > 0) {
			fmt.Fprintf(&b, "\n- %s (depth %d): missed %s; added %s\n", r.target, depth, strings.Join(r.missed, ", "), strings.Join(r.extra, ", "))
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
