package lsp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/sourcegraph/jsonrpc2"
)

// IncomingCalls lists every call of the function at the place, one site
// each, through the server's call hierarchy.
func (s *Supervisor) IncomingCalls(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.Calls, error) {
	return s.calls(ctx, answer.OpIncomingCalls, file, p, false)
}

// OutgoingCalls lists every call the function at the place makes.
func (s *Supervisor) OutgoingCalls(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.Calls, error) {
	return s.calls(ctx, answer.OpOutgoingCalls, file, p, false)
}

// CallHierarchy is IncomingCalls (op OpIncomingCalls) or OutgoingCalls
// (OpOutgoingCalls) for a caller that compares call sites by position, as
// bench/graphacc compares the code graph with the server: every site is
// kept (no MaxCallSites cut), and Declared names the function asked about.
func (s *Supervisor) CallHierarchy(ctx context.Context, op string, file pathguard.Path, p protocol.Place) (*answer.Calls, error) {
	if op != answer.OpIncomingCalls && op != answer.OpOutgoingCalls {
		return nil, fmt.Errorf("call hierarchy operation %q: give %s or %s", op, answer.OpIncomingCalls, answer.OpOutgoingCalls)
	}
	return s.calls(ctx, op, file, p, true)
}

func (s *Supervisor) calls(ctx context.Context, op string, file pathguard.Path, p protocol.Place, all bool) (*answer.Calls, error) {
	r, err := s.fleet.at(ctx, file, p)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	if err := r.srv.lacksCalls(op); err != nil {
		return nil, err
	}
	var items []protocol.CallHierarchyItem
	if err := r.srv.call(ctx, "textDocument/prepareCallHierarchy", r.params(), &items); err != nil {
		if errors.Is(err, ErrServerFailed) {
			// gopls refuses a type or an import with an error, not null.
			return nil, fmt.Errorf("%w; %s has no call hierarchy for %s: point at the name of a function or method (its declaration or a call of it)", err, r.srv.spec.ID, r.where())
		}
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s has no call hierarchy for %s: point at the name of a function or method (its declaration or a call of it)", r.srv.spec.ID, r.where())
	}
	method := "callHierarchy/incomingCalls"
	if op == answer.OpOutgoingCalls {
		method = "callHierarchy/outgoingCalls"
	}
	res := &answer.Calls{Operation: op, Symbol: r.symbol, Occurrence: r.shownOccurrence(), File: r.rel, Line: r.line, Server: r.srv.spec.ID,
		Function: items[0].Name, Sites: []answer.CallSite{}, Loading: r.srv.stillLoading()}
	q := newQuoter(s.co, r.srv)
	type site struct {
		uri   string
		rng   protocol.Range
		other *protocol.CallHierarchyItem
	}
	var sites []site
	others := map[string]bool{}
	// A position may prepare several items (an overloaded name); each one's
	// calls are asked for, duplicates dropped.
	seen := map[string]bool{}
	for i := range items {
		var calls []protocol.CallHierarchyCall
		if err := r.srv.call(ctx, method, map[string]any{"item": items[i]}, &calls); err != nil {
			var se *ServerError
			if op == answer.OpOutgoingCalls && errors.As(err, &se) && se.Code == jsonrpc2.CodeMethodNotFound {
				r.srv.mu.Lock()
				r.srv.noOutgoing, r.srv.outgoingAnswer = true, se.Detail
				r.srv.mu.Unlock()
				return nil, r.srv.lacksCalls(op)
			}
			return nil, err
		}
		for _, c := range calls {
			other, uri := c.From, ""
			if op == answer.OpOutgoingCalls {
				other, uri = c.To, items[i].URI
			} else if other != nil {
				uri = other.URI
			}
			if other == nil {
				continue
			}
			others[other.URI+"#"+other.Name+fmt.Sprint(other.SelectionRange.Start)] = true
			for _, rng := range c.FromRanges {
				key := fmt.Sprintf("%s:%d:%d>%s", uri, rng.Start.Line, rng.Start.Character, other.Name)
				if seen[key] {
					continue
				}
				seen[key] = true
				sites = append(sites, site{uri: uri, rng: rng, other: other})
			}
		}
	}
	slices.SortStableFunc(sites, func(a, b site) int {
		return cmp.Or(strings.Compare(a.uri, b.uri), cmp.Compare(a.rng.Start.Line, b.rng.Start.Line),
			cmp.Compare(a.rng.Start.Character, b.rng.Start.Character))
	})
	res.Total, res.Functions = len(sites), len(others)
	keep := min(len(sites), answer.MaxCallSites)
	if all {
		keep = len(sites)
		d := answer.CallSite{Site: q.location(protocol.Location{URI: items[0].URI, Range: items[0].SelectionRange}), Name: items[0].Name,
			Kind: protocol.SymbolKindName(items[0].Kind)}
		d.Site.EndLine = 0
		if !d.Site.Outside {
			d.Detail = s.co.RelText(oneLineText(items[0].Detail))
		}
		res.Declared = &d
	}
	for _, st := range sites[:keep] {
		cs := answer.CallSite{Site: q.location(protocol.Location{URI: st.uri, Range: st.rng}), Name: st.other.Name, Kind: protocol.SymbolKindName(st.other.Kind),
			Defined: q.location(protocol.Location{URI: st.other.URI, Range: st.other.SelectionRange})}
		cs.Site.EndLine = 0
		// The declaration is named, not quoted: the site's line is the
		// quote this result is about.
		cs.Defined.Text, cs.Defined.EndLine = "", 0
		if !cs.Defined.Outside {
			cs.Detail = s.co.RelText(oneLineText(st.other.Detail))
		}
		res.Sites = append(res.Sites, cs)
	}
	return res, nil
}

// lacksCalls says, when the server is known to have no call hierarchy in
// direction op, which server lacks it and what answers instead.
func (s *server) lacksCalls(op string) error {
	s.mu.Lock()
	none, noOut, answered := !s.callHierarchy, s.noOutgoing, s.outgoingAnswer
	s.mu.Unlock()
	name := s.spec.ID
	if s.version != "" {
		name = fmt.Sprintf("%s (%s)", s.spec.ID, s.version)
	}
	graph := `code_graph with operation "callers"`
	if op == answer.OpOutgoingCalls {
		graph = `code_graph with operation "callees"`
	}
	switch {
	case none:
		return &noCallsError{fmt.Sprintf("%s has no call hierarchy (it announces no callHierarchyProvider), so it answers neither incoming_calls nor outgoing_calls; use %s, which answers from the code graph's index", name, graph)}
	case noOut && op == answer.OpOutgoingCalls:
		return &noCallsError{fmt.Sprintf("%s does not answer outgoing_calls: it announces a call hierarchy but answers callHierarchy/outgoingCalls with %q; incoming_calls works. For the calls a function makes, use %s, which answers from the code graph's index", name, answered, graph)}
	}
	return nil
}

// noCallsError is a call hierarchy the server lacks.
type noCallsError struct{ msg string }

func (e *noCallsError) Error() string { return e.msg }
func (e *noCallsError) Unwrap() error { return ErrNoCallHierarchy }

// oneLineText keeps a server's detail on one line.
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }
