package structural_test

import (
	"flag"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/sessions from an in-process replay")

// ast_grep, ast_edit and resolve as transcripts replayed in process and
// over stdio (testdata/sessions).
func TestSessions(t *testing.T) {
	sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp"}},
		NewRun: builtin.NewRun,
		Update: *update,
	})
}
