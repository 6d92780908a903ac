// Package builtintools is the entry point a harness links: the families of
// tools this module ships and a constructor for a run with them opened. The
// pieces live in their own packages — registry (runs, peers, the call path),
// tiers, pathguard, and one package per family — and a harness that wants
// finer control can use them directly.
package builtintools

import (
	"time"

	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/dap/debugtool"
	"github.com/builtin-tools/builtin-tools/eval/evaltool"
	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/graph/graphtool"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/registry"
	"github.com/builtin-tools/builtin-tools/structural"
	"github.com/builtin-tools/builtin-tools/vibe/vibetool"
)

// Version is reported to MCP clients.
const Version = "0.1.0"

// Families lists the tool families this module ships, in the order they
// open. Adding a family is its package and one line here: its
// configuration, a type of its own, comes in Options.Settings under its
// name.
func Families() []registry.Extension {
	return []registry.Extension{
		files.Family,
		askuser.Family,
		lsptool.Family,
		structural.Family,
		graphtool.Family,
		debugtool.Family,
		evaltool.Family,
		vibetool.Family,
	}
}

// Catalog returns the descriptor of every tool this module ships.
func Catalog() []registry.Descriptor {
	var out []registry.Descriptor
	for _, f := range Families() {
		out = append(out, f.Descriptors()...)
	}
	return out
}

// Options configure NewRun.
type Options struct {
	// Root is the folder the run works in; paths are confined to it.
	Root string
	// ConversationID identifies the conversation (needed by debug).
	ConversationID string
	// Policy gates write and exec tools; nil allows them.
	Policy registry.Policy
	// Ask is the port questions and approval prompts go through; nil means
	// no human is attached, so ask_user is not registered and approvals
	// that ask are refused.
	Ask askuser.Port
	// AskTimeout bounds one question (default askuser.DefaultTimeout).
	AskTimeout time.Duration
	// TrustCheckout says the harness trusts the checkout: tools may run
	// programs inside it (node_modules/.bin, .venv/bin, venv/bin before PATH)
	// and checkers that execute its code (cargo check runs build.rs). Off
	// by default, so a read tool runs no code from the checkout; `lsp
	// status` says which programs were passed over.
	TrustCheckout bool
	// AllowGitWrites lets write tools change repositories' metadata (.git/,
	// a gitdir: file's folder, $GIT_DIR), which they otherwise refuse: git
	// runs commands set there, and changes there never show in git status.
	// Even then a change to what git executes (config, hooks/, info/) needs
	// exec approval (pathguard.Guard.AllowGitWrites).
	AllowGitWrites bool
	// OutputBudget bounds one result's text in characters (default
	// registry.DefaultOutputBudget).
	OutputBudget int
	// MaxFrameBytes bounds one message ServeStdio reads (default
	// registry.DefaultMaxFrameBytes).
	MaxFrameBytes int
	// Without names families not to open (see Families); an unknown name
	// is an error that lists the valid ones.
	Without []string
	// Families are the harness's own tool families, opened after the
	// module's; their tools pass the same call path (REG-8) and their
	// wrappers apply to every tool.
	Families []registry.Extension
	// Settings configure families, by family name, each with a type of
	// its own (a missing one means its defaults; a value of another type
	// is an error at NewRun):
	//
	//	"lsp"         lsp.Config: the language-server supervisor; the runs
	//	              of a process over one folder share servers
	//	              (lsp/pool's Process) unless it says Private: true
	//	"structural"  astgrep.Options: the tree-sitter engine behind ast_grep,
	//	              ast_edit, resolve and edit_symbol (GrammarDirs: folders
	//	              of grammar libraries, libtree-sitter-<id>.so)
	//	"code_graph"  graphtool.Config: the index's memory bound and extra
	//	              languages, how long a query waits for a build
	//	"debug"       dap.Config: a session's time limit, how long resumes wait
	//	"eval"        eval.Config: the interpreter kernels
	//	"vibe"        vibetool.Config: vibe mode on (the vibe_* workers), what
	//	              runs a worker of each tier per mode, where their state is
	//
	// and a harness's own families' settings likewise.
	Settings map[string]any
	// ClientProtocol is the MCP revision Run.Client negotiates (see
	// registry.Config).
	ClientProtocol string
}

// NewRun makes a run over opts.Root with the module's families opened as
// opts allow. Close the run to stop everything it started.
func NewRun(opts Options) (*registry.Run, error) {
	settings := map[string]any{
		askuser.Key.Name(): askuser.Config{Port: opts.Ask, Timeout: opts.AskTimeout},
	}
	for k, v := range opts.Settings {
		settings[k] = v
	}
	r, err := registry.NewRun(registry.Config{
		Root:           opts.Root,
		ConversationID: opts.ConversationID,
		Families:       append(Families(), opts.Families...),
		Without:        opts.Without,
		Trusted:        opts.TrustCheckout,
		Settings:       settings,
		ClientProtocol: opts.ClientProtocol,
		Policy:         opts.Policy,
		Approver:       askuser.Approver{},
		OutputBudget:   opts.OutputBudget,
		MaxFrameBytes:  opts.MaxFrameBytes,
		Name:           "builtin-tools",
		Version:        Version,
	})
	if err == nil && opts.AllowGitWrites {
		r.Guard().AllowGitWrites()
	}
	return r, err
}
