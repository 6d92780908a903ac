package structural_test

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
)

// ast_grep, ast_edit and resolve as transcripts replayed in process and
// over stdio (testdata/sessions).
func TestSessions(t *testing.T) {
	builtin.Replay(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp"}},
	})
}
