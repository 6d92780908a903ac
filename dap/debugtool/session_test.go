package debugtool_test

import (
	"flag"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the outputs of testdata/sessions from an in-process replay")

// What changes from run to run: the time a session has left, build and
// start times, process ids.
var scrub = map[string]string{
	`[0-9hms.]+ left`:                                    `… left`,
	`Built in [^,]+, started in [^.]+\.`:                 `Built in …, started in ….`,
	`[0-9]+(\.[0-9]+)?(ms|µs|s) old`:                     `… old`,
	`"(age_s|remaining_s|pid|build_ms|start_ms)":[0-9]+`: `"$1":…`,
}

// debug on real delve, as transcripts replayed in process and over stdio.
func TestSessions(t *testing.T) {
	testenv.LookPath(t, "dlv")
	sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
		Run:    builtintools.Options{Without: []string{"lsp", "structural"}, ConversationID: "sessions"},
		Args:   []string{"--without", "lsp,structural", "--ask", "none"},
		Update: *update,
		Scrub:  scrub,
	})
}
