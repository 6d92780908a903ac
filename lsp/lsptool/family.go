// Package lsptool puts the lsp package on a run's tool surface: the `lsp`
// tool (read), `lsp_rename` and `lsp_fix` (write — separate tools because
// the tier decides who sees them), and the wrapper that reports new diagnostics after
// every write (WRT-1..3). The language-server work itself is package lsp;
// the text an agent reads of its answers is package lsp/answertext.
package lsptool

import (
	"sync"

	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/diag"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
	"github.com/builtin-tools/builtin-tools/registry"
)

// Servers is the run's language-server resource: the supervisor, the
// ledger of diagnostics the run has shown, and the lsp_fix plans approved
// and not yet written.
type Servers struct {
	Sup    *lsp.Supervisor
	ledger *diag.Ledger
	// run is the run the resource belongs to, for the services it uses
	// outside a call (a preview's users); nil when made by NewServers.
	run *registry.Run

	mu    sync.Mutex
	plans map[*registry.Call]planned
	late  []late // verdicts that came after their write's result
	// said holds the reasons for not checking a file that a result of
	// this run gave in full; later results give them in a few words.
	said map[string]bool
	// previews are staged changes' diagnostics previews, by edit id, for
	// resolve (preview.go); keptOrder is their order, oldest first.
	previews  map[string]kept
	keptOrder []string
}

// NewServers makes the resource over root, with a path guard of its own;
// it starts nothing.
func NewServers(root string, cfg lsp.Config) *Servers {
	return &Servers{Sup: lsp.NewSupervisor(root, cfg), ledger: diag.NewLedger()}
}

// Close lets go of the run's servers: each no other run uses stops.
func (s *Servers) Close() error { return s.Sup.Close() }

// Key is the language-server resource's key.
var Key = registry.NewKey[*Servers]("lsp")

// Family is lsp, lsp_rename and diagnostics after every write. Its setting
// is an lsp.Config; the run's trust of the checkout is added to it, and
// its servers go to pool.Process unless the setting names a pool or
// says Private.
var Family = registry.Family[*Servers]{
	Key: Key,
	Doc: "lsp, lsp_rename, lsp_fix: language servers (gopls, pyright, typescript-language-server, clangd, …) and diagnostics after every write",
	Open: func(env *registry.Env) (*Servers, error) {
		cfg, err := registry.Setting[lsp.Config](env, Key.Name())
		if err != nil {
			return nil, err
		}
		cfg.Trusted = cfg.Trusted || env.Trusted
		// Runs of this process over the same folder share their servers
		// (LSP-7) unless the harness keeps them apart.
		if cfg.Pool == nil && !cfg.Private {
			cfg.Pool = pool.Process()
		}
		if env.Guard == nil {
			s := NewServers(env.Root, cfg)
			s.run = env.Run
			return s, nil
		}
		// The run's guard: every file the servers' starts read, and every
		// path they send back, is confined by the run's one os.Root.
		return &Servers{Sup: lsp.OpenSupervisor(env.Guard, cfg), ledger: diag.NewLedger(), run: env.Run}, nil
	},
	Tools:    []registry.Descriptor{LSPTool, RenameTool, FixTool},
	Wrappers: []registry.Wrapper{DiagnosticsOnWrite, LateDiagnostics},
	Requires: []registry.Requirement{staging, dependents},
	// write, edit and apply_patch with check run their contents past the
	// servers.
	Provides: []registry.Provision[*Servers]{registry.Provide(func(s *Servers) lsp.Checker { return s })},
}
