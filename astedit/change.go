package astedit

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/aymanbagabas/go-udiff"
	"github.com/builtin-tools/builtin-tools/internal/staged"
	"github.com/builtin-tools/builtin-tools/internal/textcut"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// StageChange stages an edit worked out elsewhere — a language server's
// rename — as a proposal like Stage's: the same ids, limits, summary, and
// the same staleness check and all-or-nothing write on accept. Every file
// must be inside g's root and hold, now, the bytes c was computed from.
func (s *Stager) StageChange(g *pathguard.Guard, c staged.Change) (staged.Staged, error) {
	if g == nil {
		return staged.Staged{}, fmt.Errorf("%w: staging needs the run's path guard", pathguard.ErrNoPath)
	}
	if len(c.Files) == 0 {
		return staged.Staged{}, errors.New("nothing to stage: the edit changes no file")
	}
	p := &Proposal{Title: c.Title, Redo: c.Redo, guard: g}
	for _, f := range c.Files {
		real, err := g.Resolve(f.Path)
		if err != nil {
			return staged.Staged{}, fmt.Errorf("nothing was staged: %s: %w", f.File, err)
		}
		cur, info, err := g.ReadFile(real, 0)
		if err != nil {
			return staged.Staged{}, fmt.Errorf("nothing was staged: %s: %w", f.File, err)
		}
		if string(cur) != string(f.Before) {
			return staged.Staged{}, &StaleError{ID: "the edit", Files: []string{f.File}, Redo: c.Redo}
		}
		if len(f.After) > MaxResultBytes {
			return staged.Staged{}, &staged.TooLargeError{File: f.File, Size: len(f.After), Limit: MaxResultBytes}
		}
		fc := FileChange{File: filepath.ToSlash(f.File), Path: real, Replacements: f.Edits, Lines: f.Lines,
			before: f.Before, after: f.After}
		fc.dev, fc.ino = fileID(info)
		fc.Diff = udiff.Unified("a/"+fc.File, "b/"+fc.File, string(f.Before), string(f.After))
		p.Files = append(p.Files, fc)
		p.Diff += fc.Diff
		p.Edits += f.Edits
	}
	if err := s.hold(p, textcut.Count(len(p.Files), "file", "files"), ""); err != nil {
		return staged.Staged{}, err
	}
	return staged.Staged{ID: p.ID, Diff: p.Diff, Evicted: p.Evicted}, nil
}

// count is how many edits p makes: its replacements, or the text edits of
// a change staged by StageChange.
func (p *Proposal) count() int {
	if p.Title != "" {
		return p.Edits
	}
	return len(p.Replacements)
}

// Contents is each file of p with its text before and after, as a
// staged.File: what a diagnostics preview gives the language servers.
func (p *Proposal) Contents() []staged.File {
	out := make([]staged.File, 0, len(p.Files))
	for _, f := range p.Files {
		out = append(out, staged.File{File: f.File, Path: f.Path, Before: f.before, After: f.after, Edits: f.Replacements, Lines: f.Lines})
	}
	return out
}
