// Package builtintools is the entry point a harness links: the catalog of
// every tool this module ships and a constructor for a run with the usual
// resources attached. The pieces live in their own packages — registry (runs,
// peers, the call path), tiers, pathguard, files, askuser — and a harness
// that wants finer control can use them directly.
package builtintools

import (
	"fmt"
	"slices"
	"time"

	"github.com/builtin-tools/builtin-tools/askuser"
	"github.com/builtin-tools/builtin-tools/astgrep"
	"github.com/builtin-tools/builtin-tools/astgrep/astgreptool"
	"github.com/builtin-tools/builtin-tools/files"
	"github.com/builtin-tools/builtin-tools/lsp"
	"github.com/builtin-tools/builtin-tools/lsp/lsptool"
	"github.com/builtin-tools/builtin-tools/registry"
)

// Version is reported to MCP clients.
const Version = "0.1.0"

// Catalog returns the descriptor of every tool this module ships. Adding a
// tool is a descriptor in its package and a line here.
func Catalog() []registry.Descriptor {
	var out []registry.Descriptor
	out = append(out, files.Tools()...)
	out = append(out, askuser.Tool)
	out = append(out, lsptool.Tools()...)
	out = append(out, astgreptool.Tools()...)
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
	// MaxFrameBytes bounds one message ServeStdio reads (default
	// registry.DefaultMaxFrameBytes).
	MaxFrameBytes int
	// Without lists resources not to attach even when available.
	Without []registry.ResourceKind
	// LSP configures the language-server supervisor (zero value: defaults).
	LSP lsp.Config
	// Structural configures the tree-sitter engine behind ast_grep,
	// ast_edit and resolve; GrammarDirs are folders of grammar libraries
	// loaded at run time (libtree-sitter-<id>.so).
	Structural astgrep.Options
}

// NewRun makes a run over opts.Root with the module's catalog and attaches
// the resources opts allow. Close the run to stop everything it started.
func NewRun(opts Options) (*registry.Run, error) {
	run, err := registry.NewRun(registry.Config{
		Root:           opts.Root,
		ConversationID: opts.ConversationID,
		Tools:          Catalog(),
		Policy:         opts.Policy,
		Approver:       askuser.Approver{},
		MaxFrameBytes:  opts.MaxFrameBytes,
		Name:           "builtin-tools",
		Version:        Version,
	})
	if err != nil {
		return nil, err
	}
	if opts.Ask != nil && !slices.Contains(opts.Without, registry.AskPort) {
		if err := run.Attach(registry.AskPort, &askuser.Asker{Port: opts.Ask, Timeout: opts.AskTimeout}); err != nil {
			run.Close()
			return nil, fmt.Errorf("attaching the ask port: %w", err)
		}
	}
	if !slices.Contains(opts.Without, registry.LSP) {
		// Starts nothing: servers start on the first call that needs one.
		cfg := opts.LSP
		cfg.Trusted = cfg.Trusted || opts.TrustCheckout
		sup := lsp.NewSupervisor(run.Root(), cfg)
		if err := run.Attach(registry.LSP, sup); err != nil {
			sup.Close()
			run.Close()
			return nil, fmt.Errorf("attaching the language-server supervisor: %w", err)
		}
		run.Use(lsptool.DiagnosticsOnWrite(sup))
	}
	if !slices.Contains(opts.Without, registry.TreeSitter) {
		if err := run.Attach(registry.TreeSitter, astgreptool.New(opts.Structural)); err != nil {
			run.Close()
			return nil, fmt.Errorf("attaching the tree-sitter engine: %w", err)
		}
	}
	return run, nil
}
