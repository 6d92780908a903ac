package lsp

import (
	"encoding/json"
	"io"
	"time"

	"github.com/builtin-tools/builtin-tools/lsp/langserver"
	"github.com/builtin-tools/builtin-tools/lsp/pool"
)

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
	// Servers is the server table; nil means langserver.Table().
	Servers []langserver.Spec
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
	// refused (untrusted.Check): see package lsp/toolenv.
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
	Pool *pool.Pool
	// Private keeps lsptool's runs from putting their servers in
	// [pool.Process]: each run starts its own, as a harness that wants
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
		c.Servers = langserver.Table()
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

// viewBound bounds a wait for the server's view: as long as a preview
// may hold it (its syncs, the waits for the file as on disk and for the
// proposed version, the restore).
func (c *Config) viewBound() time.Duration {
	return c.StartTimeout + 2*c.RequestTimeout + 2*c.DiagnosticsWait
}
