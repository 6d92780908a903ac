package lsp

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/lsp/protocol"
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
			must(s.sup.Hover(s.ctx, s.at(rb.file), protocol.Place{Line: rb.line, Symbol: rb.from}))(t) // the file is open
			res := must(s.sup.Rename(s.ctx, s.at(rb.file), protocol.Place{Line: rb.line, Symbol: rb.from}, rb.to, false))(t)
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

// typescript-language-server's diagnostics are pulled from tsserver
// (pullTSServer): positions come in UTF-16 units (the n is at 28 in them)
// and are given in characters (27), categories become severities, and the
// unused-name suggestions are hints, as the server publishes them.
func TestTypeScriptPulledDiagnostics(t *testing.T) {
	t.Parallel()
	s := newSession(t, "ts", "typescript-language-server", Config{})
	s.write("src/extra.ts", "const rocket = \"🚀\"; const n: number = rocket;\nexport {};\n")
	out := must(s.sup.Diagnostics(s.ctx, s.at("src/extra.ts")))(t)
	got := diagKeys(s.root, out.Diagnostics)
	expectContains(t, "diagnostics", got,
		"src/extra.ts:1:27: error: Type 'string' is not assignable to type 'number'.",
		"src/extra.ts:1:27: hint: 'n' is declared but its value is never read.")
	if out.Incomplete {
		t.Errorf("pulled diagnostics marked incomplete")
	}
}
