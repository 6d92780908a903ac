package graphtool_test

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
)

// code_graph as transcripts replayed in process and over stdio.
func TestSessions(t *testing.T) {
	builtin.Replay(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp"}},
		Scrub: []sessiontest.Scrub{
			{Pattern: `code graph of [^:]*: ready`, Replace: "code graph of ROOT: ready"},
			{Pattern: `built in [0-9.]+[µm]?s`, Replace: "built in TIME"},
			{Pattern: `"build_time":"[^"]*"`, Replace: `"build_time":"TIME"`},
			{Pattern: `"root":"[^"]*"`, Replace: `"root":"ROOT"`},
		},
	})
}
