package structural_test

import (
	"flag"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/sessiontest"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/sessions from an in-process replay")

// ast_grep, ast_edit and resolve as transcripts replayed in process and
// over stdio (testdata/sessions).
func TestSessions(t *testing.T) {
	sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
		Run:    builtintools.Options{Without: []string{"lsp"}},
		Args:   []string{"--without", "lsp", "--ask", "none", "--grammars", ""},
		Update: *update,
	})
}
