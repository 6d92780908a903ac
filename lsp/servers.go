package lsp

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/protocol"
	"github.com/builtin-tools/builtin-tools/pathguard"
)

// ServerSpec describes one language server as data (LSP-6): adding a
// language is adding a row to [DefaultServers], not a code path.
type ServerSpec struct {
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
	// .venv/bin) — only when the checkout is trusted ([Config.Trusted]):
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

	// pull asks a server that has no textDocument/diagnostic for a
	// document's diagnostics in a request of its own; nil waits for what it
	// publishes.
	pull func(ctx context.Context, s *server, doc *openDoc) ([]protocol.Diagnostic, error)
	// confirm asks the server to publish doc's diagnostics for the
	// version it holds and returns once it has, for a first publish that
	// may be no answer (diagState.cleared); nil waits for the publishes
	// to settle.
	confirm func(ctx context.Context, s *server, doc *openDoc) error
}

// Launch is one server start as [ServerSpec.Prepare] may adjust it.
type Launch struct {
	// Bin is the resolved program; Args are its arguments (Command[1:]).
	Bin  string
	Args []string
	// Root is the folder holding the server's marker.
	Root string
	// Trusted is [Config.Trusted]: programs and code inside the checkout
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
	// [Config.Trusted]).
	Env []string
	// InitializationOptions starts as the spec's and is sent in
	// initialize.
	InitializationOptions any

	// warm is the start's name at the broker (warmKey); joinOnly: only
	// a server running under it is joined, none started.
	warm     string
	joinOnly bool
}

// owns reports whether the server handles path, and the language id.
func (s *ServerSpec) owns(path string) (string, bool) {
	ext := strings.ToLower(filepath.Ext(path))
	id, ok := s.Extensions[ext]
	return id, ok
}

