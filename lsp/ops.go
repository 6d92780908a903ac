package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Result caps (LSP-4).
const (
	maxReferences       = 50
	maxLocations        = 50
	maxWorkspaceSymbols = 100
	maxDocumentSymbols  = 200
	maxHoverBytes       = 4000
)

// request is a validated position: the file, its server, and the place
// line + symbol names, in the server's encoding.
type request struct {
	srv    *server
	path   string
	rel    string
	line   int // 1-based
	symbol string
	byteAt int // byte column of symbol on the line
	pos    position
	doc    *openDoc
}

// at validates file, line and symbol against the file on disk (before any
// server starts, so bad input fails fast), then syncs the file to its
// server and converts the column to the server's position encoding. The
// caller must call r.srv.release() when done.
func (s *Supervisor) at(ctx context.Context, file string, line int, symbol string) (*request, error) {
	path, err := s.checkFile(file)
	if err != nil {
		return nil, err
	}
	rel := s.rel(path)
	text, _, err := readText(s.guard, path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadFile, err)
	}
	if _, _, err := findSymbol(newDocument(text), rel, line, symbol); err != nil {
		return nil, err
	}
	srv, doc, changed, err := s.sync(ctx, path)
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			srv.release()
		}
	}()
	srv.settle(ctx, doc, changed)
	// The synced text is what the server sees; locate the symbol there.
	d := newDocument(doc.text)
	line0, col, err := findSymbol(d, rel, line, symbol)
	if err != nil {
		return nil, err
	}
	ok = true
	return &request{
		srv: srv, path: path, rel: rel, line: line, symbol: symbol, byteAt: col, doc: doc,
		pos: position{Line: line0, Character: encodedColumn(d.line(line0), col, srv.encoding)},
	}, nil
}

// sync finds or starts the server for path, re-syncs the files it has open
// that changed on disk, and syncs path itself, reporting whether its text
// changed. The caller must call srv.release() when done.
func (s *Supervisor) sync(ctx context.Context, path string) (*server, *openDoc, bool, error) {
	c, err := s.choose(path)
	if err != nil {
		return nil, nil, false, err
	}
	srv, err := s.serverFor(ctx, c)
	if err != nil {
		return nil, nil, false, err
	}
	if err := srv.resyncOpen(ctx); err != nil {
		srv.release()
		return nil, nil, false, err
	}
	doc, changed, err := srv.syncFile(ctx, path, c.languageID)
	if err != nil {
		srv.release()
		return nil, nil, false, err
	}
	return srv, doc, changed, nil
}

func (r *request) params() textDocumentPositionParams {
	return textDocumentPositionParams{TextDocument: textDocumentIdentifier{URI: r.doc.uri}, Position: r.pos}
}

func (r *request) where() string {
	return fmt.Sprintf("%q at %s:%d", r.symbol, r.rel, r.line)
}

// Definition returns where the symbol at line/symbol of file is declared.
func (s *Supervisor) Definition(ctx context.Context, file string, line int, symbol string) (string, error) {
	return s.locations(ctx, "textDocument/definition", "definition", file, line, symbol)
}

// TypeDefinition returns where the type of the symbol is declared.
func (s *Supervisor) TypeDefinition(ctx context.Context, file string, line int, symbol string) (string, error) {
	return s.locations(ctx, "textDocument/typeDefinition", "type definition", file, line, symbol)
}

// Implementation returns the concrete implementations of an interface or
// abstract method (or the interfaces a type implements, per server).
func (s *Supervisor) Implementation(ctx context.Context, file string, line int, symbol string) (string, error) {
	return s.locations(ctx, "textDocument/implementation", "implementation", file, line, symbol)
}

