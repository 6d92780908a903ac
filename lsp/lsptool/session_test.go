//go:build cgo

package lsptool_test

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// lsp and lsp_rename on real gopls, pyright, typescript-language-server and clangd,
// as transcripts replayed in process and over stdio (testdata/sessions).
// Built with cgo: the replay goes through builtintools, which brings the
// tree-sitter tools.
func TestSessions(t *testing.T) {
	for _, program := range []string{"gopls", "pyright-langserver", "pyright", "typescript-language-server", "clangd"} {
		testenv.LookPath(t, program)
	}
	builtin.Replay(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"structural"}},
		// eval's and the checkers' timings.
		Scrub: []sessiontest.Scrub{
			{Pattern: `(exit \d+), [0-9][0-9.]*(?:[µmn]?s|m[0-9.]+s)\)`, Replace: "$1, N)"},
			{Pattern: `"duration_ms":\d+`, Replace: `"duration_ms":N`},
			{Pattern: `· \d+ ms\]`, Replace: "· N ms]"},
			{Pattern: `(tool calls: .*?\w) \d+ ms`, Replace: "$1 N ms"},
		},
	})
}
