//go:build cgo

package lsptool_test

import (
	"flag"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/sessions from an in-process replay")

// lsp and lsp_rename on real gopls, as transcripts replayed in process and
// over stdio (testdata/sessions). Built with cgo: the replay goes through
// builtintools, which brings the tree-sitter tools.
func TestSessions(t *testing.T) {
	testenv.LookPath(t, "gopls")
	sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"structural"}},
		NewRun: builtin.NewRun,
		Update: *update,
		// eval's timings.
		Scrub: []sessiontest.Scrub{
			{Pattern: `· \d+ ms\]`, Replace: "· N ms]"},
			{Pattern: `(tool calls: .*?\w) \d+ ms`, Replace: "$1 N ms"},
		},
	})
}
