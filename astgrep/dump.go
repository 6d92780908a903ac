package astgrep

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/builtin-tools/builtin-tools/astgrep/procpool"
	"github.com/builtin-tools/builtin-tools/astgrep/rule"
	"github.com/builtin-tools/builtin-tools/astgrep/tsnative"
)

// DumpNode is one node of a syntax tree dump, in preorder.
type DumpNode struct {
	Depth int
	Kind  string
	// Field is the field name by which the node is its parent's child ("" none).
	Field string
	Named bool
	// Extra marks comments and other nodes the grammar allows anywhere;
	// Error and Missing mark tree-sitter's recovery nodes.
	Extra, Error, Missing bool
	StartLine, StartCol   int // 1-based line, 1-based byte column
	EndLine, EndCol       int
	// Text is a leaf's text (trimmed to 80 bytes), empty for inner nodes.
	Text string
}

// Dump is a snippet's or a file range's syntax tree.
type Dump struct {
	Language string
	Nodes    []DumpNode
	// Total counts every node in the range; Nodes holds at most the limit
	// asked for.
	Total int
	// Errors counts ERROR and MISSING nodes in the whole source.
	Errors int
}

// DumpTree parses src as lang and lists the nodes that overlap lines
// from..to (1-based, inclusive; 0 and 0 mean the whole source), at most
// limit of them (0: no limit), so an agent can see the kinds and fields a
// rule names.
func (e *Engine) DumpTree(ctx context.Context, lang string, src []byte, from, to, limit int) (*Dump, error) {
	var d *Dump
	err := e.withTree(ctx, lang, src, func(l *language, t *tree) (err error) {
		d, err = dumpTree(l, t, src, from, to, limit)
		return err
	})
	return d, err
}

func dumpTree(l *language, t *tree, src []byte, from, to, limit int) (*Dump, error) {
	starts := lineStarts(src)
	if from <= 0 {
		from = 1
	}
	if to <= 0 || to > len(starts) {
		to = len(starts)
	}
	if from > to {
		return nil, fmt.Errorf("the line range %d-%d is empty (the source has %d lines)", from, to, len(starts))
	}
	fieldNames := map[uint8]string{}
	for name, id := range l.g.Fields {
		fieldNames[id] = name
	}
	d := &Dump{Language: l.id, Errors: t.errorCount()}
	lo, hi := starts[from-1], len(src)
	if to < len(starts) {
		hi = starts[to]
	}
	var open []int // the ancestors of node i, innermost last
	for i := range t.nodes {
		n := t.nodes[i]
		for len(open) > 0 && int(t.nodes[open[len(open)-1]].Last) <= i {
			open = open[:len(open)-1]
		}
		depth := len(open)
		open = append(open, i)
		if i > 0 && (int(n.End) <= lo && n.End > n.Start || int(n.End) < lo || int(n.Start) >= hi) {
			continue
		}
		d.Total++
		if limit > 0 && len(d.Nodes) >= limit {
			continue
		}
		dn := DumpNode{Depth: depth, Kind: l.symbolName(n.Sym), Field: fieldNames[n.Field], Named: n.Flags&tsnative.FlagNamed != 0,
			Extra: n.Flags&tsnative.FlagExtra != 0, Error: n.Flags&tsnative.FlagError != 0, Missing: n.Flags&tsnative.FlagMissing != 0}
		dn.StartLine = lineOf(starts, int(n.Start))
		dn.StartCol = int(n.Start) - starts[dn.StartLine-1] + 1
		dn.EndLine = lineOf(starts, int(n.End))
		dn.EndCol = int(n.End) - starts[dn.EndLine-1] + 1
		if t.leaf(i) {
			dn.Text = strings.ToValidUTF8(string(t.text(i)), "?")
			if len(dn.Text) > 80 {
				dn.Text = trimUTF8(dn.Text[:80]) + "…"
			}
		}
		d.Nodes = append(d.Nodes, dn)
	}
	return d, nil
}

func trimUTF8(s string) string {
	return strings.ToValidUTF8(s, "")
}

// Kinds lists language's named node kinds and its field names, sorted,
// as rules name them.
func (e *Engine) Kinds(language string) (kinds, fields []string, err error) {
	l, err := e.loaded(language)
	if err != nil {
		return nil, nil, err
	}
	l.loadNames()
	seen := map[string]bool{}
	for i, name := range l.names {
		if i < len(l.g.Named) && l.g.Named[i] == 1 && !seen[name] {
			seen[name] = true
			kinds = append(kinds, name)
		}
	}
	fields = mapKeys(l.g.Fields)
	sort.Strings(kinds)
	sort.Strings(fields)
	return kinds, fields, nil
}

// SnippetFile is the name matches in a snippet are reported under.
const SnippetFile = "(code)"

// MatchSnippet runs q's pattern or rule over code (in q.Language, which
// is required) instead of files: nothing is read from disk. Matches are
// in SnippetFile.
func (e *Engine) MatchSnippet(ctx context.Context, q Query, code []byte) (*Result, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	if q.Language == "" {
		return nil, errors.New("matching a snippet needs its language")
	}
	l := e.langs.lookup(q.Language)
	if l == nil {
		return nil, e.unknown(q.Language, "")
	}
	var pr *rule.Parsed
	switch {
	case q.Rule != nil && q.Pattern != "":
		return nil, ErrRuleAndPattern
	case q.Rule != nil:
		var err error
		if pr, err = rule.Parse(q.Rule); err != nil {
			return nil, err
		}
	case strings.TrimSpace(q.Pattern) == "":
		return nil, ErrEmptyPattern
	}
	if err := l.load(); err != nil {
		return nil, err
	}
	c, err := e.compileQuery(ctx, l, q, pr)
	if err != nil {
		return nil, err
	}
	s, err := procpool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	t, err := e.parseWith(ctx, s.Parser, l, append([]byte(nil), code...))
	procpool.Release(s)
	if err != nil {
		return nil, err
	}
	m := e.newMatcher(ctx, c)
	m.t = t
	raw := m.findAll()
	switch {
	case errors.Is(m.stopped, errStepBudget):
		return nil, errors.New(e.stepBudget("on the snippet"))
	case m.stopped != nil:
		return nil, m.stopped
	}
	maxResults := q.MaxResults
	if maxResults <= 0 {
		maxResults = DefaultMaxResults
	}
	res := &Result{Language: l.id, Context: c.context, Total: len(raw), FilesScanned: 1, FilesParsed: 1}
	res.Metavariables = c.names()
	starts := lineStarts(t.src)
	for i, r := range raw {
		if i >= maxResults {
			break
		}
		res.Matches = append(res.Matches, trimMatch(e.toMatch(t, c, SnippetFile, starts, r)))
	}
	return res, nil
}
