package lsptool

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp/answertext"

	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/pathguard"
	"github.com/builtin-tools/builtin-tools/registry"
)

// A staged change's diagnostics preview (PRE-1): the proposed contents go
// to the servers as unsaved versions (lsp.Supervisor.Preview), and the
// preview is kept with the edit's id so that resolve can say whether what
// it wrote matched it (PRE-2).

// maxKeptPreviews bounds the previews kept for resolve; the stager keeps
// at most 16 edits pending, so older ones are of edits already gone.
const maxKeptPreviews = 32

// kept is a preview held for resolve: the verdicts and what each file's
// proposed contents hashed to.
type kept struct {
	preview *lsp.Preview
	sums    map[string][sha256.Size]byte // by file, relative to the root
}

// PreviewFiles runs files' after texts past their servers. Files with
// nothing changed are left out. It fails only when ctx ends or a path is
// refused; a server's failure is its files' verdict.
func (s *Servers) PreviewFiles(ctx context.Context, c *registry.Call, files []staged.File) (*lsp.Preview, error) {
	var proposed []lsp.Proposed
	for _, f := range files {
		at, err := c.Location(f.Path)
		if err != nil {
			return nil, err
		}
		proposed = append(proposed, lsp.Proposed{File: at, Text: f.After})
	}
	p, err := s.Sup.Preview(ctx, proposed, s.users(ctx, files)...)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// users names the files, other than files, that use the definitions
// files' proposed contents remove, rename or give another signature (the
// code graph's dependents, when the run has it), at most
// lsp.MaxOtherFiles.
func (s *Servers) users(ctx context.Context, files []staged.File) []pathguard.Path {
	if s.run == nil {
		return nil
	}
	deps, ok := dependents.Of(s.run)
	if !ok {
		return nil
	}
	g := s.Sup.Guard()
	changing := map[string]bool{}
	for _, f := range files {
		changing[g.Rel(f.Path)] = true
	}
	var out []pathguard.Path
	for _, f := range files {
		before := f.Before
		if before == nil {
			b, _, err := g.ReadFile(f.Path, registry.MaxBefore)
			if err != nil {
				continue // a new file: nobody uses it yet
			}
			before = b
		}
		_, used, _, err := deps.Dependents(ctx, g.Rel(f.Path), before, f.After, lsp.MaxOtherFiles+len(files))
		if err != nil {
			continue
		}
		for _, u := range used {
			if changing[u] || len(out) == lsp.MaxOtherFiles {
				continue
			}
			if at, err := g.Path(u); err == nil {
				out = append(out, at)
			}
		}
	}
	return out
}

// CheckFiles is PreviewFiles for a tool of another family, which finds
// the Servers as an lsp.Checker: the paths through the supervisor's guard,
// and the preview's text.
func (s *Servers) CheckFiles(ctx context.Context, files []staged.File) (*lsp.Preview, string, error) {
	var proposed []lsp.Proposed
	for _, f := range files {
		at, err := s.Sup.Guard().Path(f.Path)
		if err != nil {
			return nil, "", err
		}
		proposed = append(proposed, lsp.Proposed{File: at, Text: f.After})
	}
	p, err := s.Sup.Preview(ctx, proposed, s.users(ctx, files)...)
	if err != nil {
		return nil, "", err
	}
	return p, answertext.FormatPreview(p), nil
}

// Keep holds p, the preview of the change staged as id, for resolve.
func (s *Servers) Keep(id string, p *lsp.Preview, files []staged.File) {
	k := kept{preview: p, sums: map[string][sha256.Size]byte{}}
	for _, f := range files {
		k.sums[f.File] = sha256.Sum256(f.After)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.previews == nil {
		s.previews = map[string]kept{}
	}
	s.previews[id] = k
	s.keptOrder = append(s.keptOrder, id)
	for len(s.keptOrder) > maxKeptPreviews {
		delete(s.previews, s.keptOrder[0])
		s.keptOrder = s.keptOrder[1:]
	}
}

// Kept returns the preview kept for id.
func (s *Servers) Kept(id string) (*lsp.Preview, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k, ok := s.previews[id]
	return k.preview, ok
}

// PreviewMatch says whether an accepted change matched its preview.
type PreviewMatch struct {
	Matched     bool     `json:"matched" jsonschema:"every file the preview checked was written with the previewed contents and has the errors and warnings the preview found"`
	Compared    int      `json:"compared" jsonschema:"files compared: those the preview checked"`
	Differences []string `json:"differences" jsonschema:"what differs, one line per file"`
}

// Text is the line resolve's result adds.
func (m *PreviewMatch) Text() string {
	if m.Matched {
		return fmt.Sprintf("matches its diagnostics preview (%s: same contents, same errors and warnings)", textcut.Count(m.Compared, "file", "files"))
	}
	if m.Compared == 0 {
		return "not compared with its diagnostics preview: " + strings.Join(m.Differences, "; ")
	}
	return "differs from its diagnostics preview: " + strings.Join(m.Differences, "; ")
}

// Compare checks the files of the accepted change id, now written,
// against its kept preview: their bytes, then the diagnostics of the
// written versions. Nil when no preview was kept for id. The kept preview
// is dropped.
func (s *Servers) Compare(ctx context.Context, c *registry.Call, id string) *PreviewMatch {
	s.mu.Lock()
	k, ok := s.previews[id]
	delete(s.previews, id)
	s.mu.Unlock()
	if !ok {
		return nil
	}
	m := &PreviewMatch{Differences: []string{}}
	for _, v := range k.preview.Files {
		if v.State != diag.Checked {
			continue
		}
		at, err := c.Location(v.File)
		if err != nil {
			m.Differences = append(m.Differences, v.File+": "+err.Error())
			continue
		}
		data, _, err := c.Run.Guard().ReadFile(at.Abs(), 0)
		if err != nil || sha256.Sum256(data) != k.sums[v.File] {
			m.Differences = append(m.Differences, v.File+": the written contents are not the previewed ones")
			continue
		}
		m.Compared++
		d, err := s.Sup.Diagnostics(ctx, at)
		switch {
		case err != nil:
			m.Differences = append(m.Differences, v.File+": its diagnostics could not be had: "+s.Sup.RelText(err.Error()))
		case d.Incomplete:
			m.Differences = append(m.Differences, fmt.Sprintf("%s: its diagnostics did not arrive within %d ms", v.File, d.WaitMS))
		case !k.preview.Matches(v.File, d.Diagnostics):
			m.Differences = append(m.Differences, v.File+": its errors and warnings are not those the preview found")
		}
	}
	if m.Compared == 0 && len(m.Differences) == 0 {
		m.Differences = append(m.Differences, "the preview checked none of its files")
	}
	m.Matched = m.Compared > 0 && len(m.Differences) == 0
	return m
}