// DefaultServers returns the built-in table. Callers may append rows or
// replace the table in [Config.Servers]. Where two rows own the same
// extension (pyright, pylsp), the first one whose binary resolves is used.
func DefaultServers() []ServerSpec {
	return []ServerSpec{
		{
			ID:          "gopls",
			Language:    "Go",
			Command:     []string{"gopls"},
			Probe:       []string{"version"},
			Install:     "go install golang.org/x/tools/gopls@latest (scripts/install-lsp.sh installs it into .tools/bin)",
			RootMarkers: []string{"go.work", "go.mod"},
			Extensions:  map[string]string{".go": "go"},
			Checker:     []string{"go", "vet", "./..."},
			Indexes:     true,
			// With no delay gopls diagnoses a change in one pass, type
			// errors and analyses together, and publishes it once per
			// version; with one (1s by default) it publishes type errors
			// first and the analyses' findings in a second publish later.
			PublishesOnce: true,
			confirm:       confirmGopls,
			Settings: map[string]any{
				"gopls": map[string]any{"diagnosticsDelay": "0s", "symbolScope": "workspace"},
			},
		},
		{
			ID:           "pyright",
			Language:     "Python",
			Command:      []string{"pyright-langserver", "--stdio"},
			Install:      "npm install pyright (scripts/install-lsp.sh installs it into .tools/node_modules)",
			RootMarkers:  []string{"pyrightconfig.json", "pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"},
			Extensions:   map[string]string{".py": "python", ".pyi": "python"},
			LocalBinDirs: []string{"node_modules/.bin", ".venv/bin", "venv/bin"},
			Checker:      []string{"pyright"},
			FixCommands:  map[string]string{"organize_imports": "pyright.organizeimports"},
			LoadedLog:    regexp.MustCompile(`^(Found \d+ source files?|No source files found\.)$`),
			FormatNote:   "pyright has no formatter; run black or ruff format from a shell",
			Settings: map[string]any{
				"python":          map[string]any{},
				"python.analysis": map[string]any{"diagnosticMode": "openFilesOnly"},
			},
		},
		{
			ID:           "pylsp",
			Language:     "Python",
			Command:      []string{"pylsp"},
			Probe:        []string{"--version"},
			Install:      "apt-get install python3-pylsp",
			RootMarkers:  []string{"pyproject.toml", "setup.py", "setup.cfg", "requirements.txt"},
			Extensions:   map[string]string{".py": "python"},
			LocalBinDirs: []string{".venv/bin", "venv/bin"},
			CheckerNote:  "pylsp has no project checker; install pyright for diagnostics \"*\"",
		},
		{
			ID:          "typescript-language-server",
			Language:    "TypeScript/JavaScript",
			Command:     []string{"typescript-language-server", "--stdio"},
			Probe:       []string{"--version"},
			Install:     "npm install typescript-language-server typescript (scripts/install-lsp.sh installs them into .tools/node_modules)",
			RootMarkers: []string{"tsconfig.json", "jsconfig.json", "package.json"},
			Extensions: map[string]string{
				".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
				".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript",
			},
			LocalBinDirs: []string{"node_modules/.bin"},
			Checker:      []string{"tsc", "--noEmit", "--pretty", "false"},
			Indexes:      true,
			Prepare:      prepareTypeScript,
			pull:         pullTSServer,
		},
		{
			ID:       "clangd",
			Language: "C/C++",
			Command:  []string{"clangd", "--background-index", "--log=error"},
			Probe:    []string{"--version"},
			Prepare:  prepareClangd,
			// clangd reads the copy Prepare makes, never the file itself.
			PrepareReads: clangdDatabases,
			Install:      "apt-get install clangd",
			RootMarkers:  []string{"compile_commands.json", "compile_flags.txt", "CMakeLists.txt", ".clangd"},
			Extensions: map[string]string{
				".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp",
				".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
			},
			CheckerNote: "C/C++ has no project checker here; run your build (cmake --build, make) or ask diagnostics for each file",
			Indexes:     true,
			// clangd publishes a version's diagnostics once, from the AST
			// built with that version's preamble (clang-tidy's included).
			PublishesOnce: true,
		},
		{
			ID:          "rust-analyzer",
			Language:    "Rust",
			Command:     []string{"rust-analyzer"},
			Probe:       []string{"--version"},
			Install:     "rustup component add rust-analyzer",
			RootMarkers: []string{"Cargo.toml"},
			Extensions:  map[string]string{".rs": "rust"},
			Checker:     []string{"cargo", "check", "--message-format=short"},
			CheckerRunsCode: "cargo check compiles and runs the crate's build scripts (build.rs) and procedural macros, " +
				"and writes target/ and Cargo.lock into the checkout",
			Indexes: true,
			Prepare: prepareRustAnalyzer,
			// A configuration written into the root after the start is
			// refused as one there before it would be.
			PrepareReads: cargoConfigNames,
		},
		{
			ID:              "dart",
			Language:        "Dart",
			Command:         []string{"dart", "language-server", "--protocol=lsp"},
			Probe:           []string{"--version"},
			Install:         "install the Dart SDK (https://dart.dev/get-dart)",
			RootMarkers:     []string{"pubspec.yaml"},
			Extensions:      map[string]string{".dart": "dart"},
			Checker:         []string{"dart", "analyze"},
			CheckerRunsCode: "dart analyze runs the analyzer plugins analysis_options.yaml names, which are packages of the project",
			Indexes:         true,
		},
	}
}

// Defaults used when a Config duration is zero.
const (
	DefaultIdleTimeout       = 10 * time.Minute
	DefaultStartTimeout      = 60 * time.Second
	DefaultRequestTimeout    = 30 * time.Second
	DefaultDiagnosticsWait   = 5 * time.Second
	DefaultDiagnosticsSettle = 150 * time.Millisecond
	DefaultCheckerTimeout    = 3 * time.Minute
	DefaultProbeTimeout      = 15 * time.Second
	DefaultApplyEditWait     = 3 * time.Second
)

