package lsp

import (
	"testing"
)

// Issue 19 §2: after lsp_rename, the diagnostics of the files it changed
// timed out (typescript-language-server publishes nothing after a change
// that leaves a file without problems), so the rename's result said they
// could not be checked and cost DiagnosticsWait. Every file a rename
// changed, and a file an edit leaves clean, gets its diagnostics without
// a timeout.
func TestDiagnosticsAfterRenameDoNotTimeOut(t *testing.T) {
	t.Parallel()
	for _, rb := range renameBenches {
		t.Run(rb.name, func(t *testing.T) {
			t.Parallel()
			s := newSession(t, rb.fixture, rb.program, Config{})
			must(s.sup.Hover(s.ctx, s.at(rb.file), Place{Line: rb.line, Symbol: rb.from}))(t) // the file is open
			res := must(s.sup.Rename(s.ctx, s.at(rb.file), Place{Line: rb.line, Symbol: rb.from}, rb.to, false))(t)
			if len(res.Files) < 2 {
				t.Fatalf("the rename changed %d files, want 2", len(res.Files))
			}
			for _, f := range res.Files {
				if _, err := s.sup.AfterWrite(s.ctx, s.at(f.Path)); err != nil {
					t.Errorf("after the rename, %s: %v", f.Path, err)
				}
			}
			// An edit that keeps a clean file clean.
			s.write(rb.file, s.read(rb.file)+"\n")
			if _, err := s.sup.AfterWrite(s.ctx, s.at(rb.file)); err != nil {
				t.Errorf("after an edit that changes no diagnostic: %v", err)
			}
		})
	}
}
