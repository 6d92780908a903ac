package files_test

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
)

// The file tools' output, as transcripts replayed in process and over
// stdio (testdata/sessions).
func TestSessions(t *testing.T) {
	builtin.Replay(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp", "structural"}},
	})
}
