package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/builtin-tools/builtin-tools/lsp/answer"
	"github.com/builtin-tools/builtin-tools/lsp/checkout"
	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// request is a validated position: the file, its server, and the place
// a Place names, in the server's encoding.
type request struct {
	srv        *server
	path       string
	rel        string
	line       int // 1-based
	symbol     string
	occurrence int    // as asked, 0 for the first
	part       string // the text pointed at: symbol, or its last part
	byteAt     int    // byte column of part on the line
	pos        protocol.Position
	doc        *openDoc
}

// at validates file and the place against the file on disk (before any
// server starts, so bad input fails fast), then syncs the file to its
// server and converts the column to the server's position encoding. The
// caller must call r.srv.release() when done.
func (fl *fleet) at(ctx context.Context, file pathguard.Path, p protocol.Place) (*request, error) {
	path, err := fl.checkFile(file)
	if err != nil {
		return nil, err
	}
	rel := fl.co.Rel(path)
	text, _, err := checkout.ReadText(fl.co.Guard(), path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", checkout.ErrBadFile, err)
	}
	if _, _, _, err := protocol.FindSymbol(protocol.NewDocument(text), rel, p); err != nil {
		return nil, err
	}
	srv, doc, err := fl.syncSettled(ctx, path)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			srv.release()
		}
	}()
	// The synced text is what the server sees; locate the symbol there.
	d := protocol.NewDocument(doc.text)
	line0, col, part, err := protocol.FindSymbol(d, rel, p)
	if err != nil {
		return nil, err
	}
	ok = true
	return &request{
		srv: srv, path: path, rel: rel, line: p.Line, symbol: p.Symbol, occurrence: p.Occurrence, part: part, byteAt: col, doc: doc,
		pos: protocol.Position{Line: line0, Character: protocol.EncodedColumn(d.Line(line0), col, srv.encoding)},
	}, nil
}

// sync finds or starts the server for path, re-syncs the files it has open
// that changed on disk, and syncs path itself, reporting whether its text
// changed. The caller must call srv.release() when done.
func (fl *fleet) sync(ctx context.Context, path string) (*server, *openDoc, bool, error) {
	fl.co.NoteDir(path)
	c, err := fl.la.choose(path)
	if err != nil {
		return nil, nil, false, err
	}
	srv, err := fl.serverFor(ctx, c)
	if err != nil {
		return nil, nil, false, err
	}
	if err := srv.docs.resyncOpen(ctx); err != nil {
		srv.release()
		return nil, nil, false, err
	}
	doc, changed, err := srv.docs.syncFile(ctx, path, c.languageID)
	if err != nil {
		srv.release()
		return nil, nil, false, err
	}
	return srv, doc, changed, nil
}

