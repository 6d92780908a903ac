// Package builtin makes the in-process run of a session transcript the way
// the command makes its own: every family of the module, less those the
// session's Config leaves out. It is apart from sessiontest so that the
// harness itself knows no family.
package builtin

import (
	"flag"
	"fmt"
	"testing"

	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
)

// Update is -update, for every package whose transcripts replay here: the
// in-process replay rewrites their outputs, for review as a diff.
var Update = flag.Bool("update", false, "rewrite the outputs of the transcripts from an in-process replay")

// Replay replays every *.txtar under dir (sessiontest.Run) against runs made
// by NewRun; opts.NewRun and opts.Update are set here, Update from -update.
func Replay(t *testing.T, dir string, opts sessiontest.Options) {
	t.Helper()
	opts.NewRun, opts.Update = NewRun, *Update
	// The waits of the diagnostics after a write (lsptool's verdicts).
	opts.Scrub = append(opts.Scrub,
		sessiontest.Scrub{Pattern: `"waited_ms":\d+`, Replace: `"waited_ms":N`},
		sessiontest.Scrub{Pattern: `"seconds_ago":\d+`, Replace: `"seconds_ago":N`},
		sessiontest.Scrub{Pattern: `\b\d+ s ago\b`, Replace: `N s ago`})
	sessiontest.Run(t, dir, opts)
}

// NewRun is a sessiontest.Options.NewRun for the module's own families:
// the options the command builds from c.Flags().
func NewRun(root string, c sessiontest.Config) (*registry.Run, error) {
	opts := builtintools.Options{Root: root, Without: c.Without, ConversationID: c.Conversation,
		AskTimeout: c.AskTimeout, ClientProtocol: c.Protocol}
	switch c.Ask {
	case "elicit":
		opts.Ask = askuser.Elicitation{}
	case "":
	default:
		return nil, fmt.Errorf("sessiontest: Ask %q: a session asks through elicitation (\"elicit\") or not at all (\"\")", c.Ask)
	}
	if len(c.Workers) > 0 {
		opts.Settings = map[string]any{vibetool.Key.Name(): vibetool.Config{On: true, Commands: c.Workers, StateDir: c.VibeState}}
	}
	return builtintools.NewRun(opts)
}
