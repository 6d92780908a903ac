package vibetool_test

import (
	"path/filepath"
	"regexp"
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
)

// workerScrubs scrub what changes from run to run in a worker's
// description: how long it ran, when it was last active, timestamps, and
// where the state folder is.
var workerScrubs = []sessiontest.Scrub{
	{Pattern: `(\] (queued|running|succeeded|failed|timed_out|killed|lost)( \(over budget\))?), [0-9][0-9.hmsµ]*`, Replace: "$1, …"},
	{Pattern: `last activity [^,\n]+ ago`, Replace: "last activity … ago"},
	{Pattern: `"(started|ended|last_activity)":"[^"]*"`, Replace: `"$1":"…"`},
	{Pattern: `[^\s"(]*/[0-9a-f]{24}/`, Replace: "$$STATE/"},
}

// The vibe tools with real shell workers (../testdata/worker.sh), as
// transcripts replayed in process and over stdio (`serve --vibe
// --worker-command ...`), with what changes from run to run scrubbed.
func TestSessions(t *testing.T) {
	worker, err := filepath.Abs("../testdata/worker.sh")
	if err != nil {
		t.Fatal(err)
	}
	builtin.Replay(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp", "structural", "code_graph"},
			Workers: map[string]string{"fast": worker, "good": worker + " --good"}},
		// Issue 19 §3: every argument a hint or an error names exists.
		CheckArguments: true,
		Terms:          []string{"timed_out"},
		Scrub:          append([]sessiontest.Scrub{{Pattern: regexp.QuoteMeta(worker), Replace: "worker.sh"}}, workerScrubs...),
	})
}

// Workers run by claude's and codex's CLIs, from their recorded streams
// (../testdata/agents: scripts that replay them).
func TestAgentSessions(t *testing.T) {
	dir, err := filepath.Abs("../testdata/agents")
	if err != nil {
		t.Fatal(err)
	}
	builtin.Replay(t, "testdata/agents", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp", "structural", "code_graph"},
			Workers: map[string]string{"fast": dir + "/fake-claude.sh -p --output-format stream-json --verbose", "good": dir + "/fake-codex.sh exec --json"}},
		CheckArguments: true,
		// What the agent said and did is quoted, not a hint.
		Terms: []string{"error_max_turns", "file_path", "old_string", "new_string"},
		Scrub: append([]sessiontest.Scrub{{Pattern: regexp.QuoteMeta(dir) + "/", Replace: ""}}, workerScrubs...),
	})
}