// References returns every use of the symbol, declaration included, at most
// 50 shown with a count of the rest.
func (s *Supervisor) References(ctx context.Context, file string, line int, symbol string) (string, error) {
	r, err := s.at(ctx, file, line, symbol)
	if err != nil {
		return "", err
	}
	defer r.srv.release()
	p := referenceParams{textDocumentPositionParams: r.params()}
	p.Context.IncludeDeclaration = true
	var raw json.RawMessage
	if err := r.srv.call(ctx, "textDocument/references", p, &raw); err != nil {
		return "", err
	}
	locs := decodeLocations(raw)
	if len(locs) == 0 {
		return fmt.Sprintf("no references found for %s (%s)", r.where(), r.srv.spec.ID), nil
	}
	q := s.newQuoter(r.srv)
	sortLocations(locs)
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s to %s:\n", len(locs), plural(len(locs), "reference"), r.where())
	for i, l := range locs {
		if i == maxReferences {
			fmt.Fprintf(&b, "... and %d more (%d shown of %d)\n", len(locs)-i, maxReferences, len(locs))
			break
		}
		b.WriteString(q.format(l))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// locations serves the definition-like requests.
func (s *Supervisor) locations(ctx context.Context, method, what, file string, line int, symbol string) (string, error) {
	r, err := s.at(ctx, file, line, symbol)
	if err != nil {
		return "", err
	}
	defer r.srv.release()
	var raw json.RawMessage
	if err := r.srv.call(ctx, method, r.params(), &raw); err != nil {
		return "", err
	}
	locs := decodeLocations(raw)
	if len(locs) == 0 {
		return fmt.Sprintf("no %s found for %s (%s)", what, r.where(), r.srv.spec.ID), nil
	}
	q := s.newQuoter(r.srv)
	var b strings.Builder
	if len(locs) > 1 {
		fmt.Fprintf(&b, "%d %ss of %s:\n", len(locs), what, r.where())
		sortLocations(locs)
	}
	for i, l := range locs {
		if i == maxLocations {
			fmt.Fprintf(&b, "... and %d more\n", len(locs)-i)
			break
		}
		b.WriteString(q.format(l))
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// decodeLocations reads Location, Location[], LocationLink[] or null.
func decodeLocations(raw json.RawMessage) []location {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] == 'n' {
		return nil
	}
	var items []json.RawMessage
	if raw[0] == '[' {
		if json.Unmarshal(raw, &items) != nil {
			return nil
		}
	} else {
		items = []json.RawMessage{raw}
	}
	out := make([]location, 0, len(items))
	for _, it := range items {
		var link locationLink
		if json.Unmarshal(it, &link) == nil && link.TargetURI != "" {
			out = append(out, location{URI: link.TargetURI, Range: link.TargetSelectionRange})
			continue
		}
		var l location
		if json.Unmarshal(it, &l) == nil && l.URI != "" {
			out = append(out, l)
		}
	}
	return out
}

func sortLocations(locs []location) {
	sort.SliceStable(locs, func(i, j int) bool {
		a, b := locs[i], locs[j]
		if a.URI != b.URI {
			return a.URI < b.URI
		}
		if a.Range.Start.Line != b.Range.Start.Line {
			return a.Range.Start.Line < b.Range.Start.Line
		}
		return a.Range.Start.Character < b.Range.Start.Character
	})
}

// quoter renders locations as "path:line:col: source line", reading each
// file once (the server's open copy when there is one).
type quoter struct {
	s     *Supervisor
	srv   *server
	cache map[string]*document
}

func (s *Supervisor) newQuoter(srv *server) *quoter {
	return &quoter{s: s, srv: srv, cache: map[string]*document{}}
}

func (q *quoter) document(path string) *document {
	if d, ok := q.cache[path]; ok {
		return d
	}
	var d *document
	q.srv.mu.Lock()
	od := q.srv.docs[path]
	q.srv.mu.Unlock()
	if od != nil {
		d = newDocument(od.text)
	} else if text, _, err := readText(q.s.guard, path); err == nil {
		d = newDocument(text)
	}
	q.cache[path] = d
	return d
}

func (q *quoter) format(l location) string {
	path, ok := uriPath(l.URI)
	if !ok {
		return fmt.Sprintf("%s:%d", l.URI, l.Range.Start.Line+1)
	}
	path = q.s.canonical(path)
	rel := q.s.rel(path)
	if _, err := q.s.confine(path); err != nil {
		// Shown, never read: a file outside the root (a dependency, the
		// standard library, or a link out of the checkout) is not quoted.
		return fmt.Sprintf("%s:%d:%d (outside the root, not quoted)", rel, l.Range.Start.Line+1, l.Range.Start.Character+1)
	}
	d := q.document(path)
	if d == nil {
		return fmt.Sprintf("%s:%d", rel, l.Range.Start.Line+1)
	}
	line := d.line(l.Range.Start.Line)
	col := utf8.RuneCountInString(line[:byteColumn(line, l.Range.Start.Character, q.srv.encoding)]) + 1
	return fmt.Sprintf("%s:%d:%d: %s", rel, l.Range.Start.Line+1, col, clip(strings.TrimSpace(line), 200))
}

// Hover returns the server's signature and documentation for the symbol.
func (s *Supervisor) Hover(ctx context.Context, file string, line int, symbol string) (string, error) {
	r, err := s.at(ctx, file, line, symbol)
	if err != nil {
		return "", err
	}
	defer r.srv.release()
	var res *hoverResult
	if err := r.srv.call(ctx, "textDocument/hover", r.params(), &res); err != nil {
		return "", err
	}
	text := ""
	if res != nil {
		text = strings.TrimSpace(hoverText(res.Contents))
	}
	if text == "" {
		return fmt.Sprintf("no hover information for %s (%s)", r.where(), r.srv.spec.ID), nil
	}
	if len(text) > maxHoverBytes {
		text = clip(text, maxHoverBytes) + "\n(cut at 4000 bytes)"
	}
	return text, nil
}

// hoverText flattens MarkupContent, MarkedString and MarkedString[].
func hoverText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return ""
	}
	switch raw[0] {
	case '"':
		var s string
		_ = json.Unmarshal(raw, &s)
		return s
	case '[':
		var parts []json.RawMessage
		_ = json.Unmarshal(raw, &parts)
		var out []string
		for _, p := range parts {
			if t := strings.TrimSpace(hoverText(p)); t != "" {
				out = append(out, t)
			}
		}
		return strings.Join(out, "\n\n")
	case '{':
		var m struct {
			Kind     string `json:"kind"`
			Language string `json:"language"`
			Value    string `json:"value"`
		}
		_ = json.Unmarshal(raw, &m)
		if m.Language != "" {
			return "```" + m.Language + "\n" + m.Value + "\n```"
		}
		return m.Value
	}
	return ""
}

// Symbols searches the workspace for query (at most 100), or, when file is
// given, outlines that file's symbols (at most 200; query, if also given,
// filters the outline by name).
func (s *Supervisor) Symbols(ctx context.Context, query, file string) (string, error) {
	if file != "" {
		return s.documentSymbols(ctx, query, file)
	}
	if strings.TrimSpace(query) == "" {
		return "", fmt.Errorf("%w: symbols needs a query (workspace search) or a file (its outline)", ErrBadArgument)
	}
	return s.workspaceSymbols(ctx, query)
}

func (s *Supervisor) documentSymbols(ctx context.Context, query, file string) (string, error) {
	path, err := s.checkFile(file)
	if err != nil {
		return "", err
	}
	srv, doc, changed, err := s.sync(ctx, path)
	if err != nil {
		return "", err
	}
	defer srv.release()
	srv.settle(ctx, doc, changed)
	var entries []symbolEntry
	if err := srv.call(ctx, "textDocument/documentSymbol", documentSymbolParams{TextDocument: textDocumentIdentifier{URI: doc.uri}}, &entries); err != nil {
		return "", err
	}
	rel := s.rel(path)
	type row struct {
		depth int
		e     *symbolEntry
		line  int
	}
	var rows []row
	var walk func(es []symbolEntry, depth int)
	walk = func(es []symbolEntry, depth int) {
		for i := range es {
			e := &es[i]
			line := 0
			if e.Range != nil {
				line = e.Range.Start.Line + 1
			} else if locs := decodeLocations(e.Location); len(locs) > 0 {
				line = locs[0].Range.Start.Line + 1
			}
			if query == "" || strings.Contains(strings.ToLower(e.Name), strings.ToLower(query)) {
				rows = append(rows, row{depth, e, line})
			}
			walk(e.Children, depth+1)
		}
	}
	walk(entries, 0)
	if len(rows) == 0 {
		if query != "" {
			return fmt.Sprintf("no symbol in %s matches %q (%s)", rel, query, srv.spec.ID), nil
		}
		return fmt.Sprintf("%s declares no symbols (%s)", rel, srv.spec.ID), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d %s\n", rel, len(rows), plural(len(rows), "symbol"))
	for i, r := range rows {
		if i == maxDocumentSymbols {
			fmt.Fprintf(&b, "... and %d more symbols\n", len(rows)-i)
			break
		}
		detail := ""
		if d := oneLine(r.e.Detail); d != "" {
			detail = "  " + clip(d, 120)
		}
		fmt.Fprintf(&b, "%s%d: %s %s%s\n", strings.Repeat("  ", r.depth), r.line, symbolKindName(r.e.Kind), r.e.Name, detail)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// workspaceSymbols asks every running server, or, when none runs, every
// server whose marker and binary are present in the checkout.
func (s *Supervisor) workspaceSymbols(ctx context.Context, query string) (string, error) {
	srvs := s.running()
	if len(srvs) == 0 {
		markers := s.scanMarkers(ctx)
		var reasons []string
		for i := range s.cfg.Servers {
			spec := &s.cfg.Servers[i]
			for _, dir := range markers[spec.ID] {
				root := filepath.Join(s.root, filepath.FromSlash(dir))
				bin, err := s.lookBin(spec.Command[0], spec.LocalBinDirs, root)
				if err != nil {
					reasons = append(reasons, fmt.Sprintf("%s (%s) is not installed: %s", spec.ID, dir, spec.Install))
					continue
				}
				if srv, err := s.serverFor(ctx, &choice{spec: spec, root: root, bin: bin}); err == nil {
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
			return "", &UnavailableError{File: ".", Reasons: reasons}
		}
	}
	type hit struct {
		e   symbolEntry
		loc location
		srv *server
	}
	var hits []hit
	var errs []string
	for _, srv := range srvs {
		if srv.spec.Indexes {
			wctx, cancel := context.WithTimeout(ctx, s.cfg.StartTimeout)
			srv.waitIndexed(wctx)
			cancel()
		}
		var entries []symbolEntry
		if err := srv.call(ctx, "workspace/symbol", workspaceSymbolParams{Query: query}, &entries); err != nil {
			errs = append(errs, err.Error())
			continue
		}
		for _, e := range entries {
			locs := decodeLocations(e.Location)
			if len(locs) == 0 {
				continue
			}
			hits = append(hits, hit{e, locs[0], srv})
		}
	}
	if len(hits) == 0 {
		if len(errs) > 0 {
			return "", fmt.Errorf("workspace symbol search failed: %s", strings.Join(errs, "; "))
		}
		return fmt.Sprintf("no symbol matches %q in the workspace", query), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s match %q:\n", len(hits), plural(len(hits), "symbol"), query)
	quoters := map[*server]*quoter{}
	for i, h := range hits {
		if i == maxWorkspaceSymbols {
			fmt.Fprintf(&b, "... and %d more; narrow the query\n", len(hits)-i)
			break
		}
		q := quoters[h.srv]
		if q == nil {
			q = s.newQuoter(h.srv)
			quoters[h.srv] = q
		}
		container := ""
		if h.e.ContainerName != "" {
			container = " in " + h.e.ContainerName
		}
		fmt.Fprintf(&b, "%s %s%s — %s\n", symbolKindName(h.e.Kind), h.e.Name, container, q.format(h.loc))
	}
	for _, e := range errs {
		fmt.Fprintf(&b, "(one server failed: %s)\n", e)
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// CodeActions lists the fixes and refactorings the server offers at the
// symbol (quick fixes for the diagnostics on that line included). It
// applies nothing.
func (s *Supervisor) CodeActions(ctx context.Context, file string, line int, symbol string) (string, error) {
	r, err := s.at(ctx, file, line, symbol)
	if err != nil {
		return "", err
	}
	defer r.srv.release()
	// Quick fixes hang off the line's diagnostics: have the current ones.
	items, derr := r.srv.diagnosticsFor(ctx, r.doc)
	if derr != nil {
		items = r.srv.storedDiagnostics(r.doc.uri)
	}
	var onLine []lspDiagnostic
	for _, d := range items {
		if d.Range.Start.Line <= r.pos.Line && r.pos.Line <= d.Range.End.Line {
			onLine = append(onLine, d)
		}
	}
	d := newDocument(r.doc.text)
	end := encodedColumn(d.line(r.pos.Line), r.byteAt+len(r.symbol), r.srv.encoding)
	p := codeActionParams{
		TextDocument: textDocumentIdentifier{URI: r.doc.uri},
		Range:        lspRange{Start: r.pos, End: position{Line: r.pos.Line, Character: end}},
	}
	p.Context.Diagnostics = onLine
	if p.Context.Diagnostics == nil {
		p.Context.Diagnostics = []lspDiagnostic{}
	}
	var actions []codeActionOrCommand
	if err := r.srv.call(ctx, "textDocument/codeAction", p, &actions); err != nil {
		return "", err
	}
	if len(actions) == 0 {
		return fmt.Sprintf("no code actions offered for %s (%s)", r.where(), r.srv.spec.ID), nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d code %s for %s:\n", len(actions), plural(len(actions), "action"), r.where())
	for i, a := range actions {
		var notes []string
		if a.Kind != "" {
			notes = append(notes, a.Kind)
		}
		if a.IsPreferred {
			notes = append(notes, "preferred")
		}
		if a.Disabled != nil {
			notes = append(notes, "disabled: "+a.Disabled.Reason)
		}
		if a.Edit != nil {
			if files := editFiles(s, a.Edit); len(files) > 0 {
				notes = append(notes, "edits "+strings.Join(files, ", "))
			}
		} else if len(a.Command) > 0 && string(a.Command) != "null" {
			notes = append(notes, "runs a server command")
		}
		fmt.Fprintf(&b, "%d. %s", i+1, oneLine(a.Title))
		if len(notes) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(notes, "; "))
		}
		b.WriteByte('\n')
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// editFiles lists the files a WorkspaceEdit touches, relative to the root.
func editFiles(s *Supervisor, we *workspaceEdit) []string {
	seen := map[string]bool{}
	var out []string
	add := func(uri string) {
		if p, ok := uriPath(uri); ok {
			rel := s.rel(s.canonical(p))
			if !seen[rel] {
				seen[rel] = true
				out = append(out, rel)
			}
		}
	}
	for uri := range we.Changes {
		add(uri)
	}
	for _, raw := range we.DocumentChanges {
		var dc documentChange
		if json.Unmarshal(raw, &dc) == nil {
			switch {
			case dc.TextDocument != nil:
				add(dc.TextDocument.URI)
			case dc.Kind == "rename":
				add(dc.OldURI)
				add(dc.NewURI)
			default:
				add(dc.URI)
			}
		}
	}
	sort.Strings(out)
	return out
}
