package askuser_test

import (
	"testing"
	"time"

	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest/builtin"
	"github.com/mark3labs/mcp-go/mcp"
)

// sessionAskTimeout is short, so the session of a human who answers late
// costs little; an answer given at once comes back well within it.
const sessionAskTimeout = 2 * time.Second

// ask_user through elicitation, as transcripts replayed in process and
// over stdio, with the human's answers scripted in each session ("<"
// lines): on the protocol era whose server asks with elicitation/create,
// and on the multi round-trip era whose client retries with the answer.
// Both give the same transcript.
func TestSessions(t *testing.T) {
	for _, version := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		t.Run(version, func(t *testing.T) {
			sessiontest.Run(t, "testdata/sessions", sessiontest.Options{
				Config: sessiontest.Config{Without: []string{"lsp", "structural", "code_graph"}, Ask: "elicit",
					AskTimeout: sessionAskTimeout, Protocol: version},
				NewRun: builtin.NewRun,
				// Issue 19 §3: every argument a hint or an error names exists.
				CheckArguments: true,
				Update:         *builtin.Update && version == mcp.ProtocolVersion20251125,
				// mcp-go's stdio client wraps its handler's error once more.
				Scrub: []sessiontest.Scrub{{Pattern: `elicitation request failed: `, Replace: ``}},
			})
		})
	}
}
