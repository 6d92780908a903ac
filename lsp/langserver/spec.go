// Package langserver is package lsp's table of language servers as data
// (LSP-6): one [Spec] row per server (its program, root markers, file
// extensions, checker, settings, how it reports loading and publishes
// diagnostics), the built-in rows ([Table]), and what a row knows beyond
// data: its Prepare, which adjusts a start ([Launch]) so a read runs no
// code from the checkout (clangd's index, the TypeScript
// typescript-language-server loads, rust-analyzer's build scripts), and
// its hooks that ask a running server for a document's diagnostics in its
// own terms (tsserver's commands, gopls.diagnose_files); and its probe,
// which says once per binary whether the row's program runs at all
// (Spec.RunProbe). It starts no server: lsp starts them from these rows.
package langserver

import (
	"context"
	"errors"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// Spec describes one language server as data (LSP-6): adding a
// language is adding a row to [Table], not a code path.
type Spec struct {
	// ID names the server in status output and errors ("gopls").
	ID string
	// FixCommands are server commands lsp_fix runs for a fix kind the
	// server offers as a command rather than a code action (pyright's
	// organize imports), called with the file's URI as their argument.
	FixCommands map[string]string
	// FormatNote says what to use where the server does not format.
	FormatNote string
	// Language is the human name ("Go", "Python").
	Language string
	// Command is the program and its arguments; Command[0] is resolved on
	// PATH (and in LocalBinDirs) at call time.
	Command []string
	// Install says how to get Command[0] when it is missing.
	Install string
	// Probe, when set, are arguments that make Command[0] print its
	// version and exit; a binary whose probe fails counts as not installed,
	// and status quotes the line of its output that says why.
	Probe []string
	// RootMarkers are file or folder names whose nearest containing folder
	// is the server's root (LSP-2). A file is owned only when one of them
	// exists between the file and the supervisor's root.
	RootMarkers []string
	// RootAtTop makes the supervisor's root the server's root for every
	// file the server owns, without looking for RootMarkers: for a tree
	// known to be one project that holds no project file (a language's
	// standard library, as bench/graphacc measures).
	RootAtTop bool
	// Extensions are the file name endings the server owns (".go"), mapped
	// to the LSP language id sent in didOpen.
	Extensions map[string]string
	// LocalBinDirs are folders, relative to the server's root, searched
	// before PATH for Command[0] and Checker[0] (node_modules/.bin,
	// .venv/bin) — only when the checkout is trusted (lsp's Config.Trusted):
	// a program inside the checkout is the checkout's code.
	LocalBinDirs []string
	// Checker is the project checker `diagnostics "*"` runs in the root, or
	// nil when the language has none; CheckerNote then says what to do.
	Checker     []string
	CheckerNote string
	// CheckerRunsCode, when set, says how the checker runs code from the
	// checkout (cargo check runs build scripts); such a checker runs only
	// in a trusted checkout, and the result quotes this reason.
	CheckerRunsCode string
	// Prepare, when set, adjusts a start to the checkout (see [Launch]):
	// clangd keeps its index outside the root, typescript-language-server
	// loads its own TypeScript rather than the checkout's.
	Prepare func(l *Launch) error
	// PrepareReads names the checkout files Prepare reads, relative to
	// the server's root. Their state is part of a start's name: a server
	// prepared from an older copy is neither joined nor kept (see
	// launcher.preparedFrom).
	PrepareReads []string
	// Indexes says the server reports its initial indexing as $/progress;
	// queries wait (bounded by StartTimeout) for that work to end.
	Indexes bool
	// LoadedLog matches the window/logMessage a server sends once it has
	// loaded its workspace, for one that reports its loading no other way
	// (pyright answers references from the files it has found so far);
	// queries wait for it as for Indexes, and an answer given before it
	// came says it may be incomplete.
	LoadedLog *regexp.Regexp
	// PublishesOnce says the server sends each document version's
	// diagnostics in one versioned publishDiagnostics: the first one for the
	// written version is complete, so it is not waited on for
	// DiagnosticsSettle (issue 31 §4). Servers that publish in stages
	// (syntax, then types, then analyses) leave it false.
	PublishesOnce bool
	// InitializationOptions is sent in initialize.
	InitializationOptions any
	// Settings answers workspace/configuration, by section ("" is the whole
	// object). Sections not listed get null.
	Settings map[string]any

	// Pull asks a server that has no textDocument/diagnostic for a
	// document's diagnostics in a request of its own; nil waits for what it
	// publishes, and so does an error wrapping ErrRefused.
	Pull func(ctx context.Context, call Caller, doc Doc) ([]protocol.Diagnostic, error)
	// Confirm asks the server to publish doc's diagnostics for the
	// version it holds and returns once it has, for a first publish that
	// may be no answer (an empty set); nil waits for the publishes to
	// settle.
	Confirm func(ctx context.Context, call Caller, doc Doc) error
}

// Caller sends one request to a running server and decodes its result;
// a row's hooks ask the server through it.
type Caller func(ctx context.Context, method string, params, result any) error

// Doc is the version of a document a running server holds, as a row's
// hooks see it, and the position encoding the server negotiated.
type Doc struct {
	URI, Text, Encoding string
}

// ErrRefused is wrapped by a Pull the server refused (an older version):
// its diagnostics are then awaited as published.
var ErrRefused = errors.New("the server refused the request")

// Launch is one server start as [Spec.Prepare] may adjust it.
type Launch struct {
	// Bin is the resolved program; Args are its arguments (Command[1:]).
	Bin  string
	Args []string
	// Root is the folder holding the server's marker.
	Root string
	// Trusted is lsp's Config.Trusted: programs and code inside the checkout
	// may run.
	Trusted bool
	// StateDir is a private folder (0700, outside the root) that lives as
	// long as the server, for its caches and indexes.
	StateDir string
	// Guard is the run's path guard: every file of the checkout Prepare
	// reads goes through it (a regular file inside the root, opened without
	// blocking, at most a size limit).
	Guard *pathguard.Guard
	// Env is the server's environment, nil for this process's own. For an
	// untrusted checkout it pins the toolchain managers' choices (see
	// lsp's Config.Trusted).
	Env []string
	// InitializationOptions starts as the spec's and is sent in
	// initialize.
	InitializationOptions any
}

// MaxFileBytes bounds what is read into memory and sent to a server, and
// what a Prepare reads of the checkout.
const MaxFileBytes = 16 << 20

// Owns reports whether the server handles path, and the language id.
func (s *Spec) Owns(path string) (string, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	id, ok := s.Extensions[ext]
	return id, ok
}