// Config configures a [Supervisor]. Zero durations take the defaults above;
// a negative IdleTimeout turns reaping off.
type Config struct {
	// Servers is the server table; nil means DefaultServers().
	Servers []ServerSpec
	// IdleTimeout: a server unused this long is shut down.
	IdleTimeout time.Duration
	// StartTimeout bounds initialize plus the wait for initial indexing.
	StartTimeout time.Duration
	// RequestTimeout bounds one request to a server.
	RequestTimeout time.Duration
	// DiagnosticsWait bounds the wait for a document version's diagnostics.
	DiagnosticsWait time.Duration
	// DiagnosticsSettle is how long no new diagnostics for a document must
	// arrive, after the first ones for its version, before they count as
	// complete (servers publish in stages: syntax, types, analyses).
	DiagnosticsSettle time.Duration
	// CheckerTimeout bounds a project checker run (diagnostics "*").
	CheckerTimeout time.Duration
	// ProbeTimeout bounds one run of a server's Probe.
	ProbeTimeout time.Duration
	// ApplyEditWait bounds the wait, after a code action's command
	// returns, for the workspace/applyEdit it should have sent.
	ApplyEditWait time.Duration
	// Trusted marks the checkout as trusted by the harness: programs inside
	// it (LocalBinDirs such as node_modules/.bin and .venv/bin) may be run,
	// and so may checkers and server features that execute its code (cargo
	// check, rust-analyzer's build scripts, the checkout's own TypeScript).
	// Off by default: `lsp` is a read tool, and a read runs no code from
	// the checkout. PATH is the user's choice and is used either way, but
	// untrusted, the toolchain managers behind it (rustup, pyenv, asdf,
	// Volta, the go command) are kept from the checkout's per-folder
	// choices, and a program or a variable that leads inside the root is
	// refused (broker.CheckUntrusted): see package lsp/toolenv.
	Trusted bool
	// Observe, when set, is handed every notification a server sends
	// ($/progress, window/showMessage, window/logMessage ...). It runs on
	// the connection's read loop, so it must return at once. For a caller
	// that reports on the servers' work (bench/graphacc); nil otherwise.
	Observe func(Notification)
	// Stderr, when set, receives a copy of every server's standard error.
	Stderr io.Writer
	// Pool, when set, holds the servers, shared with the other
	// Supervisors that use it over the same folder with the same trust and
	// the same server settings (LSP-7); nil keeps them to this Supervisor.
	// A Supervisor with Observe or Stderr set keeps its own either way.
	Pool *Pool
	// Private keeps lsptool's runs from putting their servers in
	// [ProcessPool]: each run starts its own, as a harness that wants
	// runs isolated from each other asks.
	Private bool
	// MemoryBudget, in bytes, bounds the resident memory of all the
	// servers of the pool this Supervisor's servers go to (LSP-8): before
	// a start, idle servers are stopped, least recently used first, while
	// the others' memory is at or over it. 0 leaves the pool's budget as
	// it is (by default a quarter of the machine's memory); a negative one
	// turns it off. The pool has one budget: the last Supervisor to set it
	// wins. Through a broker, the broker's budget governs its servers (set
	// when it started: BrokerCommand's --memory-budget).
	MemoryBudget int64
	// Broker is the folder of the user's language-server broker (LSP-9,
	// [broker.Dir]): servers are asked of it, and shared with the other
	// processes of the user; "" (a library's default) starts them in this
	// process, shared by its runs only. When the broker cannot be reached
	// or started, a server starts here. `serve` sets it unless
	// --lsp-broker=false.
	Broker string
	// BrokerCommand starts a broker when none answers in Broker: an
	// executable's lsp-broker mode, e.g. {"/path/to/builtin-tools",
	// "lsp-broker", "--dir", dir, "--memory-budget", "4GiB"}. A library
	// cannot start one of itself (the broker outlives the process that
	// starts it), so a harness that wants its servers shared with other
	// processes names the installed command here; nil starts none (a
	// broker another process started is still used).
	BrokerCommand []string
}

// Notification is one notification a server sent, as [Config.Observe]
// sees it.
type Notification struct {
	Server string // the spec's ID
	Root   string // the server's root folder, absolute
	Method string
	Params json.RawMessage
}

func (c Config) withDefaults() Config {
	if c.Servers == nil {
		c.Servers = DefaultServers()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&c.IdleTimeout, DefaultIdleTimeout)
	def(&c.StartTimeout, DefaultStartTimeout)
	def(&c.RequestTimeout, DefaultRequestTimeout)
	def(&c.DiagnosticsWait, DefaultDiagnosticsWait)
	def(&c.DiagnosticsSettle, DefaultDiagnosticsSettle)
	def(&c.CheckerTimeout, DefaultCheckerTimeout)
	def(&c.ProbeTimeout, DefaultProbeTimeout)
	def(&c.ApplyEditWait, DefaultApplyEditWait)
	return c
}
