package files_test

import (
	"flag"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/sessiontest"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/sessions from an in-process replay")

// The file tools' output, as transcripts replayed in process and over
// stdio (testdata/sessions).
func TestSessions(t *testing.T) {
	sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
		Run:    builtintools.Options{Without: []string{"lsp", "structural"}},
		Args:   []string{"--without", "lsp,structural", "--ask", "none"},
		Update: *update,
	})
}
