package debugtool_test

import (
	"testing"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/builtin-tools/builtin-tools/internal/test/testenv"
)

// What changes from run to run: the time a session has left, build and
// start times, process ids, where in the runtime a pause landed.
var scrub = []sessiontest.Scrub{
	{Pattern: `[0-9hms.]+ left`, Replace: `… left`},
	{Pattern: `Built in [^,]+, started in [^.]+\.`, Replace: `Built in …, started in ….`},
	{Pattern: `[0-9]+(\.[0-9]+)?(ms|µs|s) old`, Replace: `… old`},
	{Pattern: `"(age_s|remaining_s|pid|build_ms|start_ms)":[0-9]+`, Replace: `"$1":…`},
	{Pattern: `pid [0-9]+,`, Replace: `pid …,`},
	// delve pauses on whichever thread it interrupted, somewhere in the
	// runtime.
	{Pattern: `paused on thread [0-9]+ in [^,]+,`, Replace: `paused on thread … in …,`},
	// and its frame ids count the frames of that thread's stack.
	{Pattern: `(?m)^frame_id [0-9]+@`, Replace: `frame_id …@`},
	// debugpy numbers references and frames from one counter, which its
	// own requests between stops move by a varying amount: after the
	// first stop a reference's number differs between runs (12 or 15).
	{Pattern: `\[ref [0-9]+@([2-9]|[1-9][0-9]+)\]`, Replace: `[ref …@$1]`},
}

// debug on real delve, as transcripts replayed in process and over stdio.
func TestSessions(t *testing.T) {
	testenv.LookPath(t, "dlv")
	builtin.Replay(t, "testdata/sessions", sessiontest.Options{
		Config: sessiontest.Config{Without: []string{"lsp", "structural"}, Conversation: "sessions"},
		Scrub:  scrub,
	})
}
