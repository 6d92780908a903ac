package graphtool_test

import (
	"flag"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/sessiontest"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/sessions from an in-process replay")

// code_graph as transcripts replayed in process and over stdio.
func TestSessions(t *testing.T) {
	sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
		Run:    builtintools.Options{Without: []string{"lsp"}},
		Args:   []string{"--without", "lsp", "--ask", "none", "--grammars", ""},
		Update: *update,
		Scrub: map[string]string{
			`code graph of [^:]*: ready`: "code graph of ROOT: ready",
			`built in [0-9.]+[µm]?s`:     "built in TIME",
			`"build_time":"[^"]*"`:       `"build_time":"TIME"`,
			`"root":"[^"]*"`:             `"root":"ROOT"`,
		},
	})
}
