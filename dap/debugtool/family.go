// Package debugtool puts package dap on a run's tool surface: the `debug`
// tool (exec), one operation per call, with one session per conversation. The
// debugging itself is package dap; this package confines paths and turns
// dap's results into text for an agent.
package debugtool

import (
	"github.com/builtin-tools/builtin-tools/dap"
	"github.com/builtin-tools/builtin-tools/registry"
)

// Key is the debug supervisor's resource key.
var Key = registry.NewKey[*dap.Supervisor]("debug")

// Family is the debug tool. Its setting is a dap.Config. It needs a
// conversation id (DBG-1): a run without one has no debug tool.
var Family = registry.Family[*dap.Supervisor]{
	Key: Key,
	Doc: "debug: a debugger over DAP (delve, debugpy, lldb-dap), one bounded session per conversation",
	Open: func(env *registry.Env) (*dap.Supervisor, error) {
		if env.ConversationID == "" {
			return nil, registry.ErrSkip
		}
		cfg, err := registry.Setting[dap.Config](env, Key.Name())
		if err != nil {
			return nil, err
		}
		return dap.NewSupervisor(env.Guard, cfg), nil
	},
	Tools: []registry.Descriptor{DebugTool},
}
