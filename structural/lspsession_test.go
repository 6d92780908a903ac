package structural_test

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// edit_symbol with real language servers (testdata/lspsessions): the
// diagnostics after its write and the code graph refreshed from it.
func TestSessionsWithServers(t *testing.T) {
	testenv.LookPath(t, "gopls")
	builtin.Replay(t, "testdata/lspsessions", sessiontest.Options{
		CheckArguments: true,
		// The ids staged edits are given.
		Terms: []string{"edit_1", "edit_2", "edit_3", "edit_4", "edit_5", "old_string", "new_string"},
	})
}
