package evaltool_test

import (
	"path/filepath"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// Issue 19 §1 guard: per language, code after every statement kind that
// could swallow the rest of a cell (an import, a top-level await, a class,
// a function, a failing statement, a later syntax error), so the
// transcript shows what ran; replayed in process and over stdio.
func TestSessions(t *testing.T) {
	testenv.LookPath(t, "python3")
	testenv.LookPath(t, "node")
	// typescript.txtar's cells need the compiler the install step puts in .tools.
	testenv.File(t, "typescript", filepath.Join("node_modules", "typescript", "lib", "typescript.js"))
	builtin.Replay(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp", "structural"}},
		Scrub:  []sessiontest.Scrub{{Pattern: `· \d+ ms\]`, Replace: "· N ms]"}, {Pattern: `"duration_ms":\d+`, Replace: `"duration_ms":N`}},
	})
}
