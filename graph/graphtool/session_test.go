package graphtool_test

import (
	"flag"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/sessions from an in-process replay")

// code_graph as transcripts replayed in process and over stdio.
func TestSessions(t *testing.T) {
	sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp"}},
		NewRun: builtin.NewRun,
		Update: *update,
		Scrub: []sessiontest.Scrub{
			{Pattern: `code graph of [^:]*: ready`, Replace: "code graph of ROOT: ready"},
			{Pattern: `built in [0-9.]+[µm]?s`, Replace: "built in TIME"},
			{Pattern: `"build_time":"[^"]*"`, Replace: `"build_time":"TIME"`},
			{Pattern: `"root":"[^"]*"`, Replace: `"root":"ROOT"`},
		},
	})
}
