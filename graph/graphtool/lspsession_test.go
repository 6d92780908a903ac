package graphtool_test

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// code_graph's confirm with the run's real language servers
// (testdata/lspsessions): gopls marks candidates, a language without a
// server says so.
func TestLSPSessions(t *testing.T) {
	testenv.LookPath(t, "gopls")
	builtin.Replay(t, "testdata/lspsessions", sessiontest.Options{
		Scrub: []sessiontest.Scrub{
			{Pattern: `"elapsed_ms":\d+`, Replace: `"elapsed_ms":N`},
		},
	})
}