// syncSettled is sync, then settle: the server has loaded path and its
// project, and ended the indexing that follows, before a query about it.
// The caller must call srv.release() when done.
func (fl *fleet) syncSettled(ctx context.Context, path string) (*server, *openDoc, error) {
	srv, doc, changed, err := fl.sync(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	srv.settle(ctx, doc, changed)
	return srv, doc, nil
}

// settledFile checks a file argument and is syncSettled on it, for a
// request about a whole file. The caller must call srv.release() when
// done.
func (fl *fleet) settledFile(ctx context.Context, file pathguard.Path) (srv *server, path string, doc *openDoc, err error) {
	if path, err = fl.checkFile(file); err != nil {
		return nil, "", nil, err
	}
	if srv, doc, err = fl.syncSettled(ctx, path); err != nil {
		return nil, "", nil, err
	}
	return srv, path, doc, nil
}

// shownOccurrence is the occurrence a result names: only one past the
// first, which is what a symbol means without it.
func (r *request) shownOccurrence() int {
	if r.occurrence > 1 {
		return r.occurrence
	}
	return 0
}

func (r *request) params() protocol.TextDocumentPositionParams {
	return protocol.TextDocumentPositionParams{TextDocument: protocol.TextDocumentIdentifier{URI: r.doc.uri}, Position: r.pos}
}

func (r *request) where() string {
	if r.occurrence > 1 {
		return fmt.Sprintf("%q (occurrence %d) at %s:%d", r.symbol, r.occurrence, r.rel, r.line)
	}
	return fmt.Sprintf("%q at %s:%d", r.symbol, r.rel, r.line)
}

// Definition returns where the symbol at line/symbol of file is declared.
func (s *Supervisor) Definition(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.Locations, error) {
	return s.locations(ctx, "textDocument/definition", answer.OpDefinition, file, p)
}

// TypeDefinition returns where the type of the symbol is declared.
func (s *Supervisor) TypeDefinition(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.Locations, error) {
	return s.locations(ctx, "textDocument/typeDefinition", answer.OpTypeDefinition, file, p)
}

// Implementation returns the concrete implementations of an interface or
// abstract method (or the interfaces a type implements, per server).
func (s *Supervisor) Implementation(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.Locations, error) {
	return s.locations(ctx, "textDocument/implementation", answer.OpImplementation, file, p)
}

// References returns every use of the symbol, declaration included, at most
// MaxReferences of them with the total.
func (s *Supervisor) References(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.Locations, error) {
	return s.locations(ctx, "textDocument/references", answer.OpReferences, file, p)
}

// locations serves the definition-like requests and references.
func (s *Supervisor) locations(ctx context.Context, method, op string, file pathguard.Path, p protocol.Place) (*answer.Locations, error) {
	r, err := s.fleet.at(ctx, file, p)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	var params any = r.params()
	limit := answer.MaxLocations
	if op == answer.OpReferences {
		p := protocol.ReferenceParams{TextDocumentPositionParams: r.params()}
		p.Context.IncludeDeclaration = true
		params, limit = p, answer.MaxReferences
	}
	var raw json.RawMessage
	if err := r.srv.call(ctx, method, params, &raw); err != nil {
		return nil, err
	}
	locs := protocol.DecodeLocations(raw)
	protocol.SortLocations(locs)
	res := &answer.Locations{Operation: op, Symbol: r.symbol, Occurrence: r.shownOccurrence(), File: r.rel, Line: r.line, Server: r.srv.spec.ID,
		Locations: make([]answer.Location, 0, min(len(locs), limit)), Total: len(locs), Loading: r.srv.stillLoading()}
	q := newQuoter(s.co, r.srv)
	for _, l := range locs[:min(len(locs), limit)] {
		res.Locations = append(res.Locations, q.location(l))
	}
	return res, nil
}

// quoter turns server locations into Locations with the source line
// quoted, reading each file once (the server's open copy when there is one).
type quoter struct {
	co    *checkout.Checkout
	srv   *server
	cache map[string]*protocol.Document
}

func newQuoter(co *checkout.Checkout, srv *server) *quoter {
	return &quoter{co: co, srv: srv, cache: map[string]*protocol.Document{}}
}

func (q *quoter) document(path string) *protocol.Document {
	if d, ok := q.cache[path]; ok {
		return d
	}
	var d *protocol.Document
	if od := q.srv.docs.doc(path); od != nil {
		d = protocol.NewDocument(od.text)
	} else if text, _, err := checkout.ReadText(q.co.Guard(), path); err == nil {
		d = protocol.NewDocument(text)
	}
	q.cache[path] = d
	return d
}

func (q *quoter) location(l protocol.Location) answer.Location {
	out := answer.Location{Line: l.Range.Start.Line + 1, EndLine: l.Range.End.Line + 1}
	path, ok := protocol.URIPath(l.URI)
	if !ok {
		out.Path = l.URI
		return out
	}
	path = q.co.Canonical(path)
	out.Path = q.co.Rel(path)
	if _, err := q.co.Confine(path); err != nil {
		// Shown, never read: a file outside the root (a dependency, the
		// standard library, or a link out of the checkout) is not quoted.
		out.Column, out.Outside = l.Range.Start.Character+1, true
		return out
	}
	d := q.document(path)
	if d == nil {
		return out
	}
	line := d.Line(l.Range.Start.Line)
	out.Column = utf8.RuneCountInString(line[:protocol.ByteColumn(line, l.Range.Start.Character, q.srv.encoding)]) + 1
	out.Text = clip(strings.TrimSpace(line), 200)
	return out
}

// Hover returns the server's signature and documentation for the symbol;
// Contents is "" when it has none.
func (s *Supervisor) Hover(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.Hover, error) {
	r, err := s.fleet.at(ctx, file, p)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	var res *protocol.HoverResult
	if err := r.srv.call(ctx, "textDocument/hover", r.params(), &res); err != nil {
		return nil, err
	}
	h := &answer.Hover{Symbol: r.symbol, Occurrence: r.shownOccurrence(), File: r.rel, Line: r.line, Server: r.srv.spec.ID}
	if res != nil {
		h.Contents = s.co.RelText(strings.TrimSpace(protocol.HoverText(res.Contents)))
	}
	if h.Contents != "" {
		if why := hoverOutside(ctx, s.co, r); why != "" {
			h.Contents, h.Withheld = "", why
			return h, nil
		}
	}
	if len(h.Contents) > answer.MaxHoverBytes {
		h.Contents, h.Truncated = clip(h.Contents, answer.MaxHoverBytes), true
	}
	return h, nil
}

// hoverOutside says why a hover's text is withheld, or "": hover text
// quotes the declaration (a constant's value, a doc comment), so when the
// symbol is declared in a file outside the root — a module a go.mod
// replace names, a relative import out of the checkout, a link — it is not
// quoted, as a definition there is not (N4). The server is asked where the
// symbol is defined; a definition it cannot give is no reason to withhold.
func hoverOutside(ctx context.Context, co *checkout.Checkout, r *request) string {
	var raw json.RawMessage
	if err := r.srv.call(ctx, "textDocument/definition", r.params(), &raw); err != nil {
		return fmt.Sprintf("its text is not quoted, because where %s is defined could not be checked (%v)", r.symbol, err)
	}
	locs := protocol.DecodeLocations(raw)
	protocol.SortLocations(locs)
	for _, l := range locs {
		if where, outside := co.Outside(l.URI); outside && !checkout.InLibrary(l.URI) {
			return fmt.Sprintf("%s is defined outside the root (%s:%d), so its text is not quoted", r.symbol, where, l.Range.Start.Line+1)
		}
	}
	return ""
}

// Symbols searches the workspace for query (at most MaxWorkspaceSymbols),
// or, when file is given, outlines that file's symbols (at most
// MaxDocumentSymbols; query, if also given, filters the outline by name).
func (s *Supervisor) Symbols(ctx context.Context, query string, file pathguard.Path) (*answer.Symbols, error) {
	if !file.IsZero() {
		return s.documentSymbols(ctx, query, file)
	}
	if strings.TrimSpace(query) == "" {
		return nil, fmt.Errorf("%w: symbols needs a query (workspace search) or a file (its outline)", ErrBadArgument)
	}
	return s.workspaceSymbols(ctx, query)
}

func (s *Supervisor) documentSymbols(ctx context.Context, query string, file pathguard.Path) (*answer.Symbols, error) {
	srv, path, doc, err := s.fleet.settledFile(ctx, file)
	if err != nil {
		return nil, err
	}
	defer srv.release()
	var entries []protocol.SymbolEntry
	if err := srv.call(ctx, "textDocument/documentSymbol", protocol.DocumentSymbolParams{TextDocument: protocol.TextDocumentIdentifier{URI: doc.uri}}, &entries); err != nil {
		return nil, err
	}
	res := &answer.Symbols{Query: query, File: s.co.Rel(path), Server: srv.spec.ID, Symbols: []answer.Symbol{}}
	var walk func(es []protocol.SymbolEntry, depth int)
	walk = func(es []protocol.SymbolEntry, depth int) {
		for i := range es {
			e := &es[i]
			line := 0
			if e.Range != nil {
				line = e.Range.Start.Line + 1
			} else if locs := protocol.DecodeLocations(e.Location); len(locs) > 0 {
				line = locs[0].Range.Start.Line + 1
			}
			if query == "" || strings.Contains(strings.ToLower(e.Name), strings.ToLower(query)) {
				if res.Total++; res.Total <= answer.MaxDocumentSymbols {
					res.Symbols = append(res.Symbols, answer.Symbol{Name: e.Name, Kind: protocol.SymbolKindName(e.Kind), Detail: e.Detail, Depth: depth,
						Location: answer.Location{Path: res.File, Line: line}})
				}
			}
			walk(e.Children, depth+1)
		}
	}
	walk(entries, 0)
	return res, nil
}

// workspaceSymbols asks every running server, or, when none runs, every
// server whose marker and binary are present in the checkout.
func (s *Supervisor) workspaceSymbols(ctx context.Context, query string) (*answer.Symbols, error) {
	srvs := s.fleet.running()
	if len(srvs) == 0 {
		markers := s.co.ScanMarkers(ctx, s.cfg.Servers)
		var reasons []string
		for i := range s.cfg.Servers {
			spec := &s.cfg.Servers[i]
			for _, dir := range markers[spec.ID] {
				root := filepath.Join(s.co.Root(), filepath.FromSlash(dir))
				bin, err := s.tools.program(spec.Command[0], spec.LocalBinDirs, root)
				if err != nil {
					reasons = append(reasons, fmt.Sprintf("%s (%s) is not installed: %s", spec.ID, dir, spec.Install))
					continue
				}
				if err := s.tools.probe(spec, bin, root); err != nil {
					reasons = append(reasons, fmt.Sprintf("%s (%s) is installed (%s) but does not run: %v; install it: %s", spec.ID, dir, bin, err, spec.Install))
					continue
				}
				if srv, err := s.fleet.serverFor(ctx, &choice{spec: spec, root: root, bin: bin}); err == nil {
					srv.release() // only a call below keeps it busy
					srvs = append(srvs, srv)
				} else {
					reasons = append(reasons, err.Error())
				}
			}
		}
		if len(srvs) == 0 {
			if len(reasons) == 0 {
				reasons = append(reasons, "no root marker of a known language is in the checkout")
			}
			return nil, &UnavailableError{File: ".", Reasons: reasons}
		}
	}
	res := &answer.Symbols{Query: query, Symbols: []answer.Symbol{}}
	quoters := map[*server]*quoter{}
	for _, srv := range srvs {
		if srv.spec.Indexes || srv.spec.LoadedLog != nil {
			wctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
			srv.waitIndexed(wctx)
			cancel()
		}
		if note := srv.stillLoading(); note != "" {
			res.Loading = strings.TrimPrefix(res.Loading+"; "+note, "; ")
		}
		var entries []protocol.SymbolEntry
		// Not while a preview's text is in the server.
		if err := srv.view.Share(ctx, s.cfg.viewBound()); err != nil {
			res.Failures = append(res.Failures, srv.busyError("workspace/symbol", false).Error())
			continue
		}
		err := srv.call(ctx, "workspace/symbol", protocol.WorkspaceSymbolParams{Query: query}, &entries)
		srv.view.Unshare()
		if err != nil {
			res.Failures = append(res.Failures, err.Error())
			continue
		}
		for _, e := range entries {
			locs := protocol.DecodeLocations(e.Location)
			if len(locs) == 0 {
				continue
			}
			if res.Total++; res.Total > answer.MaxWorkspaceSymbols {
				continue
			}
			q := quoters[srv]
			if q == nil {
				q = newQuoter(s.co, srv)
				quoters[srv] = q
			}
			res.Symbols = append(res.Symbols, answer.Symbol{Name: e.Name, Kind: protocol.SymbolKindName(e.Kind), Container: e.ContainerName,
				Location: q.location(locs[0])})
		}
	}
	if res.Total == 0 && len(res.Failures) > 0 {
		return nil, fmt.Errorf("workspace symbol search failed: %s", strings.Join(res.Failures, "; "))
	}
	return res, nil
}

// CodeActions lists the fixes and refactorings the server offers at the
// symbol (quick fixes for the diagnostics on that line included). It
// applies nothing; each enabled action gets an id that ApplyAction takes
// for the rest of the run.
func (s *Supervisor) CodeActions(ctx context.Context, file pathguard.Path, p protocol.Place) (*answer.CodeActions, error) {
	r, err := s.fleet.at(ctx, file, p)
	if err != nil {
		return nil, err
	}
	defer r.srv.release()
	// Quick fixes hang off the line's diagnostics: have the current ones.
	items, derr := r.srv.diagnosticsFor(ctx, r.doc)
	if derr != nil {
		items = r.srv.docs.storedDiagnostics(r.doc.uri)
	}
	var onLine []protocol.Diagnostic
	for _, d := range items {
		if d.Range.Start.Line <= r.pos.Line && r.pos.Line <= d.Range.End.Line {
			onLine = append(onLine, d)
		}
	}
	d := protocol.NewDocument(r.doc.text)
	end := protocol.EncodedColumn(d.Line(r.pos.Line), r.byteAt+len(r.part), r.srv.encoding)
	params := protocol.CodeActionParams{
		TextDocument: protocol.TextDocumentIdentifier{URI: r.doc.uri},
		Range:        protocol.Range{Start: r.pos, End: protocol.Position{Line: r.pos.Line, Character: end}},
	}
	params.Context.Diagnostics = onLine
	if params.Context.Diagnostics == nil {
		params.Context.Diagnostics = []protocol.Diagnostic{}
	}
	var actions []protocol.CodeActionOrCommand
	if err := r.srv.call(ctx, "textDocument/codeAction", params, &actions); err != nil {
		return nil, err
	}
	res := &answer.CodeActions{Symbol: r.symbol, Occurrence: r.shownOccurrence(), File: r.rel, Line: r.line, Server: r.srv.spec.ID, Actions: make([]answer.CodeAction, 0, len(actions))}
	for _, a := range actions {
		ca := answer.CodeAction{Title: s.co.RelText(a.Title), Kind: a.Kind, Preferred: a.IsPreferred, Disabled: a.Disabled != nil}
		if a.Disabled != nil {
			ca.DisabledReason = s.co.RelText(a.Disabled.Reason)
		} else {
			// Enabled actions stay addressable for lsp_fix, with the text
			// they were computed from.
			ca.ID = s.actions.add(&heldAction{path: r.path, rel: r.rel, text: r.doc.text, place: p, srv: r.srv, action: a})
		}
		if a.Edit != nil {
			ca.Files = editFiles(s, a.Edit)
			if out := outsideFiles(s.co, a.Edit); len(out) > 0 {
				// Its title may quote the outside file (an import path, a
				// name declared there): not shown, as that file is not.
				ca.Title = ""
				ca.Withheld = fmt.Sprintf("its edit changes %s, outside the root, so its title is not quoted", strings.Join(out, ", "))
			}
		} else {
			ca.RunsCommand = len(a.Command) > 0 && string(a.Command) != "null"
		}
		res.Actions = append(res.Actions, ca)
	}
	return res, nil
}

// outsideFiles lists the files of a WorkspaceEdit outside the root.
func outsideFiles(co *checkout.Checkout, we *protocol.WorkspaceEdit) []string {
	var out []string
	for _, uri := range protocol.EditURIs(we) {
		if where, outside := co.Outside(uri); outside && !slices.Contains(out, where) {
			out = append(out, where)
		}
	}
	slices.Sort(out)
	return out
}

// editFiles lists the files a WorkspaceEdit touches, relative to the root.
func editFiles(s *Supervisor, we *protocol.WorkspaceEdit) []string {
	seen := map[string]bool{}
	var out []string
	for _, uri := range protocol.EditURIs(we) {
		if p, ok := protocol.URIPath(uri); ok {
			rel := s.co.Rel(s.co.Canonical(p))
			if !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
			}
		}
	}
	slices.Sort(out)
	return out
}
