// Package builtin makes the in-process run of a session transcript the way
// the command makes its own: every family of the module, less those the
// session's Config leaves out. It is apart from sessiontest so that the
// harness itself knows no family.
package builtin

import (
	builtintools "github.com/builtin-tools/builtin-tools"
	"github.com/builtin-tools/builtin-tools/internal/test/sessiontest"
	"github.com/builtin-tools/builtin-tools/registry"
)

// NewRun is a sessiontest.Options.NewRun for the module's own families.
func NewRun(root string, c sessiontest.Config) (*registry.Run, error) {
	return builtintools.NewRun(builtintools.Options{Root: root, Without: c.Without, ConversationID: c.Conversation})
}
